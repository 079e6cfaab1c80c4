#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "executor/query_result.h"

namespace stave::server {

/// What one client connection talks to, independent of the wire protocol: runs SQL and keeps
/// the session's settings and transaction state. One instance per connection; not
/// thread-safe (a connection runs one statement at a time).
class QuerySession {
 public:
  virtual ~QuerySession() = default;

  /// The (name, value) pairs reported as ParameterStatus right after authentication.
  virtual std::vector<std::pair<std::string, std::string>> StartupParameters() = 0;

  /// Runs every statement of a simple-protocol Query message in order, calling `on_result`
  /// after each statement. A string with no statements (empty, only comments or ';')
  /// calls nothing and returns false, so the caller sends EmptyQueryResponse; otherwise it
  /// returns true. Throws SqlError for the first failing statement; results of the
  /// statements before it were already delivered.
  virtual bool RunSimpleQuery(
      std::string_view sql, const std::function<void(const executor::QueryResult&)>& on_result) = 0;

  /// Settings whose value changed since the last call, to report as ParameterStatus before
  /// ReadyForQuery (e.g. after `SET application_name = ...`).
  virtual std::vector<std::pair<std::string, std::string>> TakeChangedParameters() = 0;

  /// The ReadyForQuery status byte: 'I' idle, 'T' in a transaction block, 'E' in a failed
  /// transaction block.
  virtual char TransactionStatus() const = 0;

  /// Tells the session that a statement failed, so a transaction block becomes failed.
  virtual void OnError() = 0;
};

/// Creates the session of a new connection from its StartupMessage parameters (user,
/// database, application_name, options, ...).
using QuerySessionFactory = std::function<std::unique_ptr<QuerySession>(
    const std::vector<std::pair<std::string, std::string>>& startup_parameters)>;

}  // namespace stave::server
