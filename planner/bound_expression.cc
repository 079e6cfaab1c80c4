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
    case ScalarFunction::kNullIf:
      return "nullif";
    case ScalarFunction::kGreatest:
      return "greatest";
    case ScalarFunction::kLeast:
      return "least";
    case ScalarFunction::kConcatFunction:
      return "concat";
    case ScalarFunction::kSubstr:
      return "substr";
    case ScalarFunction::kTrim:
      return "btrim";
    case ScalarFunction::kLTrim:
      return "ltrim";
    case ScalarFunction::kRTrim:
      return "rtrim";
    case ScalarFunction::kReplace:
      return "replace";
    case ScalarFunction::kSplitPart:
      return "split_part";
    case ScalarFunction::kStrPos:
      return "strpos";
    case ScalarFunction::kLeft:
      return "left";
    case ScalarFunction::kRight:
      return "right";
    case ScalarFunction::kRepeat:
      return "repeat";
    case ScalarFunction::kReverse:
      return "reverse";
    case ScalarFunction::kStartsWith:
      return "starts_with";
    case ScalarFunction::kChr:
      return "chr";
    case ScalarFunction::kAscii:
      return "ascii";
    case ScalarFunction::kLPad:
      return "lpad";
    case ScalarFunction::kRPad:
      return "rpad";
    case ScalarFunction::kRegexpReplace:
      return "regexp_replace";
    case ScalarFunction::kRegexpMatch:
      return "regexp_match";
    case ScalarFunction::kRegexMatch:
      return "~";
    case ScalarFunction::kRegexMatchInsensitive:
      return "~*";
    case ScalarFunction::kRegexNotMatch:
      return "!~";
    case ScalarFunction::kRegexNotMatchInsensitive:
      return "!~*";
    case ScalarFunction::kRound:
      return "round";
    case ScalarFunction::kFloor:
      return "floor";
    case ScalarFunction::kCeil:
      return "ceil";
    case ScalarFunction::kTrunc:
      return "trunc";
    case ScalarFunction::kSqrt:
      return "sqrt";
    case ScalarFunction::kPower:
      return "power";
    case ScalarFunction::kExp:
      return "exp";
    case ScalarFunction::kLn:
      return "ln";
    case ScalarFunction::kLog10:
      return "log";
    case ScalarFunction::kSign:
      return "sign";
    case ScalarFunction::kDateTrunc:
      return "date_trunc";
    case ScalarFunction::kDatePart:
      return "date_part";
    case ScalarFunction::kExtract:
      return "extract";
    case ScalarFunction::kToTimestamp:
      return "to_timestamp";
    case ScalarFunction::kMakeDate:
      return "make_date";
    case ScalarFunction::kMakeTime:
      return "make_time";
    case ScalarFunction::kMakeTimestamp:
      return "make_timestamp";
    case ScalarFunction::kMakeInterval:
      return "make_interval";
    case ScalarFunction::kToChar:
      return "to_char";
    case ScalarFunction::kNow:
      return "now";
    case ScalarFunction::kLower:
      return "lower";
    case ScalarFunction::kUpper:
      return "upper";
    case ScalarFunction::kLength:
      return "length";
    case ScalarFunction::kOctetLength:
      return "octet_length";
    case ScalarFunction::kEncode:
      return "encode";
    case ScalarFunction::kDecode:
      return "decode";
    case ScalarFunction::kMd5:
      return "md5";
    case ScalarFunction::kJsonbField:
    case ScalarFunction::kJsonbElement:
      return "->";
    case ScalarFunction::kJsonbFieldText:
    case ScalarFunction::kJsonbElementText:
      return "->>";
    case ScalarFunction::kJsonbPath:
      return "#>";
    case ScalarFunction::kJsonbPathText:
      return "#>>";
    case ScalarFunction::kJsonbContains:
    case ScalarFunction::kArrayContains:
      return "@>";
    case ScalarFunction::kJsonbTypeof:
      return "jsonb_typeof";
    case ScalarFunction::kJsonbArrayLength:
      return "jsonb_array_length";
    case ScalarFunction::kArrayConstruct:
      return "array";
    case ScalarFunction::kArraySubscript:
      return "subscript";
    case ScalarFunction::kArrayLength:
      return "array_length";
    case ScalarFunction::kCardinality:
      return "cardinality";
    case ScalarFunction::kArrayAppend:
      return "array_append";
    case ScalarFunction::kArrayPrepend:
      return "array_prepend";
    case ScalarFunction::kArrayCat:
      return "array_cat";
    case ScalarFunction::kArrayToString:
      return "array_to_string";
    case ScalarFunction::kStringToArray:
      return "string_to_array";
    case ScalarFunction::kOidArrayNames:
      return "oid_array_names";
    case ScalarFunction::kAnyCompare:
      return "any";
    case ScalarFunction::kAllCompare:
      return "all";
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

