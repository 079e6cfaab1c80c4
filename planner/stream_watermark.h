#pragma once

#include "parser/ast.h"
#include "planner/catalog.h"

namespace stave::planner {

/// Whether a column of `type` can carry event time (a watermark, a window's bounds).
bool IsEventTimeType(DataType type);

/// Binds a stream's `WATERMARK FOR column AS expression` over the stream's columns and sets
/// `stream->watermark_column` and `stream->watermark`. Throws 42703 for an unknown column,
/// 42804 when the column cannot carry event time or the expression's type is not the
/// column's, 42803 for an aggregate in the expression.
void BindStreamWatermark(const parser::WatermarkDef& definition, CatalogObject* stream);

}  // namespace stave::planner
