#pragma once

#include <vector>

#include "executor/chunk.h"
#include "planner/bound_expression.h"

namespace stave::executor {

/// The arithmetic operators (+ - * /) over temporal operands, in the combinations the binder
/// accepts (planner/temporal_binding.cc): date ± integer, date - date, date + time,
/// timestamp ± interval, timestamp - timestamp, time ± interval, time - time,
/// interval ± interval, interval * / number. `result` is the expression's type. Throws 22008
/// on overflow, 22012 on an interval divided by zero.
Column TemporalArithmetic(planner::ScalarFunction function, DataType result, const Column& left,
                          const Column& right);

/// Unary minus over an interval column.
Column NegateIntervals(Column column);

/// Evaluates date_trunc, date_part, extract, to_timestamp and make_* over their evaluated
/// arguments. Returns false if `expr` is not one of them.
bool EvaluateTemporalFunction(const planner::BoundExpr& expr, std::vector<Column>* args,
                              size_t rows, Column* out);

}  // namespace stave::executor
