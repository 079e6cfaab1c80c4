#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/sql_error.h"
#include "executor/database.h"
#include "parser/copy_statement.h"
#include "parser/cursor_statement.h"
#include "planner/session_values.h"
#include "server/query_session.h"

namespace stave::server {

/// A client's session: its settings (SET/SHOW/RESET, reported to the client when they
/// change), its transaction state (BEGIN/COMMIT/ROLLBACK and the failed state after an
/// error), and the dispatch of every other statement to the database. Each statement runs
/// and commits on its own; a transaction block only tracks status, as clients expect.
class Session : public QuerySession, public planner::SessionValues {
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
  void AttachCancellation(std::shared_ptr<Cancellation> cancellation) override;
  void AttachCopyInput(CopyInput* input) override { copy_input_ = input; }
  std::optional<executor::QueryResult> DescribeCursor(std::string_view name) const override;
  void AttachBackendPid(int32_t process_id) override { backend_pid_ = process_id; }
  // What statements read of the session (planner/session_values.h): session_values.cc.
  std::string UserName() const override;
  int32_t BackendPid() const override { return backend_pid_; }
  std::optional<std::string> FindSetting(const std::string& name) const override;
  std::vector<Setting> Settings() const override;
  std::string SetConfig(const std::string& name, const std::optional<std::string>& value,
                        bool is_local, int position) override;

 private:
  /// What `statement` would return, without running it (see executor::Database::Describe);
  /// infers the types of its untyped parameters.
  executor::QueryResult Describe(const parser::Statement& statement);
  /// Runs one statement of a query string or an Execute: inside the implicit transaction of
  /// the statements run with it, which the caller ends (on error it is rolled back here).
  executor::QueryResult RunInImplicitTransaction(const parser::Statement& statement);
  executor::QueryResult RunStatement(const parser::Statement& statement);
  /// COPY ... TO STDOUT (session_copy.cc): runs its query, whose rows the connection sends
  /// as CopyData.
  executor::QueryResult RunCopy(const parser::CopyStatement& copy);
  /// COPY ... FROM STDIN (session_copy.cc): reads the client's data through copy_input_ into
  /// the open transaction block, or into a transaction of its own that it commits.
  executor::QueryResult RunCopyFrom(const parser::CopyStatement& copy);
  /// DECLARE, FETCH, MOVE, CLOSE (session_cursors.cc).
  executor::QueryResult RunCursorStatement(const parser::CursorStatement& statement);
  /// What Describe reports for a cursor statement: a FETCH returns its cursor's columns.
  executor::QueryResult DescribeCursorStatement(const parser::CursorStatement& statement) const;
  /// At COMMIT (`committed`) or ROLLBACK: closes the cursors without HOLD, and on rollback
  /// also the ones declared in the transaction.
  void CloseCursorsAtTransactionEnd(bool committed);
  /// `error`, found in a query that starts at `query_position` of the statement around it,
  /// with its position in that statement.
  static SqlError AtQueryPosition(const SqlError& error, int query_position);
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
  int32_t backend_pid_ = 0;                      // The connection's BackendKeyData process id.
  std::map<std::string, std::string> settings_;  // By lower-case name.
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
  /// Stops the running statement on a CancelRequest or at its statement_timeout.
  std::shared_ptr<Cancellation> cancellation_ = std::make_shared<Cancellation>();
  /// The connection's side of COPY ... FROM STDIN; null: the statement is refused.
  CopyInput* copy_input_ = nullptr;
  /// An open cursor: its query's rows, run at DECLARE, and how far FETCH has come.
  struct Cursor {
    executor::QueryResult rows;
    /// 0: before the first row; 1 … n: on that row; n + 1: after the last.
    int64_t position = 0;
    bool scroll = true;  // Not NO SCROLL: may move backwards.
    bool hold = false;
    bool declared_in_block = false;  // In the transaction block still open.
  };
  std::map<std::string, Cursor> cursors_;  // By name.
  /// Moves `cursor` as FETCH or MOVE `statement` says and returns the rows it passes
  /// (1-based, in the order FETCH returns them). Throws 55000 for a backward move of a NO
  /// SCROLL cursor.
  static std::vector<int64_t> MoveCursor(const parser::CursorStatement& statement, Cursor* cursor);
};

}  // namespace stave::server
