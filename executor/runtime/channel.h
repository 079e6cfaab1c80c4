#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "executor/chunk.h"
#include "executor/runtime/scheduler.h"

namespace stave::executor {

/// What flows between the tasks of a dataflow: changelog rows, the barrier that closes an
/// epoch, or a watermark (no later row will carry an event time below it).
struct Message {
  enum class Kind : uint8_t { kChunk, kBarrier, kWatermark };
  Kind kind = Kind::kChunk;
  Chunk chunk;             ///< kChunk.
  uint64_t epoch = 0;      ///< kBarrier: the epoch the barrier closes.
  int64_t epoch_time = 0;  ///< kBarrier: the epoch's processing time (EpochBatch::time).
  int64_t watermark = 0;   ///< kWatermark: event time in microseconds.

  static Message Rows(Chunk rows) {
    Message message;
    message.chunk = std::move(rows);
    return message;
  }
  static Message Barrier(uint64_t epoch, int64_t epoch_time = 0) {
    Message message;
    message.kind = Kind::kBarrier;
    message.epoch = epoch;
    message.epoch_time = epoch_time;
    return message;
  }
  static Message Watermark(int64_t watermark) {
    Message message;
    message.kind = Kind::kWatermark;
    message.watermark = watermark;
    return message;
  }
};

/// A bounded queue from one producer task to one consumer task. It never blocks: a full
/// channel refuses the push and wakes the producer once the consumer has taken a message;
/// a push into an empty channel wakes the consumer. So backpressure travels upstream
/// hop by hop, down to the source, without holding any worker. Thread-safe.
class Channel {
 public:
  static constexpr size_t kDefaultCapacity = 8;

  explicit Channel(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  /// Set once, before either task runs.
  void Connect(std::weak_ptr<Task> producer, std::weak_ptr<Task> consumer) {
    producer_ = std::move(producer);
    consumer_ = std::move(consumer);
  }

  /// Appends `*message` (moving it) unless the channel is full; then it returns false,
  /// leaves `*message` alone and wakes the producer when there is room again.
  bool TryPush(Message* message);
  /// The oldest message, if any.
  std::optional<Message> TryPop();
  /// Whether a message is waiting (the consumer may not pop it yet: barrier alignment).
  bool HasMessage() const;

 private:
  static void WakeTask(const std::weak_ptr<Task>& task);

  const size_t capacity_;
  std::weak_ptr<Task> producer_;
  std::weak_ptr<Task> consumer_;
  mutable std::mutex mutex_;
  std::deque<Message> queue_;      // GUARDED_BY(mutex_)
  bool producer_waiting_ = false;  // GUARDED_BY(mutex_)
};

}  // namespace stave::executor
