#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace stave::executor {

/// How far a reader's backfill (its input's existing rows, read from a snapshot before it
/// follows the input's log) has come: what the admin API, stave_catalog.progress and the log
/// show of a new view over existing data.
struct BackfillStatus {
  enum class State { kPending, kRunning, kDone };
  State state = State::kPending;
  uint64_t rows_done = 0;
  /// An estimate while running (the snapshot's approximate bytes over the bytes per row seen
  /// so far; 0 while unknown), exact once done.
  uint64_t rows_total = 0;
  double seconds = 0;  ///< Since the backfill started (its whole duration once done).
};

/// "pending", "running" or "done".
std::string_view BackfillStateName(BackfillStatus::State state);

/// Tracks one backfill for a reader: the reader's thread reports each row, any thread may
/// read the status. Logs the start, progress every few seconds, and the end.
class BackfillProgress {
 public:
  /// `what`: the backfill in words, for the log ("table orders for view totals").
  explicit BackfillProgress(std::string what) : what_(std::move(what)) {}

  /// The scan starts over `approximate_bytes` of stored rows (0 if unknown).
  void Start(uint64_t approximate_bytes);
  /// One row of `bytes` (its stored key and value) was read.
  void Row(size_t bytes);
  void Finish();
  /// A reader resuming after the backfill (recovered past it) has nothing to do.
  void MarkDone();

  BackfillStatus status() const;

 private:
  using Clock = std::chrono::steady_clock;

  const std::string what_;
  std::atomic<int> state_{0};  // BackfillStatus::State
  std::atomic<uint64_t> rows_{0};
  std::atomic<uint64_t> total_estimate_{0};
  std::atomic<int64_t> started_ns_{0};   // Clock ticks, as nanoseconds since its epoch.
  std::atomic<int64_t> finished_ns_{0};  // 0 until done.
  // The reader's thread only.
  uint64_t approximate_bytes_ = 0;
  uint64_t bytes_seen_ = 0;
  Clock::time_point next_log_;
};

}  // namespace stave::executor
