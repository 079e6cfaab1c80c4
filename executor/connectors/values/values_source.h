#pragma once

#include <memory>

#include "executor/connectors/source_reader.h"
#include "planner/logical_plan.h"

namespace stave::executor {

/// The rows of a VALUES list (for a node without rows: one row with no columns), computed
/// now. Shared by the batch engine and ValuesSource.
Chunk ValuesRows(const planner::ValuesNode& node);

/// A view's constant relation (VALUES): its rows once, then nothing. The position says
/// whether they were delivered, so a view restarted from a checkpoint after them does not
/// see them twice, and one restarted from before them sees them again.
class ValuesSource : public SourceReader {
 public:
  explicit ValuesSource(std::shared_ptr<const planner::ValuesNode> node) : node_(std::move(node)) {}

  PollStatus Poll(size_t max_rows, Chunk* chunk,
                  std::chrono::steady_clock::time_point* wake_at) override;
  std::string Position() const override { return delivered_ ? "delivered" : ""; }
  Status Seek(std::string_view position) override;
  bool CaughtUp(const SourceTargets& targets) const override {
    (void)targets;
    return delivered_;
  }

 private:
  std::shared_ptr<const planner::ValuesNode> node_;
  bool delivered_ = false;
};

}  // namespace stave::executor
