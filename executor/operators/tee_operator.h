#pragma once

#include <utility>
#include <vector>

#include "executor/operators/stream_operator.h"

namespace stave::executor {

/// Hands what reaches it to several chains of operators: the end of a subplan that several
/// parts of a query read (planner/shared_subplans.h), each reader's chain a branch of the
/// stage. Barriers and watermarks reach every branch, in branch order.
class TeeOperator : public StreamOperator {
 public:
  /// Adds a branch: `head` is its first operator. Before the first chunk.
  void AddBranch(StreamOperator* head) { branches_.push_back(head); }

  void OnChunk(Chunk chunk) override {
    if (chunk.empty()) return;
    for (size_t i = 0; i + 1 < branches_.size(); ++i) branches_[i]->OnChunk(chunk);
    branches_.back()->OnChunk(std::move(chunk));
  }
  void OnWatermark(int64_t watermark) override {
    for (StreamOperator* branch : branches_) branch->OnWatermark(watermark);
  }
  void OnBarrier(storage::EpochBatch* batch) override {
    for (StreamOperator* branch : branches_) branch->OnBarrier(batch);
  }

 private:
  std::vector<StreamOperator*> branches_;
};

}  // namespace stave::executor
