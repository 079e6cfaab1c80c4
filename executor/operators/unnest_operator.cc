#include "executor/operators/unnest_operator.h"

#include <algorithm>

#include "common/array_value.h"
#include "executor/expression_evaluator.h"

namespace stave::executor {

Chunk UnnestOperator::Apply(const planner::UnnestNode& node, const Chunk& chunk) {
  std::vector<DataType> types;
  for (const planner::Column& column : node.output) types.push_back(column.type);
  Chunk out = Chunk::WithTypes(types);
  std::vector<Column> arrays;
  for (const planner::BoundExprPtr& array : node.arrays) arrays.push_back(Evaluate(*array, chunk));
  size_t inputs = chunk.columns.size();
  std::vector<std::vector<Value>> elements(arrays.size());
  for (size_t row = 0; row < chunk.size(); ++row) {
    size_t length = 0;
    for (size_t a = 0; a < arrays.size(); ++a) {
      elements[a].clear();
      if (arrays[a].IsNull(row)) continue;
      elements[a] = array::Decode(arrays[a].strings[row], arrays[a].type.ElementType());
      length = std::max(length, elements[a].size());
    }
    RowOp op = RowSign(chunk.ops[row]) > 0 ? RowOp::kInsert : RowOp::kDelete;
    for (size_t i = 0; i < length; ++i) {
      for (size_t c = 0; c < inputs; ++c) out.columns[c].AppendFrom(chunk.columns[c], row);
      for (size_t a = 0; a < arrays.size(); ++a) {
        bool subscript = a < node.subscripts.size() && node.subscripts[a];
        if (i < elements[a].size() && subscript) {
          out.columns[inputs + a].AppendInt(static_cast<int64_t>(i) + 1);
        } else if (i < elements[a].size()) {
          out.columns[inputs + a].AppendValue(elements[a][i]);
        } else {
          out.columns[inputs + a].AppendNull();
        }
      }
      if (node.with_ordinality) {
        out.columns[inputs + arrays.size()].AppendInt(static_cast<int64_t>(i) + 1);
      }
      out.ops.push_back(op);
    }
  }
  return out;
}

}  // namespace stave::executor
