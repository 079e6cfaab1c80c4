#include "executor/connectors/values/values_source.h"

#include "executor/expression_evaluator.h"

namespace stave::executor {

Chunk ValuesRows(const planner::ValuesNode& node) {
  Chunk one;
  one.ops.push_back(RowOp::kInsert);
  if (node.rows.empty()) return one;
  std::vector<DataType> types;
  for (const planner::Column& column : node.output) types.push_back(column.type);
  Chunk out = Chunk::WithTypes(types);
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
