// Binding of the bytea, jsonb and array operators, constructors and functions: the part of
// ExpressionBinder that resolves which of them an expression means and coerces its operands.

#include <fmt/format.h>

#include "common/array_value.h"
#include "common/sql_error.h"
#include "common/value_cast.h"
#include "planner/expression_binder.h"

namespace stave::planner {
namespace {

[[noreturn]] void ThrowNoOperator(std::string_view op, DataType left, DataType right,
                                  int position) {
  throw SqlError(sqlstate::kUndefinedFunction,
                 fmt::format("operator does not exist: {} {} {}", left.Name(), op, right.Name()),
                 position)
      .WithHint(
          "No operator matches the given name and argument types. You might need to add "
          "explicit type casts.");
}

bool IsUntyped(const BoundExprPtr& expr) { return expr->type.id == TypeId::kUnknown; }

// PostgreSQL's numeric promotion: smallint < integer < bigint < real < double precision,
// and real meets an integer type at double precision.
DataType WiderNumeric(DataType a, DataType b) {
  if (a.IsFloat() || b.IsFloat()) {
    return a.id == TypeId::kFloat32 && b.id == TypeId::kFloat32 ? a : DataType(TypeId::kFloat64);
  }
  return a.id >= b.id ? a : b;
}

bool IsConstant(const BoundExprPtr& expr) { return expr->kind == BoundExpr::Kind::kConstant; }

[[noreturn]] void ThrowNoFunction(std::string_view name, const std::vector<BoundExprPtr>& args,
                                  int position) {
  std::string types;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) types += ", ";
    types += args[i]->type.Name();
  }
  throw SqlError(sqlstate::kUndefinedFunction,
                 fmt::format("function {}({}) does not exist", name, types), position)
      .WithHint(
          "No function matches the given name and argument types. You might need to add "
          "explicit type casts.");
}

// `expr` converted to `target` (untyped literals parsed, numeric types widened), or an error
// naming the function when it cannot be.
BoundExprPtr CoerceArgument(BoundExprPtr expr, DataType target, std::string_view name,
                            const std::vector<BoundExprPtr>& args, int position) {
  BoundExprPtr coerced = ExpressionBinder::Coerce(std::move(expr), target, position);
  bool fits = coerced->type == target || (coerced->type.IsString() && target.IsString());
  if (!fits) ThrowNoFunction(name, args, position);
  return coerced;
}

// The element type an array expression must have for `element` to join it: the element
// itself, widened over numeric types.
BoundExprPtr CoerceToElement(BoundExprPtr element, DataType array_type, int position) {
  return ExpressionBinder::Coerce(std::move(element), array_type.ElementType(), position);
}

}  // namespace

BoundExprPtr ExpressionBinder::BindArrayConstructor(const parser::ArrayConstructorExpr& expr) {
  if (expr.elements.empty()) {
    throw SqlError("42P18", "cannot determine type of empty array", expr.position)
        .WithHint("Explicitly cast to the desired type, for example ARRAY[]::integer[].");
  }
  std::vector<BoundExprPtr> elements;
  for (const auto& element : expr.elements) elements.push_back(Bind(*element));
  DataType element_type = CommonType(elements, "ARRAY", expr.position);
  if (element_type.IsArray()) {
    throw SqlError(sqlstate::kFeatureNotSupported, "multidimensional arrays are not supported",
                   expr.position);
  }
  bool all_constant = true;
  for (auto& element : elements) {
    element = Coerce(element, element_type, expr.position);
    if (element->type != element_type && !(element->type.IsString() && element_type.IsString())) {
      element = BoundExpr::MakeFunction(ScalarFunction::kCast, element_type, {element});
    }
    all_constant = all_constant && IsConstant(element);
  }
  DataType type = DataType::ArrayOf(element_type.id);
  if (all_constant) {
    std::vector<Value> values;
    for (const auto& element : elements) values.push_back(element->constant);
    return BoundExpr::MakeConstant(Value::String(array::Encode(values, element_type)), type);
  }
  return BoundExpr::MakeFunction(ScalarFunction::kArrayConstruct, type, std::move(elements));
}

