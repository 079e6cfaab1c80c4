#pragma once

#include <string_view>
#include <vector>

#include "parser/ast.h"

namespace stave::parser {

/// Parses a query string that may hold several statements separated by ';' (empty
/// statements and comments are skipped: a comment-only string gives an empty vector).
/// Throws SqlError with SQLSTATE 42601 and the 1-based character position of the offending
/// token ("syntax error at or near \"x\"", or "syntax error at end of input").
/// Thread-safe: the ANTLR 4.9 runtime is not (shared prediction cache), so calls are
/// serialized internally.
std::vector<StatementPtr> Parse(std::string_view sql);

}  // namespace stave::parser
