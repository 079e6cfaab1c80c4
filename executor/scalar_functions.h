#pragma once

#include <vector>

#include "executor/chunk.h"
#include "planner/bound_expression.h"

namespace stave::executor {

/// Evaluates the conditional, string and math functions (nullif, greatest, least, concat,
/// substr, trim, replace, split_part, ..., round, sqrt, power, ...) over their evaluated
/// arguments, with PostgreSQL's results and errors (SQLSTATE 22011, 2201E, 2201F, 22003,
/// 2201B, 54000). Returns false if `expr` is not one of them.
bool EvaluateScalarFunction(const planner::BoundExpr& expr, std::vector<Column>* args, size_t rows,
                            Column* out);

}  // namespace stave::executor
