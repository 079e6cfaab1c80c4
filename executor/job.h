#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/connectors/source_reader.h"
#include "executor/operators/stream_operator.h"
#include "storage/store.h"

namespace stave::executor {

/// The running dataflow of one materialized view: its own reader of the stream (each view
/// reads from the stream's start, independently of other views) and a chain of operators
/// ending in the view's rows. Driven by the engine thread.
class Job {
 public:
  struct Counters {
    std::atomic<uint64_t>* rows_in = nullptr;      ///< Rows read from the source.
    std::atomic<uint64_t>* stream_rows = nullptr;  ///< Rows read, counted on the stream.
  };

  /// `operators` in dataflow order; the last one is the view's materialization.
  Job(uint32_t id, std::string name, std::unique_ptr<SourceReader> source,
      std::vector<std::unique_ptr<StreamOperator>> operators, Counters counters);

  uint32_t id() const { return id_; }
  const std::string& name() const { return name_; }

  /// Seeks the source to its committed position (if any) and starts the operators.
  /// Throws SqlError if the committed position cannot be read.
  void Recover(const storage::Store& store);

  enum class StepResult { kProgress, kIdle, kFinished, kFailed };
  /// Moves one chunk from the source through the operators. When idle, `wake_at` says when
  /// the source expects more.
  StepResult Step(std::chrono::steady_clock::time_point* wake_at);

  /// Writes this epoch's state deltas and the source position into `batch` (the barrier
  /// passing through the job). A failed job writes nothing: its committed state stays.
  void Checkpoint(storage::EpochBatch* batch);

  /// Whether the job has read everything `targets` asks of its source (a failed or
  /// finished job has read all it ever will).
  bool CaughtUp(const SourceTargets& targets) const {
    return failed_ || finished_ || source_->CaughtUp(targets);
  }

  /// Turns the change log of this job's view on or off (on while views read it).
  void set_log_changes(bool on);

  /// The change log this job reads, if any, and the first record it still needs.
  std::optional<std::pair<uint32_t, uint64_t>> RetainedLog() const {
    return source_->RetainedLog();
  }

  /// Bytes of uncommitted state the job's operators hold.
  size_t BufferedBytes() const;

  bool failed() const { return failed_; }
  /// Why the job failed (a runtime error such as an overflow), empty while it runs.
  const std::string& error() const { return error_; }

 private:
  uint32_t id_;
  std::string name_;
  std::unique_ptr<SourceReader> source_;
  std::vector<std::unique_ptr<StreamOperator>> operators_;
  Counters counters_;
  bool finished_ = false;
  bool failed_ = false;
  std::string error_;
};

}  // namespace stave::executor
