#include "planner/aggregate_call_binder.h"

#include <fmt/format.h>

#include "common/sql_error.h"
#include "planner/window_binder.h"

namespace stave::planner {
namespace {

// array_agg(x [ORDER BY y]) and string_agg(x, delimiter [ORDER BY y]): they keep every value
// with its count (AggregateExtras::distinct_values), ordered by the value's key encoding, or
// by the ordering value's key encoding followed by the value's (AggregateCall::order_key).
AggregateCall BindOrderedAggregateCall(const parser::FunctionCallExpr& call,
                                       const BindScope* scope) {
  std::string name = call.name.back();
  bool string_agg = name == "string_agg";
  if (call.args.size() != (string_agg ? 2u : 1u)) {
    throw SqlError(
        sqlstate::kUndefinedFunction,
        fmt::format("function {} with {} arguments does not exist", name, call.args.size()),
        call.position);
  }
  ExpressionBinder input_binder(scope);
  for (const auto& arg : call.args) {
    if (ContainsAggregate(*arg)) {
      throw SqlError(sqlstate::kGroupingError, "aggregate function calls cannot be nested",
                     arg->position);
    }
  }
  AggregateCall aggregate;
  aggregate.kind = string_agg ? AggregateKind::kStringAgg : AggregateKind::kArrayAgg;
  aggregate.distinct = call.distinct;
  aggregate.keeps_values = true;
  BoundExprPtr arg = input_binder.Bind(*call.args[0]);
  if (arg->type.id == TypeId::kUnknown) {
    arg = ExpressionBinder::Coerce(arg, TypeId::kVarchar, call.args[0]->position);
  }
  if (string_agg) {
    BoundExprPtr separator = input_binder.Bind(*call.args[1]);
    if (separator->type.id == TypeId::kUnknown) {
      separator = ExpressionBinder::Coerce(separator, TypeId::kVarchar, call.args[1]->position);
    }
    if (arg->type.id != TypeId::kVarchar || separator->type.id != TypeId::kVarchar) {
      throw SqlError(sqlstate::kUndefinedFunction,
                     fmt::format("function string_agg({}, {}) does not exist", arg->type.Name(),
                                 separator->type.Name()),
                     call.position)
          .WithHint("string_agg takes text and a text delimiter.");
    }
    if (separator->kind != BoundExpr::Kind::kConstant) {
      throw SqlError(sqlstate::kFeatureNotSupported, "string_agg's delimiter must be a constant",
                     call.args[1]->position);
    }
    if (!separator->constant.is_null()) aggregate.separator = separator->constant.string_value();
    aggregate.result_type = TypeId::kVarchar;
  } else {
    if (arg->type.IsArray()) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "array_agg of arrays (multidimensional arrays) is not supported",
                     call.position);
    }
    aggregate.result_type = DataType::ArrayOf(arg->type.id);
  }
  aggregate.arg = arg;
  if (call.order_by.size() > 1) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("{} with several ORDER BY keys is not supported", name),
                   call.order_by[1].expr->position);
  }
  if (!call.order_by.empty()) {
    const parser::OrderItem& order = call.order_by[0];
    if (ContainsAggregate(*order.expr)) {
      throw SqlError(sqlstate::kGroupingError, "aggregate function calls cannot be nested",
                     order.expr->position);
    }
    BoundExprPtr key = input_binder.Bind(*order.expr);
    if (key->ToString() != arg->ToString()) {
      if (call.distinct) {
        throw SqlError("42P10",
                       "in an aggregate with DISTINCT, ORDER BY expressions must appear in "
                       "argument list",
                       order.expr->position);
      }
      if (key->type.id == TypeId::kUnknown) {
        key = ExpressionBinder::Coerce(key, TypeId::kVarchar, order.expr->position);
      }
      aggregate.order_key = key;
    }
    aggregate.descending = order.descending;
    aggregate.nulls_first = order.nulls_first.value_or(order.descending);
  }
  return aggregate;
}

// The call without its FILTER clause.
AggregateCall BindUnfilteredAggregateCall(const parser::FunctionCallExpr& call,
                                          const BindScope* scope) {
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
  if (name == "array_agg" || name == "string_agg") return BindOrderedAggregateCall(call, scope);
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
  } else {
    aggregate.kind = name == "min" ? AggregateKind::kMin : AggregateKind::kMax;
    aggregate.result_type = arg->type;
  }
  return aggregate;
}

// FILTER (WHERE condition): a boolean over the aggregate's input rows, itself no aggregate
// and no window function (PostgreSQL's rules and SQLSTATEs).
BoundExprPtr BindAggregateFilter(const parser::Expr& condition, const BindScope* scope) {
  if (ContainsAggregate(condition)) {
    throw SqlError(sqlstate::kGroupingError, "aggregate functions are not allowed in FILTER",
                   condition.position);
  }
  if (ContainsWindowFunction(condition)) {
    throw SqlError("42P20", "window functions are not allowed in FILTER", condition.position);
  }
  ExpressionBinder input_binder(scope);
  return input_binder.BindPredicate(condition, "FILTER");
}

}  // namespace

AggregateCall BindAggregateCall(const parser::FunctionCallExpr& call, const BindScope* scope) {
  AggregateCall aggregate = BindUnfilteredAggregateCall(call, scope);
  if (call.filter) aggregate.filter = BindAggregateFilter(*call.filter, scope);
  return aggregate;
}

}  // namespace stave::planner
