#include "executor/operators/filter_operator.h"

#include "executor/expression_evaluator.h"

namespace stave::executor {

Chunk FilterOperator::Apply(const planner::BoundExpr& predicate, Chunk chunk) {
  std::vector<uint8_t> keep = EvaluatePredicate(predicate, chunk);
  for (size_t i = 0; i + 1 < chunk.size(); ++i) {
    if (chunk.ops[i] != RowOp::kUpdateDelete || chunk.ops[i + 1] != RowOp::kUpdateInsert) continue;
    if (keep[i] && !keep[i + 1]) chunk.ops[i] = RowOp::kDelete;
    if (!keep[i] && keep[i + 1]) chunk.ops[i + 1] = RowOp::kInsert;
    ++i;
  }
  size_t kept = 0;
  for (uint8_t k : keep) kept += k;
  if (kept == chunk.size()) return chunk;
  return chunk.Select(keep);
}

void FilterOperator::OnChunk(Chunk chunk) { Emit(Apply(*predicate_, std::move(chunk))); }

}  // namespace stave::executor
