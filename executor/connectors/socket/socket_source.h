#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "executor/connectors/source_reader.h"
#include "planner/catalog.h"
#include "planner/connector_spec.h"

namespace stave::executor {

/// A `socket` stream's options, as Flink's socket text stream has them: 'host' and 'port'
/// of a TCP server that sends newline-separated text. The stream has one text column.
struct SocketOptions {
  std::string host;
  uint16_t port = 0;
  /// Throws SqlError 22023 naming the offending option, or 42P16 for the columns.
  static SocketOptions Parse(const std::map<std::string, std::string>& options,
                             const std::vector<planner::Column>& columns);
};

/// Reads lines from a TCP server. A thread of its own connects (again and again, with
/// backoff, while the server is away: creating the stream never fails because nothing
/// listens yet) and queues the lines it reads; Poll takes them. A socket cannot be rewound,
/// so the position is empty: after a crash, lines read since the last checkpoint are lost.
/// The delivery analysis says so, and refuses exactly-once and at-least-once sinks over it.
class SocketSource : public SourceReader {
 public:
  explicit SocketSource(SocketOptions options);
  ~SocketSource() override;
  SocketSource(const SocketSource&) = delete;
  SocketSource& operator=(const SocketSource&) = delete;

  PollStatus Poll(size_t max_rows, Chunk* chunk,
                  std::chrono::steady_clock::time_point* wake_at) override;
  std::string Position() const override { return ""; }
  std::optional<uint64_t> payload_bytes() const override { return payload_bytes_; }
  Status Seek(std::string_view position) override {
    (void)position;
    return Status::Ok();
  }

  /// Lines longer than this are cut into pieces of this size.
  static constexpr size_t kMaxLineBytes = size_t{1} << 20;
  /// Lines queued before the reader stops reading (TCP then holds the sender back).
  static constexpr size_t kMaxQueuedLines = 64 * 1024;

 private:
  void Run();
  /// Reads from a connected socket until it closes or Stop. Returns false on stop.
  bool ReadLines(int fd);
  void Enqueue(std::string line);

  SocketOptions options_;
  uint64_t payload_bytes_ = 0;  // Of the lines taken, with their line ends.
  std::thread thread_;          // Started by the first Poll, so planning never connects.
  std::mutex mutex_;
  std::condition_variable space_;
  std::deque<std::string> lines_;  // GUARDED_BY(mutex_)
  std::atomic<bool> stopping_{false};
};

/// The planner-facing description of the connector.
planner::ConnectorSpec SocketConnectorSpec();

}  // namespace stave::executor
