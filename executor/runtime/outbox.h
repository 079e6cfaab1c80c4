#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "executor/operators/stream_operator.h"
#include "executor/runtime/channel.h"
#include "executor/runtime/partitioner.h"

namespace stave::executor {

/// The sending end of a hash exchange, owned by one task: routes chunks to the downstream
/// instances' channels and holds what a full channel refused until Flush succeeds. A task
/// reads no more input while its outbox holds anything, so what waits here stays small
/// (the output of one input chunk).
class Outbox {
 public:
  Outbox(Partitioner partitioner, std::vector<std::shared_ptr<Channel>> channels);

  /// Routes the rows of `chunk` to the instances that own their keys.
  void Send(Chunk chunk);
  /// Sends `message` (a barrier, a watermark) to every instance, after what is queued.
  void Broadcast(const Message& message);
  /// Pushes what is queued. True if nothing is left (the channels then wake this task).
  bool Flush();

  const std::vector<std::shared_ptr<Channel>>& channels() const { return channels_; }

  /// Rows routed so far. Readable from any thread (the admin API's rates).
  uint64_t rows_sent() const { return rows_sent_.load(std::memory_order_relaxed); }
  /// Their estimated bytes (Chunk::EstimatedBytes). Readable from any thread.
  uint64_t bytes_sent() const { return bytes_sent_.load(std::memory_order_relaxed); }
  /// Whether the last Flush left messages behind: a downstream channel is full, so this
  /// task is backpressured. Readable from any thread.
  bool blocked() const { return blocked_.load(std::memory_order_relaxed); }

 private:
  Partitioner partitioner_;
  std::atomic<uint64_t> rows_sent_{0};
  std::atomic<uint64_t> bytes_sent_{0};
  std::atomic<bool> blocked_{false};
  std::vector<std::shared_ptr<Channel>> channels_;
  std::vector<std::deque<Message>> pending_;  // Per channel.
};

/// The last operator of a chain that feeds an exchange: its output goes to an Outbox.
class OutboxOperator : public StreamOperator {
 public:
  explicit OutboxOperator(Outbox* outbox) : outbox_(outbox) {}
  void OnChunk(Chunk chunk) override { outbox_->Send(std::move(chunk)); }
  void OnBarrier(storage::EpochBatch*) override {}  // The task sends the barrier itself.

 private:
  Outbox* outbox_;
};

}  // namespace stave::executor
