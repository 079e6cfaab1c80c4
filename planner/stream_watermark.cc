#include "planner/stream_watermark.h"

#include <fmt/format.h>

#include "common/sql_error.h"
#include "planner/expression_binder.h"

namespace stave::planner {

bool IsEventTimeType(DataType type) { return type.IsTimestamp() || type.id == TypeId::kInt64; }

void BindStreamWatermark(const parser::WatermarkDef& definition, CatalogObject* stream) {
  BindScope scope;
  scope.table_name = stream->name;
  scope.columns = stream->columns;
  ExpressionBinder binder(&scope);
  std::optional<size_t> column =
      binder.ResolveColumn(parser::QualifiedName{definition.column}, definition.position);
  if (!column) {
    throw SqlError(
        sqlstate::kUndefinedColumn,
        fmt::format("column \"{}\" named in WATERMARK FOR does not exist", definition.column),
        definition.position);
  }
  DataType type = stream->columns[*column].type;
  if (!IsEventTimeType(type)) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the watermark column \"{}\" is {}; event time must be a "
                               "timestamp, a timestamp with time zone or a bigint",
                               definition.column, type.Name()),
                   definition.position);
  }
  if (ContainsAggregate(*definition.expression)) {
    throw SqlError(sqlstate::kGroupingError,
                   "aggregate functions are not allowed in a WATERMARK expression",
                   definition.position);
  }
  BoundExprPtr expression = binder.Bind(*definition.expression);
  if (expression->type != type) {
    expression = ExpressionBinder::Coerce(std::move(expression), type, definition.position);
  }
  stream->watermark_column = column;
  stream->watermark = std::move(expression);
}

}  // namespace stave::planner
