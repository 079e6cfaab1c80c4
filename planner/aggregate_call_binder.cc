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
  // string_agg(value, delimiter): the delimiter must be a constant, bound here.
  if (name == "string_agg" && call.args.size() == 2) {
    BindScope no_columns;
    BoundExprPtr delimiter = ExpressionBinder(&no_columns).Bind(*call.args[1]);
    if (delimiter->kind != BoundExpr::Kind::kConstant ||
        !(delimiter->type.IsString() || delimiter->type.id == TypeId::kUnknown)) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "string_agg's delimiter must be a constant text", call.args[1]->position);
    }
    aggregate.delimiter = delimiter->constant.is_null() ? "" : delimiter->constant.string_value();
  } else if (name == "string_agg") {
    throw SqlError(
        sqlstate::kUndefinedFunction,
        fmt::format("function string_agg with {} arguments does not exist", call.args.size()),
        call.position);
  } else if (call.args.size() != 1) {
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
    // PostgreSQL's types: smallint and integer sum to bigint, bigint and numeric to
    // numeric (the sum is kept in 128 bits, so it never overflows on the way), floats
    // to their own type.
    if (arg->type.id == TypeId::kInt16 || arg->type.id == TypeId::kInt32) {
      aggregate.result_type = TypeId::kInt64;
    } else if (arg->type.id == TypeId::kInt64 || arg->type.IsDecimal()) {
      aggregate.result_type = TypeId::kNumeric;
    } else {
      aggregate.result_type = arg->type;
    }
  } else if (name == "avg") {
    require_numeric();
    aggregate.kind = AggregateKind::kAvg;
    // numeric for integer and numeric inputs, double precision for floats.
    aggregate.result_type =
        arg->type.IsFloat() ? DataType(TypeId::kFloat64) : DataType(TypeId::kNumeric);
  } else if (name == "string_agg") {
    aggregate.kind = AggregateKind::kStringAgg;
    aggregate.arg = ExpressionBinder::Coerce(arg, TypeId::kVarchar, arg_expr.position);
    if (!aggregate.arg->type.IsString()) {
      throw SqlError(sqlstate::kUndefinedFunction,
                     fmt::format("function string_agg({}, text) does not exist", arg->type.Name()),
                     call.position)
          .WithHint("No function matches the given name and argument types.");
    }
    aggregate.result_type = TypeId::kVarchar;
  } else {
    aggregate.kind = name == "min" ? AggregateKind::kMin : AggregateKind::kMax;
    aggregate.result_type = arg->type;
  }
  return aggregate;
}

}  // namespace stave::planner
