#pragma once

#include <memory>

#include "executor/operators/stream_operator.h"
#include "planner/logical_plan.h"

namespace stave::executor {

/// TUMBLE and HOP: copies each row once per event-time window its time falls in, adding the
/// window's start and end. A row of HOP lands in size / slide windows; an update pair whose
/// rows land in several windows would no longer be adjacent, so updates go out as a delete
/// and an insert.
class TimeWindowOperator : public StreamOperator {
 public:
  explicit TimeWindowOperator(std::shared_ptr<const planner::TimeWindowNode> node)
      : node_(std::move(node)) {}

  void OnChunk(Chunk chunk) override { Emit(Apply(*node_, chunk)); }

  /// The window assignment itself, shared with the batch engine.
  static Chunk Apply(const planner::TimeWindowNode& node, const Chunk& chunk);

 private:
  std::shared_ptr<const planner::TimeWindowNode> node_;
};

}  // namespace stave::executor