BoundExprPtr ExpressionBinder::BindSubscript(const parser::SubscriptExpr& expr) {
  BoundExprPtr array = Bind(*expr.array);
  if (!array->type.IsArray()) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("cannot subscript type {} because it does not support subscripting",
                               array->type.Name()),
                   expr.position);
  }
  BoundExprPtr index = Coerce(Bind(*expr.index), TypeId::kInt32, expr.index->position);
  if (!index->type.IsInteger()) {
    throw SqlError(sqlstate::kDatatypeMismatch, "array subscript must have type integer",
                   expr.index->position);
  }
  // kArraySubscript counts from 1; an int2vector's or oidvector's subscripts start at 0.
  if (array->type.lower_bound != 1) {
    if (index->type.id != TypeId::kInt64) {
      index = BoundExpr::MakeFunction(ScalarFunction::kCast, TypeId::kInt64, {index});
    }
    index = BoundExpr::MakeFunction(
        ScalarFunction::kAdd, TypeId::kInt64,
        {index, BoundExpr::MakeConstant(Value::Int(1 - array->type.lower_bound), TypeId::kInt64)});
  }
  return BoundExpr::MakeFunction(ScalarFunction::kArraySubscript, array->type.ElementType(),
                                 {array, index});
}

BoundExprPtr ExpressionBinder::BindQuantifiedComparison(
    const parser::QuantifiedComparisonExpr& expr) {
  BoundExprPtr operand = Bind(*expr.operand);
  BoundExprPtr array = Bind(*expr.array);
  static constexpr std::pair<parser::BinaryOp, std::pair<ScalarFunction, const char*>> kOps[] = {
      {parser::BinaryOp::kEqual, {ScalarFunction::kEqual, "="}},
      {parser::BinaryOp::kNotEqual, {ScalarFunction::kNotEqual, "<>"}},
      {parser::BinaryOp::kLess, {ScalarFunction::kLess, "<"}},
      {parser::BinaryOp::kLessEqual, {ScalarFunction::kLessEqual, "<="}},
      {parser::BinaryOp::kGreater, {ScalarFunction::kGreater, ">"}},
      {parser::BinaryOp::kGreaterEqual, {ScalarFunction::kGreaterEqual, ">="}},
  };
  ScalarFunction comparison = ScalarFunction::kEqual;
  const char* symbol = "=";
  for (const auto& [op, function] : kOps) {
    if (op == expr.op) std::tie(comparison, symbol) = function;
  }
  if (IsUntyped(array)) {
    DataType element = IsUntyped(operand) ? DataType(TypeId::kVarchar) : operand->type;
    array = Coerce(array, DataType::ArrayOf(element.id), expr.array->position);
  }
  if (!array->type.IsArray()) {
    throw SqlError(sqlstate::kWrongObjectType, "op ANY/ALL (array) requires array on right side",
                   expr.array->position);
  }
  DataType element = array->type.ElementType();
  if (IsUntyped(operand)) operand = Coerce(operand, element, expr.position);
  if (operand->type.IsNumeric() && element.IsNumeric() && operand->type != element) {
    // Both sides meet at the wider numeric type.
    DataType common = WiderNumeric(operand->type, element);
    operand = Coerce(operand, common, expr.position);
    if (element != common) {
      array = BoundExpr::MakeFunction(ScalarFunction::kCast, DataType::ArrayOf(common.id), {array});
    }
    element = common;
  }
  if (IsImplicitTemporalCast(operand->type, element))
    operand = Coerce(operand, element, expr.position);
  bool comparable = operand->type == element || (operand->type.IsString() && element.IsString());
  bool ordered = comparison != ScalarFunction::kEqual && comparison != ScalarFunction::kNotEqual;
  if (!comparable || (element.id == TypeId::kJsonb && ordered)) {
    ThrowNoOperator(symbol, operand->type, element, expr.position);
  }
  BoundExprPtr op =
      BoundExpr::MakeConstant(Value::Int(static_cast<int64_t>(comparison)), TypeId::kInt32);
  return BoundExpr::MakeFunction(
      expr.all ? ScalarFunction::kAllCompare : ScalarFunction::kAnyCompare, TypeId::kBoolean,
      {operand, array, op});
}

