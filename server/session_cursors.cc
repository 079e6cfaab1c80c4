// Cursors of SQL (DECLARE, FETCH, MOVE, CLOSE): a query's rows, handed out a part at a time.

#include <fmt/format.h>

#include <algorithm>
#include <limits>

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
    // Without SCROLL or NO SCROLL PostgreSQL scrolls when the plan can run backwards, which
    // is always so for rows held whole, as a cursor's are here.
    cursor.scroll = statement.scroll.value_or(true);
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
  std::vector<int64_t> picked = MoveCursor(statement, &cursor);
  if (statement.kind == Kind::kFetch) {
    result.returns_rows = true;
    result.columns = cursor.rows.columns;
    result.rows.reserve(picked.size());
    for (int64_t row : picked) result.rows.push_back(cursor.rows.rows[row - 1]);
  }
  result.command_tag =
      fmt::format("{} {}", statement.kind == Kind::kFetch ? "FETCH" : "MOVE", picked.size());
  return result;
}

// PostgreSQL's DoPortalRunFetch over a cursor whose rows are all at hand: the position runs
// from 0 (before the first row) through 1 … n (on a row) to n + 1 (after the last).
std::vector<int64_t> Session::MoveCursor(const parser::CursorStatement& statement, Cursor* cursor) {
  using Direction = parser::CursorStatement::Direction;
  const int64_t n = static_cast<int64_t>(cursor->rows.rows.size());
  const bool fetch = statement.kind == parser::CursorStatement::Kind::kFetch;
  int64_t position = cursor->position;
  auto refuse_backward = [&] {
    if (!cursor->scroll) {
      throw SqlError("55000", "cursor can only scan forward")
          .WithHint("Declare it with SCROLL option to enable backward scan.");
    }
  };
  // Moves by `delta` rows, stopping just outside the rows.
  auto moved = [&](int64_t delta) {
    if (delta > 0) return delta > n + 1 - position ? n + 1 : position + delta;
    return -delta > position ? 0 : position + delta;
  };
  std::vector<int64_t> picked;  // The rows the statement passes, 1-based, in its order.
  auto pick_current = [&] {
    if (position >= 1 && position <= n) picked.push_back(position);
  };
  int64_t count = statement.count.value_or(std::numeric_limits<int64_t>::max());
  if (count == 0 && statement.direction != Direction::kAbsolute) {
    // FETCH 0 fetches the current row again by stepping back to it (MOVE 0 only counts).
    if (fetch && position >= 1 && position <= n) refuse_backward();
    pick_current();
    return picked;
  }
  switch (statement.direction) {
    case Direction::kForward: {
      int64_t target = moved(count);
      for (int64_t row = position + 1; row <= std::min(target, n); ++row) picked.push_back(row);
      position = target;
      break;
    }
    case Direction::kBackward: {
      refuse_backward();
      int64_t target = moved(-count);
      for (int64_t row = position - 1; row >= std::max<int64_t>(target, 1); --row) {
        picked.push_back(row);
      }
      position = target;
      break;
    }
    case Direction::kAbsolute:
      if (count > 0) {
        if (count <= position) refuse_backward();
        position = std::min(count, n + 1);
      } else if (count < 0) {
        refuse_backward();
        position = -count > n ? 0 : n + 1 + count;
      } else {
        if (position != 0) refuse_backward();
        position = 0;
      }
      pick_current();
      break;
    case Direction::kRelative:
      if (count < 0) refuse_backward();
      position = moved(count);
      pick_current();
      break;
  }
  cursor->position = position;
  return picked;
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
