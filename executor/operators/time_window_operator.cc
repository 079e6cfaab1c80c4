#include "executor/operators/time_window_operator.h"

namespace stave::executor {
namespace {

// The start of the last window (the one starting latest) that contains `time`: `time`
// rounded down to `origin` plus a multiple of `slide`, towards minus infinity.
int64_t LastWindowStart(int64_t time, int64_t slide, int64_t origin) {
  int64_t remainder = (time - origin) % slide;
  return remainder < 0 ? time - remainder - slide : time - remainder;
}

}  // namespace

Chunk TimeWindowOperator::Apply(const planner::TimeWindowNode& node, const Chunk& chunk) {
  std::vector<DataType> types;
  for (const planner::Column& column : node.output) types.push_back(column.type);
  Chunk out = Chunk::WithTypes(types);
  const Column& time = chunk.columns[node.time_column];
  size_t visible = node.visible_columns;
  size_t inputs = chunk.columns.size();
  for (size_t row = 0; row < chunk.size(); ++row) {
    if (time.IsNull(row)) continue;
    RowOp op = RowSign(chunk.ops[row]) > 0 ? RowOp::kInsert : RowOp::kDelete;
    int64_t last = LastWindowStart(time.ints[row], node.slide, node.origin);
    // Every window [start, start + size) holding the time, earliest first. The earliest
    // start is past time - size; computed without overflow near the ends of the range.
    int64_t count = (node.size - 1 - (time.ints[row] - last)) / node.slide + 1;
    for (int64_t k = count - 1; k >= 0; --k) {
      int64_t start = last - k * node.slide;
      for (size_t c = 0; c < visible; ++c) out.columns[c].AppendFrom(chunk.columns[c], row);
      out.columns[visible].AppendInt(start);
      out.columns[visible + 1].AppendInt(start + node.size);
      for (size_t c = visible; c < inputs; ++c) {
        out.columns[c + 2].AppendFrom(chunk.columns[c], row);
      }
      out.ops.push_back(op);
    }
  }
  return out;
}

}  // namespace stave::executor
