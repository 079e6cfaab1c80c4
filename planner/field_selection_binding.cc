// `(value).field`. Stave has no composite types; the one record clients select fields of is
// information_schema._pg_expandarray's (x, n) (pgJDBC's DatabaseMetaData.getPrimaryKeys and
// getIndexInfo). Its fields of a direct call are the parser's unnest and
// information_schema._pg_expandarray_subscripts calls; a record that went through a subquery
// arrives in its text form "(x,n)" (SelectListUnnests::BindExpandArray), and the parser makes
// `(record).field` the call information_schema._pg_expandarray_field(record, 'field'), bound
// here.

#include <fmt/format.h>

#include "common/sql_error.h"
#include "planner/expression_binder.h"

namespace stave::planner {

BoundExprPtr ExpressionBinder::BindFieldSelection(const parser::FunctionCallExpr& expr) {
  const auto* field_name = expr.args.size() == 2 && expr.args[1]->kind == parser::ExprKind::kLiteral
                               ? static_cast<const parser::LiteralExpr*>(expr.args[1].get())
                               : nullptr;
  if (field_name == nullptr || field_name->literal_kind != parser::LiteralKind::kString ||
      expr.star || expr.distinct) {
    throw SqlError(sqlstate::kUndefinedFunction,
                   "function information_schema._pg_expandarray_field() takes a record and a "
                   "field name",
                   expr.position);
  }
  const std::string& field_text = field_name->value;
  BoundExprPtr record = Bind(*expr.args[0]);
  if (!record->type.IsString()) {
    throw SqlError("42809",
                   fmt::format("column notation .{} applied to type {}, which is not a composite "
                               "type",
                               field_text, record->type.Name()),
                   expr.position);
  }
  if (field_text != "x" && field_text != "n") {
    throw SqlError(sqlstate::kUndefinedColumn,
                   fmt::format("column \"{}\" not found in data type record", field_text),
                   expr.position)
        .WithHint("Stave's records are those of information_schema._pg_expandarray: (x, n).");
  }
  auto text = [](const char* value) {
    return BoundExpr::MakeConstant(Value::String(value), TypeId::kVarchar);
  };
  BoundExprPtr fields =
      BoundExpr::MakeFunction(ScalarFunction::kTrim, TypeId::kVarchar, {record, text("()")});
  BoundExprPtr field = BoundExpr::MakeFunction(
      ScalarFunction::kSplitPart, TypeId::kVarchar,
      {fields, text(","),
       BoundExpr::MakeConstant(Value::Int(field_text == "x" ? 1 : 2), TypeId::kInt32)});
  // An empty field is a NULL element: "(,2)".
  BoundExprPtr value =
      BoundExpr::MakeFunction(ScalarFunction::kNullIf, TypeId::kVarchar, {field, text("")});
  return BoundExpr::MakeFunction(ScalarFunction::kCast, TypeId::kInt32, {value});
}

}  // namespace stave::planner
