#pragma once

#include "executor/chunk.h"
#include "planner/bound_expression.h"

namespace stave::executor {

/// Evaluates a bound expression over every row of `chunk`, giving a column of
/// `chunk.size()` values of the expression's type. Arithmetic and comparisons run as
/// typed loops over whole columns; AND, OR and CASE evaluate their later operands only on
/// the rows that still need them, so `x <> 0 AND 10 / x > 1` does not divide by zero.
/// Throws SqlError for runtime errors (division by zero 22012, overflow 22003, bad casts).
Column Evaluate(const planner::BoundExpr& expr, const Chunk& chunk);

/// Evaluates a boolean expression and returns 1 for rows where it is true (not false,
/// not NULL).
std::vector<uint8_t> EvaluatePredicate(const planner::BoundExpr& expr, const Chunk& chunk);

/// PostgreSQL LIKE: `%` any run, `_` one character, `\` escapes. Characters are bytes of
/// UTF-8, which matches code points for patterns whose `_` stands for ASCII.
bool LikeMatch(std::string_view text, std::string_view pattern);

/// Three-way comparison of row `i` of `a` with row `j` of `b`, columns of one type, neither
/// value NULL: -1, 0 or 1, NaN above every other double (as PostgreSQL orders them).
int CompareRows(const Column& a, size_t i, const Column& b, size_t j);

}  // namespace stave::executor
