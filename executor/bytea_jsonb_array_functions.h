#pragma once

#include <vector>

#include "executor/chunk.h"
#include "planner/bound_expression.h"

namespace stave::executor {

/// Evaluates the bytea, jsonb and array functions and operators (encode, decode, md5, `->`,
/// `->>`, `#>`, `@>`, jsonb_typeof, ARRAY[...], subscripts, array_length, `||` of arrays,
/// `= ANY (array)`, ...) over their evaluated arguments, with PostgreSQL's results and errors
/// (SQLSTATE 22023, 22P02, 2202E). Returns false if `expr` is not one of them.
bool EvaluateByteaJsonbArrayFunction(const planner::BoundExpr& expr, std::vector<Column>* args,
                                     size_t rows, Column* out);

}  // namespace stave::executor
