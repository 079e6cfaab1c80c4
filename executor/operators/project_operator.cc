#include "executor/operators/project_operator.h"

#include "executor/expression_evaluator.h"

namespace stave::executor {

Chunk ProjectOperator::Apply(const std::vector<planner::BoundExprPtr>& expressions, Chunk chunk) {
  Chunk out;
  out.columns.reserve(expressions.size());
  for (const auto& expression : expressions) out.columns.push_back(Evaluate(*expression, chunk));
  out.ops = std::move(chunk.ops);
  return out;
}

void ProjectOperator::OnChunk(Chunk chunk) { Emit(Apply(expressions_, std::move(chunk))); }

}  // namespace stave::executor