BoundExprPtr ExpressionBinder::BindJsonbOrContainment(const parser::BinaryExpr& expr,
                                                      BoundExprPtr left, BoundExprPtr right) {
  static constexpr std::pair<parser::BinaryOp, const char*> kSymbols[] = {
      {parser::BinaryOp::kJsonGet, "->"},  {parser::BinaryOp::kJsonGetText, "->>"},
      {parser::BinaryOp::kJsonPath, "#>"}, {parser::BinaryOp::kJsonPathText, "#>>"},
      {parser::BinaryOp::kContains, "@>"}, {parser::BinaryOp::kContainedBy, "<@"},
  };
  const char* symbol = "?";
  for (const auto& [op, text] : kSymbols) {
    if (op == expr.op) symbol = text;
  }
  int position = expr.position;
  if (expr.op == parser::BinaryOp::kContains || expr.op == parser::BinaryOp::kContainedBy) {
    if (IsUntyped(left) && !IsUntyped(right)) left = Coerce(left, right->type, position);
    if (IsUntyped(right) && !IsUntyped(left)) right = Coerce(right, left->type, position);
    if (expr.op == parser::BinaryOp::kContainedBy) std::swap(left, right);
    if (left->type.id == TypeId::kJsonb && right->type.id == TypeId::kJsonb) {
      return BoundExpr::MakeFunction(ScalarFunction::kJsonbContains, TypeId::kBoolean,
                                     {left, right});
    }
    if (left->type.IsArray() && left->type == right->type) {
      return BoundExpr::MakeFunction(ScalarFunction::kArrayContains, TypeId::kBoolean,
                                     {left, right});
    }
    if (expr.op == parser::BinaryOp::kContainedBy) std::swap(left, right);
    ThrowNoOperator(symbol, left->type, right->type, position);
  }
  if (IsUntyped(left)) left = Coerce(left, TypeId::kJsonb, position);
  if (left->type.id != TypeId::kJsonb) {
    if (IsUntyped(right)) right = Coerce(right, TypeId::kVarchar, position);
    ThrowNoOperator(symbol, left->type, right->type, position);
  }
  bool text =
      expr.op == parser::BinaryOp::kJsonGetText || expr.op == parser::BinaryOp::kJsonPathText;
  DataType result = text ? DataType(TypeId::kVarchar) : DataType(TypeId::kJsonb);
  if (expr.op == parser::BinaryOp::kJsonPath || expr.op == parser::BinaryOp::kJsonPathText) {
    DataType path_type = DataType::ArrayOf(TypeId::kVarchar);
    right = Coerce(right, path_type, position);
    if (right->type != path_type) ThrowNoOperator(symbol, left->type, right->type, position);
    return BoundExpr::MakeFunction(
        text ? ScalarFunction::kJsonbPathText : ScalarFunction::kJsonbPath, result, {left, right});
  }
  // An untyped literal is a key, as PostgreSQL resolves jsonb -> unknown to jsonb -> text.
  if (IsUntyped(right)) right = Coerce(right, TypeId::kVarchar, position);
  if (right->type.IsString()) {
    return BoundExpr::MakeFunction(
        text ? ScalarFunction::kJsonbFieldText : ScalarFunction::kJsonbField, result,
        {left, right});
  }
  if (right->type.IsInteger()) {
    right = Coerce(right, TypeId::kInt32, position);
    return BoundExpr::MakeFunction(
        text ? ScalarFunction::kJsonbElementText : ScalarFunction::kJsonbElement, result,
        {left, right});
  }
  ThrowNoOperator(symbol, left->type, right->type, position);
}

