#include "planner/aggregate_call_binder.h"

#include <fmt/format.h>

#include "common/sql_error.h"

namespace stave::planner {

AggregateCall BindAggregateCall(const parser::FunctionCallExpr& call, const BindScope* scope) {
  std::string name = call.name.back();
  AggregateCall aggregate;
  if (call.star) {
    if (name != "count") {
      throw SqlError(sqlstate::kSyntaxError, fmt::format("{}(*) is not a function", name),
                     call.position);
    }
    aggregate.kind = AggregateKind::kCountStar;
    aggregate.result_type = TypeId::kInt64;
    return aggregate;
  }
  if (call.args.size() != 1) {
    throw SqlError(
        sqlstate::kUndefinedFunction,
        fmt::format("function {} with {} arguments does not exist", name, call.args.size()),
        call.position);
  }
  ExpressionBinder input_binder(scope);
  const parser::Expr& arg_expr = *call.args[0];
  if (ContainsAggregate(arg_expr)) {
    throw SqlError(sqlstate::kGroupingError, "aggregate function calls cannot be nested",
                   arg_expr.position);
  }
  BoundExprPtr arg = input_binder.Bind(arg_expr);
  if (arg->type.id == TypeId::kUnknown) {
    arg = ExpressionBinder::Coerce(arg, TypeId::kVarchar, arg_expr.position);
  }
  aggregate.arg = arg;
  // min and max of distinct values are those of all values: DISTINCT changes nothing.
  aggregate.distinct = call.distinct && name != "min" && name != "max";
  auto require_numeric = [&] {
    if (!arg->type.IsNumeric()) {
      throw SqlError(sqlstate::kUndefinedFunction,
                     fmt::format("function {}({}) does not exist", name, arg->type.Name()),
                     call.position)
          .WithHint("No function matches the given name and argument types.");
    }
  };
  if (name == "count") {
    aggregate.kind = AggregateKind::kCount;
    aggregate.result_type = TypeId::kInt64;
  } else if (name == "sum") {
    require_numeric();
    aggregate.kind = AggregateKind::kSum;
    // Integers sum to bigint (PostgreSQL gives numeric for a bigint input; Stave has no
    // numeric type yet and reports an overflow instead of losing digits).
    aggregate.result_type = arg->type.IsInteger() ? DataType(TypeId::kInt64) : arg->type;
  } else if (name == "avg") {
    require_numeric();
    aggregate.kind = AggregateKind::kAvg;
    aggregate.result_type = TypeId::kFloat64;
  } else {
    aggregate.kind = name == "min" ? AggregateKind::kMin : AggregateKind::kMax;
    aggregate.result_type = arg->type;
  }
  return aggregate;
}

}  // namespace stave::planner
