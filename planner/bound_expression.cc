#include "planner/bound_expression.h"

#include <fmt/format.h>

namespace stave::planner {

std::string_view ScalarFunctionName(ScalarFunction function) {
  switch (function) {
    case ScalarFunction::kAdd:
      return "+";
    case ScalarFunction::kSubtract:
      return "-";
    case ScalarFunction::kMultiply:
      return "*";
    case ScalarFunction::kDivide:
      return "/";
    case ScalarFunction::kModulo:
      return "%";
    case ScalarFunction::kNegate:
      return "negate";
    case ScalarFunction::kEqual:
      return "=";
    case ScalarFunction::kNotEqual:
      return "<>";
    case ScalarFunction::kLess:
      return "<";
    case ScalarFunction::kLessEqual:
      return "<=";
    case ScalarFunction::kGreater:
      return ">";
    case ScalarFunction::kGreaterEqual:
      return ">=";
    case ScalarFunction::kAnd:
      return "AND";
    case ScalarFunction::kOr:
      return "OR";
    case ScalarFunction::kNot:
      return "NOT";
    case ScalarFunction::kIsNull:
      return "IS NULL";
    case ScalarFunction::kIsNotNull:
      return "IS NOT NULL";
    case ScalarFunction::kConcat:
      return "||";
    case ScalarFunction::kLike:
      return "LIKE";
    case ScalarFunction::kILike:
      return "ILIKE";
    case ScalarFunction::kCast:
      return "CAST";
    case ScalarFunction::kCase:
      return "CASE";
    case ScalarFunction::kCoalesce:
      return "coalesce";
    case ScalarFunction::kAbs:
      return "abs";
    case ScalarFunction::kLower:
      return "lower";
    case ScalarFunction::kUpper:
      return "upper";
    case ScalarFunction::kLength:
      return "length";
  }
  return "?";
}

BoundExprPtr BoundExpr::MakeConstant(Value value, DataType type) {
  auto expr = std::make_shared<BoundExpr>();
  expr->kind = Kind::kConstant;
  expr->type = type;
  expr->constant = std::move(value);
  return expr;
}

BoundExprPtr BoundExpr::MakeColumn(size_t column, DataType type) {
  auto expr = std::make_shared<BoundExpr>();
  expr->kind = Kind::kColumn;
  expr->type = type;
  expr->column = column;
  return expr;
}

BoundExprPtr BoundExpr::MakeFunction(ScalarFunction function, DataType type,
                                     std::vector<BoundExprPtr> args) {
  auto expr = std::make_shared<BoundExpr>();
  expr->kind = Kind::kFunction;
  expr->type = type;
  expr->function = function;
  expr->args = std::move(args);
  return expr;
}

std::string BoundExpr::ToString() const {
  switch (kind) {
    case Kind::kConstant:
      if (constant.is_null()) return "NULL";
      if (type.IsString() || type.id == TypeId::kUnknown)
        return "'" + constant.string_value() + "'";
      return constant.ToText(type);
    case Kind::kColumn:
      return fmt::format("${}", column);
    case Kind::kFunction: {
      std::string text = fmt::format("{}(", ScalarFunctionName(function));
      for (size_t i = 0; i < args.size(); ++i) {
        if (i > 0) text += ", ";
        text += args[i]->ToString();
      }
      text += ")";
      if (function == ScalarFunction::kCast) text += "::" + type.Name();
      return text;
    }
  }
  return "?";
}

std::string_view AggregateKindName(AggregateKind kind) {
  switch (kind) {
    case AggregateKind::kCountStar:
    case AggregateKind::kCount:
      return "count";
    case AggregateKind::kSum:
      return "sum";
    case AggregateKind::kMin:
      return "min";
    case AggregateKind::kMax:
      return "max";
    case AggregateKind::kAvg:
      return "avg";
  }
  return "?";
}

std::string AggregateCall::ToString() const {
  if (kind == AggregateKind::kCountStar) return "count(*)";
  return fmt::format("{}({})", AggregateKindName(kind), arg->ToString());
}

}  // namespace stave::planner
