#pragma once

#include <functional>

#include "executor/chunk.h"
#include "storage/store.h"

namespace stave::executor {

/// A step of a streaming dataflow. Chunks are pushed in; results are pushed to the
/// downstream operator. A barrier passes through every operator in order: each writes
/// its state delta for the epoch into the batch, then forwards the barrier, so the batch
/// holds the state of every operator after exactly the same input prefix.
/// Not thread-safe: an operator instance is driven by one task at a time.
class StreamOperator {
 public:
  virtual ~StreamOperator() = default;

  void set_downstream(StreamOperator* downstream) { downstream_ = downstream; }

  /// Called once before the first chunk, after the job's state was recovered. May emit
  /// (a global aggregate emits its initial row when it has no state yet).
  virtual void Start() {}

  virtual void OnChunk(Chunk chunk) = 0;

  /// A chunk from input `side` of an operator with several inputs (a join: 0 left, 1
  /// right). Only the first operator of a stage has several inputs.
  virtual void OnInputChunk(size_t side, Chunk chunk) {
    (void)side;
    OnChunk(std::move(chunk));
  }

  /// Bytes of state this operator holds for the current epoch (uncommitted buffers): what
  /// the engine's memory budget counts.
  virtual size_t BufferedBytes() const { return 0; }

  /// Event time reached `watermark`: no later input row carries an event time below it.
  /// Operators that wait on event time (a window that closes) act here, then forward it.
  virtual void OnWatermark(int64_t watermark) {
    if (downstream_) downstream_->OnWatermark(watermark);
  }

  /// Input `side`'s own watermark reached `watermark` (for an operator with several inputs;
  /// called before OnWatermark with the minimum over all inputs). A join forgets the rows
  /// of one side that no row still to come from the other side can meet.
  virtual void OnInputWatermark(size_t side, int64_t watermark) {
    (void)side;
    (void)watermark;
  }

  /// Writes this epoch's state delta into `batch`, then forwards the barrier.
  virtual void OnBarrier(storage::EpochBatch* batch) {
    if (downstream_) downstream_->OnBarrier(batch);
  }

  /// For the last operator of a dataflow: whether, after OnBarrier, it still finishes its
  /// share of the epoch in the background (a sink pre-committing to its target). Its task
  /// then reads no input until FinishBarrier; `wake` (set by the task) is called once the
  /// operator is ready for it.
  virtual bool BarrierPending() const { return false; }
  /// Completes the share of the epoch that OnBarrier started. REQUIRES: !BarrierPending().
  virtual void FinishBarrier(storage::EpochBatch* batch) { (void)batch; }
  void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }

 protected:
  void Emit(Chunk chunk) {
    if (!chunk.empty() && downstream_) downstream_->OnChunk(std::move(chunk));
  }

  StreamOperator* downstream_ = nullptr;
  std::function<void()> wake_;
};

}  // namespace stave::executor
