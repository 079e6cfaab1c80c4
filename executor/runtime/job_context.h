#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/runtime/scheduler.h"
#include "storage/store.h"

namespace stave::executor {

/// What one task of a job hands to the checkpoint coordinator when a barrier has passed
/// through it: its share of the epoch's write batch.
struct BarrierReport {
  uint32_t job_id = 0;
  uint64_t epoch = 0;
  std::unique_ptr<storage::EpochBatch> batch;
  /// The CPU time the task spent on the barrier: its operators' OnBarrier and FinishBarrier.
  std::chrono::nanoseconds cpu{0};
  /// From a reader of a view's change log: the log and the first record it still needs.
  std::optional<std::pair<uint32_t, uint64_t>> retained_log;
};

/// Receives the tasks' barrier reports; the engine's checkpoint coordinator. Thread-safe:
/// tasks call it from the workers.
class EpochCollector {
 public:
  virtual ~EpochCollector() = default;
  virtual void OnBarrierPassed(BarrierReport report) = 0;
  /// An empty batch for a task's changes of `epoch`; `reserved_bytes`: room for a batch
  /// about as large as the task's last one.
  virtual std::unique_ptr<storage::EpochBatch> NewBatch(uint64_t epoch, int64_t time,
                                                        size_t reserved_bytes) {
    return std::make_unique<storage::EpochBatch>(epoch, time, reserved_bytes);
  }
  /// A job stopped on an error: it will not report again.
  virtual void OnJobFailed(uint32_t job_id, const std::string& error) = 0;
};

/// What the tasks of one job share: who collects their barriers, and whether the job was
/// cancelled (dropped, shutting down) or failed. Thread-safe.
class JobContext {
 public:
  JobContext(uint32_t job_id, std::string name) : job_id_(job_id), name_(std::move(name)) {}

  uint32_t job_id() const { return job_id_; }
  const std::string& name() const { return name_; }

  void set_collector(EpochCollector* collector) { collector_ = collector; }
  EpochCollector* collector() const { return collector_; }

  /// Whether the job's tasks should stop (cancelled or failed).
  bool stopping() const {
    return cancelled_.load(std::memory_order_acquire) || failed_.load(std::memory_order_acquire);
  }
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  std::string error() const {
    std::lock_guard lock(mutex_);
    return error_;
  }

  /// Marks the job failed (the first error wins), tells the collector and wakes the tasks
  /// so they stop.
  void Fail(const std::string& error);
  /// Stops every task and returns once none runs any more.
  void Cancel();

  /// Registers a task before it is spawned.
  void AddTask(std::shared_ptr<Task> task) { tasks_.push_back(std::move(task)); }
  const std::vector<std::shared_ptr<Task>>& tasks() const { return tasks_; }
  /// Called by a task as its Poll returns kDone.
  void TaskDone();
  /// Called once the tasks are spawned.
  void TasksStarted() { live_tasks_.store(tasks_.size(), std::memory_order_release); }

  /// Rows moved since the last call (the engine skips checkpoints that change nothing).
  bool TakeProgress() { return progress_.exchange(false, std::memory_order_acq_rel); }
  void NoteProgress() { progress_.store(true, std::memory_order_release); }

 private:
  void WakeAll();

  const uint32_t job_id_;
  const std::string name_;
  EpochCollector* collector_ = nullptr;
  std::vector<std::shared_ptr<Task>> tasks_;  // Set before the tasks run.
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> failed_{false};
  std::atomic<bool> progress_{false};
  std::atomic<size_t> live_tasks_{0};
  mutable std::mutex mutex_;
  std::condition_variable all_done_;
  std::string error_;  // GUARDED_BY(mutex_)
};

/// A task of a job: it stops for good once the job is cancelled or failed, and an error in
/// its work (an overflow, a corrupt record) fails the whole job instead of the process.
class JobTask : public Task {
 public:
  explicit JobTask(JobContext* job) : job_(job) {}
  PollResult Poll() final;

 protected:
  /// One slice of the task's own work.
  virtual PollResult PollSlice() = 0;

  JobContext* job_;
};

}  // namespace stave::executor
