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
///
/// An outbox may feed several downstream stages (the branches of a stage whose output
/// several parts of a query read): one route each, with its own partitioner and channels.
class Outbox {
 public:
  /// One downstream stage: how rows are split among its instances, and a channel to each.
  struct Route {
    Partitioner partitioner;
    std::vector<std::shared_ptr<Channel>> channels;
  };

  Outbox(Partitioner partitioner, std::vector<std::shared_ptr<Channel>> channels);
  explicit Outbox(std::vector<Route> routes);

  /// Routes the rows of `chunk` to the instances of route `route` that own their keys.
  void Send(Chunk chunk, size_t route = 0);
  /// Sends `message` (a barrier, a watermark) to every instance of every route, after what
  /// is queued.
  void Broadcast(const Message& message);
  /// Pushes what is queued. True if nothing is left (the channels then wake this task).
  bool Flush();

  /// Every route's channels, route after route.
  const std::vector<std::shared_ptr<Channel>>& channels() const { return channels_; }

  /// Rows routed so far. Readable from any thread (the admin API's rates).
  uint64_t rows_sent() const { return rows_sent_.load(std::memory_order_relaxed); }
  /// Their estimated bytes (Chunk::EstimatedBytes). Readable from any thread.
  uint64_t bytes_sent() const { return bytes_sent_.load(std::memory_order_relaxed); }
  /// Whether the last Flush left messages behind: a downstream channel is full, so this
  /// task is backpressured. Readable from any thread.
  bool blocked() const { return blocked_.load(std::memory_order_relaxed); }

 private:
  std::vector<Partitioner> partitioners_;  // Per route.
  std::vector<size_t> first_channel_;      // Per route: its first channel in channels_.
  std::atomic<uint64_t> rows_sent_{0};
  std::atomic<uint64_t> bytes_sent_{0};
  std::atomic<bool> blocked_{false};
  std::vector<std::shared_ptr<Channel>> channels_;
  std::vector<std::deque<Message>> pending_;  // Per channel.
};

/// The last operator of a chain that feeds an exchange: its output goes to an Outbox's
/// route `route`.
class OutboxOperator : public StreamOperator {
 public:
  explicit OutboxOperator(Outbox* outbox, size_t route = 0) : outbox_(outbox), route_(route) {}
  void OnChunk(Chunk chunk) override { outbox_->Send(std::move(chunk), route_); }
  void OnBarrier(storage::EpochBatch*) override {}  // The task sends the barrier itself.

 private:
  Outbox* outbox_;
  size_t route_;
};

}  // namespace stave::executor
