#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stave::parser {

/// DECLARE, FETCH, MOVE and CLOSE of a cursor, as psql's FETCH_COUNT, Tableau and
/// psycopg's server-side cursors send them.
struct CursorStatement {
  enum class Kind { kDeclare, kFetch, kMove, kClose } kind;
  /// The cursor's name (case-folded unless quoted); empty for CLOSE ALL.
  std::string name;
  int name_position = 0;
  /// DECLARE: the query as written, where it starts (1-based), WITH HOLD, and SCROLL or
  /// NO SCROLL (nullopt: neither was said).
  std::string query;
  int query_position = 1;
  bool hold = false;
  std::optional<bool> scroll;
  /// FETCH and MOVE: where to, as PostgreSQL's FetchDirection. kForward and kBackward take
  /// `count` rows (nullopt: ALL; never negative, FETCH -2 is BACKWARD 2); kAbsolute and
  /// kRelative go to one row (`count` may be negative). NEXT is FORWARD 1, PRIOR BACKWARD
  /// 1, FIRST ABSOLUTE 1, LAST ABSOLUTE -1.
  enum class Direction {
    kForward,
    kBackward,
    kAbsolute,
    kRelative
  } direction = Direction::kForward;
  std::optional<int64_t> count = 1;
};

/// Recognizes a cursor statement: nullopt when `sql` does not start with DECLARE, FETCH,
/// MOVE or CLOSE (after white space and comments). Read here rather than by the grammar, as
/// COPY is; it must be the only statement of its query string. Throws SqlError: 42601 for a
/// syntax error; 0A000 for BINARY cursors.
std::optional<CursorStatement> ParseCursorStatement(std::string_view sql);

}  // namespace stave::parser