std::optional<BoundExprPtr> ExpressionBinder::BindByteaOrArrayConcat(BoundExprPtr left,
                                                                     BoundExprPtr right,
                                                                     int position) {
  if (left->type.id == TypeId::kJsonb || right->type.id == TypeId::kJsonb) {
    // jsonb || jsonb (an untyped literal beside jsonb is jsonb); jsonb || text is text.
    if (IsUntyped(left)) left = Coerce(left, TypeId::kJsonb, position);
    if (IsUntyped(right)) right = Coerce(right, TypeId::kJsonb, position);
    if (left->type.id != TypeId::kJsonb || right->type.id != TypeId::kJsonb) return std::nullopt;
    return BoundExpr::MakeFunction(ScalarFunction::kConcat, TypeId::kJsonb, {left, right});
  }
  if (left->type.id == TypeId::kBytea || right->type.id == TypeId::kBytea) {
    if (IsUntyped(left)) left = Coerce(left, TypeId::kBytea, position);
    if (IsUntyped(right)) right = Coerce(right, TypeId::kBytea, position);
    if (left->type.id != TypeId::kBytea || right->type.id != TypeId::kBytea) return std::nullopt;
    return BoundExpr::MakeFunction(ScalarFunction::kConcat, TypeId::kBytea, {left, right});
  }
  if (!left->type.IsArray() && !right->type.IsArray()) return std::nullopt;
  // An untyped literal next to an array is an array of the same type ('{3}'), as PostgreSQL
  // prefers anyarray || anyarray.
  if (IsUntyped(left)) left = Coerce(left, right->type, position);
  if (IsUntyped(right)) right = Coerce(right, left->type, position);
  if (left->type.IsArray() && right->type.IsArray()) {
    if (left->type != right->type) {
      bool numeric = left->type.ElementType().IsNumeric() && right->type.ElementType().IsNumeric();
      if (!numeric) ThrowNoOperator("||", left->type, right->type, position);
      DataType common =
          DataType::ArrayOf(WiderNumeric(left->type.ElementType(), right->type.ElementType()).id);
      if (left->type != common)
        left = BoundExpr::MakeFunction(ScalarFunction::kCast, common, {left});
      if (right->type != common)
        right = BoundExpr::MakeFunction(ScalarFunction::kCast, common, {right});
    }
    return BoundExpr::MakeFunction(ScalarFunction::kArrayCat, left->type, {left, right});
  }
  if (left->type.IsArray()) {
    BoundExprPtr element = CoerceToElement(right, left->type, position);
    if (element->type != left->type.ElementType() &&
        !(element->type.IsString() && left->type.ElementType().IsString())) {
      ThrowNoOperator("||", left->type, right->type, position);
    }
    return BoundExpr::MakeFunction(ScalarFunction::kArrayAppend, left->type, {left, element});
  }
  BoundExprPtr element = CoerceToElement(left, right->type, position);
  if (element->type != right->type.ElementType() &&
      !(element->type.IsString() && right->type.ElementType().IsString())) {
    ThrowNoOperator("||", left->type, right->type, position);
  }
  return BoundExpr::MakeFunction(ScalarFunction::kArrayPrepend, right->type, {element, right});
}

