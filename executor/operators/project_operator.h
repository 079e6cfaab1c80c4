#pragma once

#include <vector>

#include "executor/operators/stream_operator.h"
#include "planner/bound_expression.h"

namespace stave::executor {

/// Computes one output column per expression; the row operations pass through unchanged.
class ProjectOperator : public StreamOperator {
 public:
  explicit ProjectOperator(std::vector<planner::BoundExprPtr> expressions)
      : expressions_(std::move(expressions)) {}

  void OnChunk(Chunk chunk) override;

  /// The projection itself, shared with the batch engine.
  static Chunk Apply(const std::vector<planner::BoundExprPtr>& expressions, Chunk chunk);

 private:
  std::vector<planner::BoundExprPtr> expressions_;
};

}  // namespace stave::executor
