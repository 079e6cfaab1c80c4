#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "executor/database.h"
#include "server/query_session.h"

namespace stave::server {

/// A client's session: its settings (SET/SHOW/RESET, reported to the client when they
/// change), its transaction state (BEGIN/COMMIT/ROLLBACK and the failed state after an
/// error), and the dispatch of every other statement to the database. Each statement runs
/// and commits on its own; a transaction block only tracks status, as clients expect.
class Session : public QuerySession {
 public:
  Session(executor::Database* database,
          const std::vector<std::pair<std::string, std::string>>& startup_parameters);

  std::vector<std::pair<std::string, std::string>> StartupParameters() override;
  bool RunSimpleQuery(std::string_view sql,
                      const std::function<void(const executor::QueryResult&)>& on_result) override;
  std::vector<std::pair<std::string, std::string>> TakeChangedParameters() override;
  char TransactionStatus() const override;
  std::chrono::milliseconds IdleSessionTimeout() const override { return idle_session_timeout_; }
  void OnError() override;
  // The extended query protocol: session_prepared.cc.
  std::shared_ptr<const PreparedStatement> Prepare(
      std::string_view sql, const std::vector<std::optional<DataType>>& parameter_types) override;
  executor::QueryResult ExecutePrepared(const PreparedStatement& statement,
                                        const std::vector<Value>& parameters) override;
  void Sync() override;

 private:
  /// What `statement` would return, without running it (see executor::Database::Describe);
  /// infers the types of its untyped parameters.
  executor::QueryResult Describe(const parser::Statement& statement);
  /// Runs one statement of a query string or an Execute: inside the implicit transaction of
  /// the statements run with it, which the caller ends (on error it is rolled back here).
  executor::QueryResult RunInImplicitTransaction(const parser::Statement& statement);
  executor::QueryResult RunStatement(const parser::Statement& statement);
  executor::QueryResult Set(const parser::SetVariableStatement& set);
  executor::QueryResult Show(const parser::ShowVariableStatement& show);
  executor::QueryResult Reset(const parser::ResetVariableStatement& reset);
  executor::QueryResult Transaction(const parser::TransactionStatement& statement);
  /// Ends the implicit transaction of a multi-statement query string, committing its writes.
  void CommitImplicit();
  /// Validates and stores a setting; throws 42704 for unknown names, 22023 for bad values.
  /// `system`: ALTER SYSTEM, which also keeps a server-wide setting for later starts.
  void Assign(const std::string& name, const std::string& value, int position, bool system = false);

  executor::Database* database_;
  std::map<std::string, std::string> settings_;        // By lower-case name.
  std::chrono::milliseconds idle_session_timeout_{0};  // The idle_session_timeout setting.
  std::vector<std::string> changed_;                   // Lower-case names to report.
  /// kImplicit: the statements of one multi-statement query string, which PostgreSQL runs as
  /// one transaction (all or nothing) unless they open a block of their own with BEGIN.
  enum class TransactionState {
    kIdle,
    kImplicit,
    kInBlock,
    kFailed
  } transaction_ = TransactionState::kIdle;
  /// The open transaction's table writes; null outside a transaction block.
  std::unique_ptr<executor::Transaction> writes_;
};

}  // namespace stave::server
