// Cursors of SQL (DECLARE, FETCH, MOVE, CLOSE): a query's rows, handed out a part at a time.

#include <fmt/format.h>

#include <algorithm>

#include "common/sql_error.h"
#include "parser/parser.h"
#include "server/session.h"

namespace stave::server {

SqlError Session::AtQueryPosition(const SqlError& error, int query_position) {
  if (error.position() <= 0) return error;
  SqlError moved(error.sqlstate(), error.what(),
                 std::max(1, error.position() + query_position - 1));
  moved.WithDetail(error.detail()).WithHint(error.hint());
  return moved;
}

executor::QueryResult Session::RunCursorStatement(const parser::CursorStatement& statement) {
  using Kind = parser::CursorStatement::Kind;
  if (transaction_ == TransactionState::kFailed) {
    throw SqlError(
        sqlstate::kInFailedTransaction,
        "current transaction is aborted, commands ignored until end of transaction block");
  }
  executor::QueryResult result;
  if (statement.kind == Kind::kDeclare) {
    // PostgreSQL's rule: a cursor without HOLD ends with its transaction, so outside a
    // block it would end before the first FETCH.
    if (!statement.hold && transaction_ != TransactionState::kInBlock) {
      throw SqlError("25P01", "DECLARE CURSOR can only be used in transaction blocks");
    }
    if (cursors_.contains(statement.name)) {
      throw SqlError("42P03", fmt::format("cursor \"{}\" already exists", statement.name),
                     statement.name_position);
    }
    Cursor cursor;
    try {
      std::vector<parser::StatementPtr> statements = parser::Parse(statement.query);
      if (statements.size() != 1 || statements.front()->kind != parser::StatementKind::kSelect) {
        throw SqlError(sqlstate::kSyntaxError, "DECLARE CURSOR takes a single SELECT query", 1);
      }
      cursor.rows = RunInImplicitTransaction(*statements.front());
    } catch (const SqlError& error) {
      throw AtQueryPosition(error, statement.query_position);
    }
    cursor.hold = statement.hold;
    cursor.declared_in_block = transaction_ == TransactionState::kInBlock;
    cursors_.emplace(statement.name, std::move(cursor));
    result.command_tag = "DECLARE CURSOR";
    return result;
  }
  if (statement.kind == Kind::kClose && statement.name.empty()) {
    cursors_.clear();
    result.command_tag = "CLOSE CURSOR";
    return result;
  }
  auto it = cursors_.find(statement.name);
  if (it == cursors_.end()) {
    throw SqlError("34000", fmt::format("cursor \"{}\" does not exist", statement.name),
                   statement.name_position);
  }
  if (statement.kind == Kind::kClose) {
    cursors_.erase(it);
    result.command_tag = "CLOSE CURSOR";
    return result;
  }
  Cursor& cursor = it->second;
  size_t available = cursor.rows.rows.size() - cursor.next_row;
  size_t count = statement.count ? std::min<size_t>(available, *statement.count) : available;
  auto begin = cursor.rows.rows.begin() + static_cast<std::ptrdiff_t>(cursor.next_row);
  if (statement.kind == Kind::kFetch) {
    result.returns_rows = true;
    result.columns = cursor.rows.columns;
    result.rows.assign(begin, begin + static_cast<std::ptrdiff_t>(count));
  }
  cursor.next_row += count;
  result.command_tag =
      fmt::format("{} {}", statement.kind == Kind::kFetch ? "FETCH" : "MOVE", count);
  return result;
}

executor::QueryResult Session::DescribeCursorStatement(
    const parser::CursorStatement& statement) const {
  executor::QueryResult description;
  if (statement.kind != parser::CursorStatement::Kind::kFetch) return description;
  auto it = cursors_.find(statement.name);
  if (it == cursors_.end()) {
    throw SqlError("34000", fmt::format("cursor \"{}\" does not exist", statement.name),
                   statement.name_position);
  }
  description.returns_rows = true;
  description.columns = it->second.rows.columns;
  return description;
}

std::optional<executor::QueryResult> Session::DescribeCursor(std::string_view name) const {
  auto it = cursors_.find(std::string(name));
  if (it == cursors_.end()) return std::nullopt;
  executor::QueryResult description;
  description.returns_rows = true;
  description.columns = it->second.rows.columns;
  return description;
}

void Session::CloseCursorsAtTransactionEnd(bool committed) {
  std::erase_if(cursors_, [committed](const auto& entry) {
    const Cursor& cursor = entry.second;
    // WITH HOLD outlives COMMIT; a rollback also takes the ones its transaction declared.
    return !cursor.hold || (!committed && cursor.declared_in_block);
  });
  for (auto& [name, cursor] : cursors_) cursor.declared_in_block = false;
}

}  // namespace stave::server