BoundExprPtr BoundExpr::MakeOuterColumn(size_t column, size_t depth, DataType type) {
  auto expr = std::make_shared<BoundExpr>();
  expr->kind = Kind::kOuterColumn;
  expr->type = type;
  expr->column = column;
  expr->outer_depth = depth;
  return expr;
}

BoundExprPtr BoundExpr::MakeSubquery(std::shared_ptr<const BoundSubquery> subquery, DataType type,
                                     std::vector<BoundExprPtr> operand) {
  auto expr = std::make_shared<BoundExpr>();
  expr->kind = Kind::kSubquery;
  expr->type = type;
  expr->subquery = std::move(subquery);
  expr->args = std::move(operand);
  return expr;
}

std::string BoundExpr::ToString() const {
  switch (kind) {
    case Kind::kConstant:
      if (constant.is_null()) return "NULL";
      if (type.IsString() || type.id == TypeId::kUnknown)
        return "'" + constant.string_value() + "'";
      if (type.IsTemporal() || type.id == TypeId::kBytea || type.id == TypeId::kJsonb ||
          type.IsArray()) {
        return "'" + constant.ToText(type) + "'::" + type.Name();
      }
      return constant.ToText(type);
    case Kind::kColumn:
      return fmt::format("${}", column);
    case Kind::kOuterColumn:
      return fmt::format("outer{}.${}", outer_depth, column);
    case Kind::kSubquery:
      return SubqueryText(*this, args.empty() ? "" : args[0]->ToString());
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
    case AggregateKind::kArrayAgg:
      return "array_agg";
    case AggregateKind::kStringAgg:
      return "string_agg";
  }
  return "?";
}

std::string AggregateCall::ToString() const {
  std::string text;
  if (kind == AggregateKind::kCountStar) {
    text = "count(*)";
  } else {
    text = fmt::format("{}({}{}", AggregateKindName(kind), distinct ? "DISTINCT " : "",
                       arg->ToString());
    if (kind == AggregateKind::kStringAgg) text += fmt::format(", '{}'", separator);
    if (descending || nulls_first || order_key) {
      text += fmt::format(
          " ORDER BY {}{}{}", (order_key ? order_key : arg)->ToString(), descending ? " DESC" : "",
          nulls_first != descending ? (nulls_first ? " NULLS FIRST" : " NULLS LAST") : "");
    }
    text += ")";
  }
  if (filter) text += fmt::format(" FILTER (WHERE {})", filter->ToString());
  return text;
}

void CollectColumns(const BoundExpr& expr, std::set<size_t>* columns) {
  if (expr.kind == BoundExpr::Kind::kColumn) columns->insert(expr.column);
  for (const auto& arg : expr.args) CollectColumns(*arg, columns);
}

void SplitConjuncts(const BoundExprPtr& expr, std::vector<BoundExprPtr>* conjuncts) {
  if (expr->kind == BoundExpr::Kind::kFunction && expr->function == ScalarFunction::kAnd) {
    for (const BoundExprPtr& arg : expr->args) SplitConjuncts(arg, conjuncts);
    return;
  }
  conjuncts->push_back(expr);
}

BoundExprPtr AndOf(const std::vector<BoundExprPtr>& conjuncts) {
  if (conjuncts.empty()) return nullptr;
  BoundExprPtr result = conjuncts[0];
  for (size_t i = 1; i < conjuncts.size(); ++i) {
    result =
        BoundExpr::MakeFunction(ScalarFunction::kAnd, TypeId::kBoolean, {result, conjuncts[i]});
  }
  return result;
}

}  // namespace stave::planner
