#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "executor/connectors/source_reader.h"
#include "executor/runtime/job_context.h"
#include "executor/runtime/outbox.h"

namespace stave::executor {

/// The task that reads a job's source and routes its rows into the job's first exchange.
/// Barriers enter the dataflow here: the coordinator asks for one, and the task injects it
/// between two chunks once the source has read what the checkpoint must cover, recording
/// the source's position in the epoch's batch.
class SourceTask : public JobTask {
 public:
  struct Counters {
    std::atomic<uint64_t>* rows_in = nullptr;      ///< Rows read for this job.
    std::atomic<uint64_t>* stream_rows = nullptr;  ///< Rows read, counted on the stream.
    std::atomic<uint64_t>* bad_records = nullptr;  ///< Records the source could not decode.
    std::atomic<uint64_t>* late_rows = nullptr;    ///< Rows dropped below the watermark.
    /// Bytes read for this job and on the stream: the records' payloads if the reader knows
    /// them (SourceReader::payload_bytes), else the rows' estimate (Chunk::EstimatedBytes).
    std::atomic<uint64_t>* bytes_in = nullptr;
    std::atomic<uint64_t>* stream_bytes = nullptr;
  };

  /// `throttle`, while true, pauses reading (the engine's hard memory cap); may be null.
  /// `position_name`: the name of its position in the checkpoint (a job with several
  /// sources, a join's, names each).
  SourceTask(JobContext* job, std::unique_ptr<SourceReader> reader, std::unique_ptr<Outbox> outbox,
             Counters counters, const std::atomic<bool>* throttle,
             std::string position_name = std::string(kPositionName));

  /// The name of a job's (first) source's position in the checkpoint (recovery seeks back
  /// to it).
  static constexpr std::string_view kPositionName = "source";
  const std::string& position_name() const { return position_name_; }

  SourceReader* reader() { return reader_.get(); }
  Outbox* outbox() { return outbox_.get(); }
  /// Also pauses reading while `*flag` is true (a sink's target lagging behind); barriers
  /// still pass. Before the task runs.
  void PauseWhile(const std::atomic<bool>* flag) { paused_while_.push_back(flag); }

  /// Asks for the barrier of `epoch` once the source has read `targets`. Thread-safe.
  void RequestBarrier(uint64_t epoch, SourceTargets targets, int64_t time = 0);

 protected:
  PollResult PollSlice() override;

 private:
  struct BarrierRequest {
    uint64_t epoch;
    SourceTargets targets;
    int64_t time;
  };
  /// Injects the requested barrier if the source has read far enough.
  void MaybeInjectBarrier();
  /// Adds the bytes of the last Poll (which returned `chunk`) to the byte counters.
  void CountBytes(const Chunk& chunk);
  /// Whether reading pauses now: the engine's throttle or a PauseWhile flag.
  bool Paused() const;

  std::unique_ptr<SourceReader> reader_;
  std::unique_ptr<Outbox> outbox_;
  Counters counters_;
  const std::atomic<bool>* throttle_;
  std::vector<const std::atomic<bool>*> paused_while_;
  std::string position_name_;
  bool finished_ = false;
  // The reader's count of bad records when last looked at (counters_ gets the difference).
  std::optional<uint64_t> bad_records_seen_;
  std::optional<uint64_t> late_rows_seen_;  // The same for late rows.
  uint64_t payload_bytes_seen_ = 0;         // The reader's payload bytes when last looked at.
  // Read in the current epoch, written with its barrier.
  std::vector<DeadLetter> dead_letters_;
  mutable std::mutex mutex_;
  std::optional<BarrierRequest> request_;  // GUARDED_BY(mutex_)
};

}  // namespace stave::executor
