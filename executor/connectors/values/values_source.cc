#include "executor/connectors/values/values_source.h"

#include "common/sql_error.h"
#include "executor/expression_evaluator.h"

namespace stave::executor {

Chunk ValuesRows(const planner::ValuesNode& node) {
  Chunk one;
  one.ops.push_back(RowOp::kInsert);
  if (node.rows.empty()) return one;
  std::vector<DataType> types;
  for (const planner::Column& column : node.output) types.push_back(column.type);
  Chunk out = Chunk::WithTypes(types);
  if (node.series) {
    std::vector<Value> bounds;
    for (const planner::BoundExprPtr& bound : node.rows[0]) {
      bounds.push_back(Evaluate(*bound, one).GetValue(0));
    }
    // A NULL bound yields no rows, as in PostgreSQL.
    for (const Value& bound : bounds) {
      if (bound.is_null()) return out;
    }
    int64_t start = bounds[0].int_value();
    int64_t stop = bounds[1].int_value();
    int64_t step = bounds[2].int_value();
    if (step == 0) throw SqlError("22023", "step size cannot equal zero");
    for (__int128 i = start; step > 0 ? i <= stop : i >= stop; i += step) {
      out.columns[0].AppendValue(Value::Int(static_cast<int64_t>(i)));
      out.ops.push_back(RowOp::kInsert);
    }
    return out;
  }
  for (const std::vector<planner::BoundExprPtr>& row : node.rows) {
    for (size_t c = 0; c < row.size(); ++c) out.columns[c].AppendFrom(Evaluate(*row[c], one), 0);
    out.ops.push_back(RowOp::kInsert);
  }
  return out;
}

SourceReader::PollStatus ValuesSource::Poll(size_t max_rows, Chunk* chunk,
                                            std::chrono::steady_clock::time_point* wake_at) {
  (void)max_rows;
  (void)wake_at;
  if (delivered_) return PollStatus::kFinished;
  *chunk = ValuesRows(*node_);
  delivered_ = true;
  return PollStatus::kData;
}

Status ValuesSource::Seek(std::string_view position) {
  delivered_ = position == "delivered";
  return Status::Ok();
}

}  // namespace stave::executor
