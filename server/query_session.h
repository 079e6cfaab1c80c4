#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/cancellation.h"
#include "common/data_type.h"
#include "common/value.h"
#include "executor/query_result.h"

namespace stave::server {

/// A statement of the extended query protocol: parsed and described once by Parse, then run
/// by every Execute of a portal bound to it. Sessions subclass it to keep what they parsed.
struct PreparedStatement {
  virtual ~PreparedStatement() = default;

  /// The types of $1 ... $n: as the client declared them, else as the statement's context
  /// decides (`col = $1` takes col's type), else text. What ParameterDescription reports.
  std::vector<DataType> parameter_types;
  /// The OIDs ParameterDescription reports, one per parameter; empty: each type's own. A
  /// parameter nothing decides is text (25), as PostgreSQL describes it, though its values
  /// are Stave's one string type (whose OID is varchar's, 1043).
  std::vector<int32_t> parameter_oids;
  /// What the statement returns (returns_rows and columns, no rows): what Describe reports.
  executor::QueryResult description;
  /// The query string held no statement: Execute answers EmptyQueryResponse.
  bool empty = false;
};

/// The data of COPY ... FROM STDIN, which the client sends after the statement: the
/// connection's side of the copy-in exchange.
class CopyInput {
 public:
  virtual ~CopyInput() = default;
  /// Asks the client for its data (CopyInResponse: text format, `columns` columns).
  virtual void Begin(size_t columns) = 0;
  /// The next piece of the data (a CopyData message's body, which need not end at a line);
  /// nullopt at the end (CopyDone). Throws SqlError 57014 when the client gives up
  /// (CopyFail), and what the connection throws for a protocol violation.
  virtual std::optional<std::string> Next() = 0;
};

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

  /// Parses and describes the one statement of a Parse message. `parameter_types` holds the
  /// types the client declared (nullopt: to be inferred); the statement may use more
  /// parameters than declared. Throws SqlError: 42601 for a syntax error or more than one
  /// statement, or what binding the statement finds (unknown table, type mismatch, ...).
  virtual std::shared_ptr<const PreparedStatement> Prepare(
      std::string_view sql, const std::vector<std::optional<DataType>>& parameter_types) = 0;

  /// Runs a prepared statement with `parameters` (one per parameter type, each already of
  /// that type; NULL allowed). Statements run until the next Sync form one implicit
  /// transaction, as in PostgreSQL (see Sync). Throws SqlError.
  /// REQUIRES: `statement` came from this session's Prepare and is not empty.
  virtual executor::QueryResult ExecutePrepared(const PreparedStatement& statement,
                                                const std::vector<Value>& parameters) = 0;

  /// The extended protocol's Sync: commits the implicit transaction of the statements run
  /// since the last Sync, if any. Throws SqlError if the commit fails (nothing was written).
  virtual void Sync() = 0;

  /// Settings whose value changed since the last call, to report as ParameterStatus before
  /// ReadyForQuery (e.g. after `SET application_name = ...`).
  virtual std::vector<std::pair<std::string, std::string>> TakeChangedParameters() = 0;

  /// The ReadyForQuery status byte: 'I' idle, 'T' in a transaction block, 'E' in a failed
  /// transaction block.
  virtual char TransactionStatus() const = 0;

  /// How long the connection may wait for the client's next command while no transaction
  /// is open before it closes the connection (the idle_session_timeout setting); zero waits
  /// forever.
  virtual std::chrono::milliseconds IdleSessionTimeout() const {
    return std::chrono::milliseconds(0);
  }
  /// Tells the session that a statement failed, so a transaction block becomes failed.
  virtual void OnError() = 0;

  /// The columns of the SQL cursor `name` (DECLARE), or nullopt if there is none: cursors
  /// are portals in PostgreSQL, so clients (psycopg's named cursors) Describe them as such.
  virtual std::optional<executor::QueryResult> DescribeCursor(std::string_view name) const {
    static_cast<void>(name);
    return std::nullopt;
  }

  /// Hands the session the connection's side of COPY ... FROM STDIN; a session without
  /// one refuses that statement. Called once, before the first statement; `input` outlives
  /// the session.
  virtual void AttachCopyInput(CopyInput* input) { static_cast<void>(input); }

  /// Hands the session the object through which a CancelRequest from another connection
  /// stops its running statement (see Cancellation); a session without one cancels only on
  /// its own statement_timeout. Called once, before the first statement.
  virtual void AttachCancellation(std::shared_ptr<Cancellation> cancellation) {
    static_cast<void>(cancellation);
  }

  /// Hands the session its connection's BackendKeyData process id (pg_backend_pid()).
  /// Called once, before the first statement.
  virtual void AttachBackendPid(int32_t process_id) { static_cast<void>(process_id); }
};

/// Creates the session of a new connection from its StartupMessage parameters (user,
/// database, application_name, options, ...).
using QuerySessionFactory = std::function<std::unique_ptr<QuerySession>(
    const std::vector<std::pair<std::string, std::string>>& startup_parameters)>;

}  // namespace stave::server
