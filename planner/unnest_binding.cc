#include "planner/unnest_binding.h"

#include <fmt/format.h>

#include "common/sql_error.h"
#include "planner/expression_binder.h"

namespace stave::planner {
namespace {

void CheckArray(const BoundExprPtr& array, int position) {
  if (array->type.IsArray()) return;
  throw SqlError(sqlstate::kUndefinedFunction,
                 fmt::format("function unnest({}) does not exist", array->type.Name()), position)
      .WithHint("unnest takes arrays.");
}

}  // namespace

bool IsSetReturningFunction(const parser::QualifiedName& name) {
  if (!name.empty() && name.back() == "_pg_expandarray") {
    return name.size() == 1 || (name.size() == 2 && name[0] == "information_schema");
  }
  if (!name.empty() && name.back() == "_pg_expandarray_subscripts") {
    return name.size() == 2 && name[0] == "information_schema";
  }
  return !name.empty() && (name.back() == "unnest" || name.back() == "generate_subscripts") &&
         (name.size() == 1 || (name.size() == 2 && name[0] == "pg_catalog"));
}

std::shared_ptr<UnnestNode> MakeUnnestNode(PlanNodePtr input, std::vector<BoundExprPtr> arrays,
                                           const std::vector<int>& positions, bool with_ordinality,
                                           const std::vector<std::string>& names) {
  auto node = std::make_shared<UnnestNode>();
  node->output = input->output;
  for (size_t a = 0; a < arrays.size(); ++a) {
    CheckArray(arrays[a], positions[a]);
    node->output.push_back({names[a], arrays[a]->type.ElementType()});
  }
  if (with_ordinality) node->output.push_back({names.back(), TypeId::kInt64});
  node->input = std::move(input);
  node->arrays = std::move(arrays);
  node->with_ordinality = with_ordinality;
  return node;
}

BoundExprPtr SelectListUnnests::Bind(const parser::FunctionCallExpr& call,
                                     ExpressionBinder* binder) {
  if (call.name.back() == "generate_subscripts" ||
      call.name.back() == "_pg_expandarray_subscripts") {
    return BindSubscripts(call, binder);
  }
  if (call.name.back() == "_pg_expandarray") return BindExpandArray(call, binder);
  if (call.args.size() != 1 || call.star || call.distinct || call.over) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "unnest() in a select list takes one array; unnest of several arrays is "
                   "supported in FROM",
                   call.position);
  }
  for (const auto& arg : call.args) {
    if (arg->kind == parser::ExprKind::kFunctionCall &&
        IsSetReturningFunction(static_cast<const parser::FunctionCallExpr&>(*arg).name)) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "nested set-returning functions are not "
                     "supported",
                     arg->position);
    }
  }
  BoundExprPtr array = binder->Bind(*call.args[0]);
  CheckArray(array, call.position);
  DataType element = array->type.ElementType();
  return Column(std::move(array), false, element);
}

BoundExprPtr SelectListUnnests::Column(BoundExprPtr array, bool subscripts, DataType type) {
  std::string text = (subscripts ? "subscripts " : "") + array->ToString();
  size_t index = 0;
  while (index < texts_.size() && texts_[index] != text) ++index;
  if (index == texts_.size()) {
    arrays_.push_back(std::move(array));
    subscripts_.push_back(subscripts);
    texts_.push_back(std::move(text));
  }
  return BoundExpr::MakeColumn(input_width_ + index, type);
}

BoundExprPtr SelectListUnnests::BindSubscripts(const parser::FunctionCallExpr& call,
                                               ExpressionBinder* binder) {
  if (call.args.size() != 2 || call.star || call.distinct || call.over) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "generate_subscripts() takes an array and the dimension 1", call.position);
  }
  BoundExprPtr array = binder->Bind(*call.args[0]);
  if (!array->type.IsArray()) {
    throw SqlError(
        sqlstate::kUndefinedFunction,
        fmt::format("function generate_subscripts({}, integer) does not exist", array->type.Name()),
        call.position)
        .WithHint("generate_subscripts takes an array.");
  }
  BoundExprPtr dimension = binder->Bind(*call.args[1]);
  if (dimension->kind != BoundExpr::Kind::kConstant || !dimension->type.IsInteger()) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "the dimension of generate_subscripts() must be an integer constant",
                   call.args[1]->position);
  }
  // Stave's arrays have one dimension: any other has no subscripts, as an absent dimension
  // has none in PostgreSQL.
  if (dimension->constant.is_null() || dimension->constant.int_value() != 1) {
    array = BoundExpr::MakeConstant(Value::Null(), array->type);
  }
  // The unnest column numbers elements from 1, as _pg_expandarray's n does
  // (information_schema._pg_expandarray_subscripts, the parser's (record).n); an int2vector's
  // or oidvector's subscripts start at 0.
  int lower_bound = array->type.lower_bound;
  BoundExprPtr number = Column(std::move(array), true, TypeId::kInt32);
  if (lower_bound == 1 || call.name.back() == "_pg_expandarray_subscripts") return number;
  return BoundExpr::MakeFunction(
      ScalarFunction::kAdd, TypeId::kInt32,
      {number, BoundExpr::MakeConstant(Value::Int(lower_bound - 1), TypeId::kInt32)});
}

BoundExprPtr SelectListUnnests::BindExpandArray(const parser::FunctionCallExpr& call,
                                                ExpressionBinder* binder) {
  if (call.args.size() != 1 || call.star || call.distinct || call.over) {
    throw SqlError(sqlstate::kUndefinedFunction,
                   "function information_schema._pg_expandarray() takes one array", call.position);
  }
  BoundExprPtr array = binder->Bind(*call.args[0]);
  if (!array->type.IsArray()) {
    throw SqlError(sqlstate::kUndefinedFunction,
                   fmt::format("function information_schema._pg_expandarray({}) does not exist",
                               array->type.Name()),
                   call.position);
  }
  // The record (x, n) in its text form, as PostgreSQL prints a record: "(5,1)", and "(,2)"
  // for a NULL element. (record).x and (record).n read it back (ExpressionBinder::
  // BindFieldSelection).
  BoundExprPtr element = Column(array, false, array->type.ElementType());
  BoundExprPtr subscript = Column(array, true, TypeId::kInt32);
  auto text = [](BoundExprPtr value) {
    return BoundExpr::MakeFunction(ScalarFunction::kCast, TypeId::kVarchar, {std::move(value)});
  };
  auto literal = [](const char* value) {
    return BoundExpr::MakeConstant(Value::String(value), TypeId::kVarchar);
  };
  return BoundExpr::MakeFunction(
      ScalarFunction::kConcatFunction, TypeId::kVarchar,
      {literal("("), text(element), literal(","), text(subscript), literal(")")});
}

PlanNodePtr SelectListUnnests::MakeNode(PlanNodePtr input) const {
  if (arrays_.empty()) return input;
  std::vector<int> positions(arrays_.size(), 0);
  std::vector<std::string> names(arrays_.size(), "unnest");
  auto node = MakeUnnestNode(std::move(input), arrays_, positions, false, names);
  for (size_t a = 0; a < arrays_.size(); ++a) {
    if (subscripts_[a]) node->output[input_width_ + a].type = TypeId::kInt32;
  }
  node->subscripts = subscripts_;
  return node;
}

}  // namespace stave::planner
