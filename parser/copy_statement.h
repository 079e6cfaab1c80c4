#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/copy_format.h"

namespace stave::parser {

/// `COPY (query) TO STDOUT [options]`, `COPY name [(columns)] TO STDOUT [options]` or
/// `COPY name [(columns)] FROM STDIN [options]`.
struct CopyStatement {
  /// FROM STDIN: the client sends rows for the table `table`.
  bool from_stdin = false;
  /// The table's name as written (schema-qualified or not), for the forms that name one.
  std::vector<std::string> table;
  int table_position = 0;
  /// The column list after the name (empty: all columns), and where each is written.
  std::vector<std::string> columns;
  std::vector<int> column_positions;
  /// TO STDOUT: the query whose rows are copied: the parenthesized query as written, or
  /// `SELECT columns FROM name` for the second form.
  std::string query;
  /// Where `query` starts in the COPY text (1-based), to place errors found in it.
  int query_position = 1;
  CopyFormat format;
};

/// Recognizes a COPY statement: nullopt when `sql` does not start with the keyword COPY
/// (after white space and comments). COPY is read here rather than by the grammar, as its
/// options (both PostgreSQL's `WITH (FORMAT csv, HEADER)` and the older `CSV HEADER` that
/// psql's \copy sends) are a small language of their own; it must be the only statement of
/// its query string. Throws SqlError: 42601 for a syntax error, 0A000 for COPY to or from a file
/// or a program, and BINARY, 22023 for a bad option value, as PostgreSQL words them.
std::optional<CopyStatement> ParseCopy(std::string_view sql);

}  // namespace stave::parser