std::optional<BoundExprPtr> ExpressionBinder::BindByteaJsonbArrayFunction(
    const std::string& name, const parser::FunctionCallExpr& expr) {
  static const char* const kNames[] = {
      "length",        "octet_length",       "encode",          "decode",          "md5",
      "jsonb_typeof",  "jsonb_array_length", "array_length",    "cardinality",     "array_append",
      "array_prepend", "array_cat",          "array_to_string", "string_to_array",
  };
  bool known = false;
  for (const char* each : kNames) known = known || name == each;
  if (!known || expr.star || expr.distinct || expr.name.size() > 2) return std::nullopt;
  std::vector<BoundExprPtr> args;
  for (const auto& arg : expr.args) args.push_back(Bind(*arg));
  int position = expr.position;
  auto expect = [&](size_t count) {
    if (args.size() != count) ThrowNoFunction(name, args, position);
  };
  if (name == "length" || name == "octet_length") {
    // length(text) stays with the string functions; only bytea is handled here.
    if (args.size() != 1 || args[0]->type.id != TypeId::kBytea) return std::nullopt;
    return BoundExpr::MakeFunction(ScalarFunction::kOctetLength, TypeId::kInt32, args);
  }
  if (name == "encode") {
    expect(2);
    args[0] = CoerceArgument(args[0], TypeId::kBytea, name, args, position);
    args[1] = CoerceArgument(args[1], TypeId::kVarchar, name, args, position);
    return BoundExpr::MakeFunction(ScalarFunction::kEncode, TypeId::kVarchar, args);
  }
  if (name == "decode") {
    expect(2);
    args[0] = CoerceArgument(args[0], TypeId::kVarchar, name, args, position);
    args[1] = CoerceArgument(args[1], TypeId::kVarchar, name, args, position);
    return BoundExpr::MakeFunction(ScalarFunction::kDecode, TypeId::kBytea, args);
  }
  if (name == "md5") {
    expect(1);
    if (args[0]->type.id != TypeId::kBytea) {
      args[0] = CoerceArgument(args[0], TypeId::kVarchar, name, args, position);
    }
    return BoundExpr::MakeFunction(ScalarFunction::kMd5, TypeId::kVarchar, args);
  }
  if (name == "jsonb_typeof" || name == "jsonb_array_length") {
    expect(1);
    args[0] = CoerceArgument(args[0], TypeId::kJsonb, name, args, position);
    return name == "jsonb_typeof"
               ? BoundExpr::MakeFunction(ScalarFunction::kJsonbTypeof, TypeId::kVarchar, args)
               : BoundExpr::MakeFunction(ScalarFunction::kJsonbArrayLength, TypeId::kInt32, args);
  }
  if (name == "array_length" || name == "cardinality") {
    expect(name == "cardinality" ? 1 : 2);
    if (!args[0]->type.IsArray()) ThrowNoFunction(name, args, position);
    if (name == "cardinality") {
      return BoundExpr::MakeFunction(ScalarFunction::kCardinality, TypeId::kInt32, args);
    }
    args[1] = CoerceArgument(args[1], TypeId::kInt32, name, args, position);
    return BoundExpr::MakeFunction(ScalarFunction::kArrayLength, TypeId::kInt32, args);
  }
  if (name == "array_append" || name == "array_prepend") {
    expect(2);
    size_t array_index = name == "array_append" ? 0 : 1;
    BoundExprPtr& array = args[array_index];
    BoundExprPtr& element = args[1 - array_index];
    if (!array->type.IsArray()) ThrowNoFunction(name, args, position);
    BoundExprPtr coerced = CoerceToElement(element, array->type, position);
    if (coerced->type != array->type.ElementType() &&
        !(coerced->type.IsString() && array->type.ElementType().IsString())) {
      ThrowNoFunction(name, args, position);
    }
    element = coerced;
    return BoundExpr::MakeFunction(
        name == "array_append" ? ScalarFunction::kArrayAppend : ScalarFunction::kArrayPrepend,
        array->type, args);
  }
  if (name == "array_to_string") {
    if (args.size() != 2 && args.size() != 3) ThrowNoFunction(name, args, position);
    if (!args[0]->type.IsArray()) ThrowNoFunction(name, args, position);
    for (size_t i = 1; i < args.size(); ++i) {
      args[i] = CoerceArgument(args[i], TypeId::kVarchar, name, args, position);
    }
    return BoundExpr::MakeFunction(ScalarFunction::kArrayToString, TypeId::kVarchar, args);
  }
  if (name == "string_to_array") {
    // Not strict: a NULL delimiter splits into characters, a NULL null_string replaces nothing.
    if (args.size() != 2 && args.size() != 3) ThrowNoFunction(name, args, position);
    for (size_t i = 0; i < args.size(); ++i) {
      args[i] = CoerceArgument(args[i], TypeId::kVarchar, name, args, position);
    }
    return BoundExpr::MakeFunction(ScalarFunction::kStringToArray,
                                   DataType::ArrayOf(TypeId::kVarchar), args);
  }
  // array_cat
  expect(2);
  if (IsUntyped(args[0]) && args[1]->type.IsArray())
    args[0] = Coerce(args[0], args[1]->type, position);
  if (IsUntyped(args[1]) && args[0]->type.IsArray())
    args[1] = Coerce(args[1], args[0]->type, position);
  if (!args[0]->type.IsArray() || args[0]->type != args[1]->type) {
    ThrowNoFunction(name, args, position);
  }
  return BoundExpr::MakeFunction(ScalarFunction::kArrayCat, args[0]->type, args);
}

}  // namespace stave::planner
