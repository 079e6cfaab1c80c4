#include <fmt/format.h>

#include "common/sql_error.h"
#include "parser/parser.h"
#include "server/session.h"
#include "server/statement_timeout.h"

namespace stave::server {

executor::QueryResult Session::RunCopy(const parser::CopyStatement& copy) {
  if (copy.from_stdin) return RunCopyFrom(copy);
  executor::QueryResult result;
  try {
    std::vector<parser::StatementPtr> statements = parser::Parse(copy.query);
    if (statements.size() != 1) {
      throw SqlError(sqlstate::kSyntaxError, "COPY (query) TO takes a single query", 1);
    }
    if (statements.front()->kind != parser::StatementKind::kSelect) {
      throw SqlError(sqlstate::kFeatureNotSupported, "COPY (query) TO takes a SELECT query", 1);
    }
    result = RunInImplicitTransaction(*statements.front());
  } catch (const SqlError& error) {
    throw AtQueryPosition(error, copy.query_position);
  }
  result.returns_rows = false;
  result.copy_out = copy.format;
  result.command_tag = fmt::format("COPY {}", result.rows.size());
  return result;
}

executor::QueryResult Session::RunCopyFrom(const parser::CopyStatement& copy) {
  if (transaction_ == TransactionState::kFailed) {
    throw SqlError(
        sqlstate::kInFailedTransaction,
        "current transaction is aborted, commands ignored until end of transaction block");
  }
  if (copy_input_ == nullptr) {
    throw SqlError(sqlstate::kFeatureNotSupported, "COPY FROM STDIN needs a client connection");
  }
  // Inside a block the rows join its writes; alone, COPY is a transaction of its own: all
  // of its rows or none.
  executor::Transaction own;
  executor::Transaction* target = writes_ ? writes_.get() : &own;
  std::unique_ptr<executor::CopyFrom> copy_from = database_->StartCopyFrom(copy, target);
  std::optional<Cancellation::Clock::time_point> deadline;
  std::chrono::milliseconds timeout = ParseStatementTimeout(settings_["statement_timeout"], 0);
  if (timeout.count() > 0) deadline = Cancellation::Clock::now() + timeout;
  Cancellation::Statement running(cancellation_.get(), deadline);
  copy_input_->Begin(copy_from->columns());
  uint64_t rows = 0;
  try {
    while (std::optional<std::string> data = copy_input_->Next()) {
      copy_from->Feed(*data);
      ThrowIfCancelled(cancellation_.get());
    }
    rows = copy_from->Finish();
  } catch (SqlError& error) {
    if (error.context().empty()) error.WithContext(copy_from->Context());
    throw;
  }
  if (target == &own) database_->Commit(&own);
  executor::QueryResult result;
  result.command_tag = fmt::format("COPY {}", rows);
  return result;
}

}  // namespace stave::server
