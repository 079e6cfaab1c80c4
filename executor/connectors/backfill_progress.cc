#include "executor/connectors/backfill_progress.h"

#include <spdlog/spdlog.h>

namespace stave::executor {
namespace {

// How often a running backfill logs its progress.
constexpr std::chrono::seconds kLogInterval{5};
// Rows between two refinements of the total's estimate (and looks at the clock).
constexpr uint64_t kRowsPerUpdate = 4096;

int64_t Nanoseconds(std::chrono::steady_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

}  // namespace

std::string_view BackfillStateName(BackfillStatus::State state) {
  switch (state) {
    case BackfillStatus::State::kPending:
      return "pending";
    case BackfillStatus::State::kRunning:
      return "running";
    case BackfillStatus::State::kDone:
      return "done";
  }
  return "pending";
}

void BackfillProgress::Start(uint64_t approximate_bytes) {
  approximate_bytes_ = approximate_bytes;
  bytes_seen_ = 0;
  rows_.store(0, std::memory_order_relaxed);
  total_estimate_.store(0, std::memory_order_relaxed);
  Clock::time_point now = Clock::now();
  next_log_ = now + kLogInterval;
  started_ns_.store(Nanoseconds(now), std::memory_order_relaxed);
  state_.store(static_cast<int>(BackfillStatus::State::kRunning), std::memory_order_release);
  spdlog::info("backfill of {} started (about {} bytes of rows)", what_, approximate_bytes);
}

void BackfillProgress::Row(size_t bytes) {
  bytes_seen_ += bytes;
  uint64_t rows = rows_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (rows % kRowsPerUpdate != 0) return;
  // Rows so far times the bytes not read yet over the bytes per row so far.
  uint64_t estimate = approximate_bytes_ > bytes_seen_
                          ? rows + (approximate_bytes_ - bytes_seen_) * rows / bytes_seen_
                          : rows;
  total_estimate_.store(estimate, std::memory_order_relaxed);
  Clock::time_point now = Clock::now();
  if (now >= next_log_) {
    next_log_ = now + kLogInterval;
    spdlog::info("backfill of {}: {} of about {} rows", what_, rows, estimate);
  }
}

void BackfillProgress::Finish() {
  uint64_t rows = rows_.load(std::memory_order_relaxed);
  total_estimate_.store(rows, std::memory_order_relaxed);
  Clock::time_point now = Clock::now();
  finished_ns_.store(Nanoseconds(now), std::memory_order_relaxed);
  state_.store(static_cast<int>(BackfillStatus::State::kDone), std::memory_order_release);
  double seconds =
      static_cast<double>(Nanoseconds(now) - started_ns_.load(std::memory_order_relaxed)) / 1e9;
  spdlog::info("backfill of {} done: {} rows in {:.3f} s", what_, rows, seconds);
}

void BackfillProgress::MarkDone() {
  state_.store(static_cast<int>(BackfillStatus::State::kDone), std::memory_order_release);
}

BackfillStatus BackfillProgress::status() const {
  BackfillStatus status;
  status.state = static_cast<BackfillStatus::State>(state_.load(std::memory_order_acquire));
  status.rows_done = rows_.load(std::memory_order_relaxed);
  status.rows_total = total_estimate_.load(std::memory_order_relaxed);
  int64_t started = started_ns_.load(std::memory_order_relaxed);
  if (status.state != BackfillStatus::State::kPending && started != 0) {
    int64_t finished = finished_ns_.load(std::memory_order_relaxed);
    int64_t end = finished != 0 ? finished : Nanoseconds(Clock::now());
    status.seconds = static_cast<double>(end - started) / 1e9;
  }
  return status;
}

}  // namespace stave::executor
