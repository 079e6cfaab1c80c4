#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "executor/operators/stream_operator.h"
#include "executor/runtime/channel.h"
#include "executor/runtime/job_context.h"
#include "executor/runtime/outbox.h"

namespace stave::executor {

/// One parallel instance of a chain of operators: it takes messages from one channel per
/// upstream instance, pushes chunks through its operators, and sends their output into the
/// next exchange (or, at the end of the dataflow, nowhere: the last operator materializes).
///
/// Barriers are aligned: once the barrier of an epoch arrives on an input, that input is
/// not read again until the barrier has arrived on every input. Then the operators write
/// their state for the epoch into a batch of their own, which goes to the coordinator, and
/// the barrier moves on. So each instance's batch holds its state after exactly the rows
/// before the barrier. Watermarks are merged: an instance's watermark is the minimum over
/// its inputs.
class OperatorTask : public JobTask {
 public:
  /// `operators` in dataflow order, already chained; `outbox` is null for the last stage.
  OperatorTask(JobContext* job, std::vector<std::unique_ptr<StreamOperator>> operators,
               std::unique_ptr<Outbox> outbox);

  /// Adds an input channel; `side` says which input of the first operator it feeds (a
  /// join's left 0 or right 1). Barriers align over all channels of all sides.
  void AddInput(std::shared_ptr<Channel> channel, size_t side = 0);
  Outbox* outbox() { return outbox_.get(); }
  const std::vector<std::unique_ptr<StreamOperator>>& operators() const { return operators_; }

  /// Uncommitted state bytes of the operators, as of the end of the last slice.
  size_t buffered_bytes() const { return buffered_bytes_.load(std::memory_order_relaxed); }
  /// Row changes received so far, over all inputs. Readable from any thread.
  uint64_t rows_in() const { return rows_in_.load(std::memory_order_relaxed); }
  /// The estimated bytes of those rows (Chunk::EstimatedBytes).
  uint64_t bytes_in() const { return bytes_in_.load(std::memory_order_relaxed); }

 protected:
  PollResult PollSlice() override;

 private:
  struct Input {
    std::shared_ptr<Channel> channel;
    size_t side = 0;
    bool at_barrier = false;  // Holds until every input reached the barrier.
    int64_t watermark = INT64_MIN;
  };

  /// Handles one message from input `index`.
  void Handle(size_t index, Message message);
  void PassBarrier(uint64_t epoch);
  /// Finishes the last operator's barrier work (REQUIRES: none pending), then sends the
  /// epoch's report and lets the inputs go on past the barrier.
  void CompleteBarrier();

  std::vector<std::unique_ptr<StreamOperator>> operators_;
  std::unique_ptr<Outbox> outbox_;
  std::vector<Input> inputs_;
  size_t next_input_ = 0;  // Inputs are read in turn, for fairness.
  size_t inputs_at_barrier_ = 0;
  uint64_t barrier_epoch_ = 0;
  int64_t barrier_time_ = 0;  // The aligning barrier's epoch time.
  // The bytes of the last epoch's batch: the next one starts with that much room rather
  // than growing to it by doubling, a copy and fresh pages at every step.
  size_t last_batch_bytes_ = 0;
  int64_t watermark_ = INT64_MIN;
  int64_t side_watermarks_[2] = {INT64_MIN, INT64_MIN};  // Per input side of the first operator.
  std::atomic<size_t> buffered_bytes_{0};
  std::atomic<uint64_t> rows_in_{0};
  std::atomic<uint64_t> bytes_in_{0};
  /// The report of a barrier the last operator is still finishing (BarrierPending).
  std::optional<BarrierReport> pending_report_;
};

}  // namespace stave::executor
