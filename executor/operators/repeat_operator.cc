#include "executor/operators/repeat_operator.h"

namespace stave::executor {

Chunk RepeatOperator::Apply(size_t count_column, const Chunk& chunk) {
  std::vector<DataType> types;
  for (size_t c = 0; c < count_column; ++c) types.push_back(chunk.columns[c].type);
  Chunk out = Chunk::WithTypes(types);
  const Column& counts = chunk.columns[count_column];
  for (size_t r = 0; r < chunk.size(); ++r) {
    if (counts.IsNull(r)) continue;
    RowOp op = RowSign(chunk.ops[r]) > 0 ? RowOp::kInsert : RowOp::kDelete;
    for (int64_t copy = 0; copy < counts.ints[r]; ++copy) {
      for (size_t c = 0; c < count_column; ++c) out.columns[c].AppendFrom(chunk.columns[c], r);
      out.ops.push_back(op);
    }
  }
  return out;
}

}  // namespace stave::executor
