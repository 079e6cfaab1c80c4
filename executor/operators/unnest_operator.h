#pragma once

#include <memory>

#include "executor/operators/stream_operator.h"
#include "planner/logical_plan.h"

namespace stave::executor {

/// `unnest`: one output row per array element of each input row (planner::UnnestNode).
/// Stateless: the rows an input row expands to depend on that row alone, so a deleted row
/// retracts exactly the rows its insert produced by expanding it again. An update pair may
/// expand to different numbers of rows, so updates go out as deletes and inserts.
class UnnestOperator : public StreamOperator {
 public:
  explicit UnnestOperator(std::shared_ptr<const planner::UnnestNode> node)
      : node_(std::move(node)) {}

  void OnChunk(Chunk chunk) override { Emit(Apply(*node_, chunk)); }

  /// The expansion itself, shared with the batch engine.
  static Chunk Apply(const planner::UnnestNode& node, const Chunk& chunk);

 private:
  std::shared_ptr<const planner::UnnestNode> node_;
};

}  // namespace stave::executor
