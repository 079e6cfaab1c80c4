#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/sql_error.h"
#include "executor/job.h"
#include "executor/metrics.h"
#include "executor/runtime/job_context.h"
#include "executor/runtime/scheduler.h"
#include "storage/store.h"

namespace stave::executor {

/// One committed checkpoint, as the history keeps it.
struct CheckpointRecord {
  uint64_t epoch = 0;
  std::chrono::system_clock::time_point started;
  std::chrono::microseconds duration{0};  ///< From the barrier to the synced commit.
  /// Of the duration, the synced write of the epoch's batch (or file), once every task has
  /// reported its part: what the disk's synced write rate bounds.
  std::chrono::microseconds write{0};
  uint64_t bytes = 0;  ///< Size of the epoch's write batch.
  /// CPU time the checkpoint cost: the dataflow tasks' barrier work (operators writing
  /// their state, emitting the epoch's changes), and the coordinator's commit (the batch,
  /// the epoch file, the write).
  std::chrono::microseconds barrier_cpu{0};
  std::chrono::microseconds commit_cpu{0};

  /// What the admin API and stave_catalog.checkpoints show as its state: the history holds
  /// committed checkpoints only.
  static constexpr std::string_view kState = "committed";

  /// A time above in milliseconds, as the admin API and stave_catalog.checkpoints show it.
  static double Milliseconds(std::chrono::microseconds time) {
    return static_cast<double>(time.count()) / 1000.0;
  }
};

/// The running jobs, by view id. Changed only on the coordinator thread.
using JobSet = std::map<uint32_t, std::unique_ptr<Job>>;

/// Runs every materialized view's dataflow on a pool of worker threads and checkpoints
/// them. Its coordinator thread injects a barrier into every job's source every
/// `checkpoint_interval` (and on demand); once the barrier has passed through every task of
/// every job, their state deltas, source positions and the epoch number are committed as
/// one synced RocksDB write batch, while the tasks go on with the next epoch. Catalog
/// changes ride in the same batch as the epoch they belong to.
/// Thread-safe: sessions call ApplyChange/Checkpoint concurrently.
class Engine : private EpochCollector {
 public:
  /// `checkpoint_interval` of zero: checkpoints only on demand (and at shutdown).
  /// `state_memory` bounds the uncommitted state the jobs hold: past it the engine takes the
  /// next checkpoint early, past twice it the sources pause until a checkpoint has emptied
  /// the buffers (0: no bound). `workers`: threads running the dataflows (0: one per core).
  Engine(storage::Store* store, Metrics* metrics, std::chrono::milliseconds checkpoint_interval,
         size_t state_memory = 0, size_t workers = 0);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Where each table's log ends now (what every reader may need at most). With it, the
  /// engine deletes at each checkpoint the log records no reader needs any more, also of
  /// tables no view reads (future readers backfill from a snapshot). Set before Start.
  void set_log_heads(std::function<SourceTargets()> log_heads) {
    log_heads_ = std::move(log_heads);
  }

  /// Builds every job anew, recovered at the last committed epoch but not started: how the
  /// engine comes back after a failed checkpoint without a restart of the process. Called
  /// on the coordinator thread. Set before Start; without it a storage failure stops the
  /// engine for good.
  void set_rebuild_jobs(std::function<JobSet()> rebuild_jobs) {
    rebuild_jobs_ = std::move(rebuild_jobs);
  }

  /// Starts the jobs (recovered from the catalog) and the coordinator.
  void Start(JobSet jobs);
  /// Commits a final checkpoint, then stops the jobs and the threads. Idempotent.
  void Stop();

  /// A change to the set of jobs plus what it writes to the epoch batch (catalog entries,
  /// deleted state). Runs on the coordinator thread just before the epoch's barrier is
  /// injected; jobs it adds start then (their first barrier is this epoch's), jobs it
  /// removes are stopped. Must not throw.
  using Change = std::function<void(JobSet* jobs, storage::EpochBatch* batch)>;

  /// Applies `change` at the next barrier and returns once its epoch has committed.
  /// Throws SqlError if the engine cannot commit (a storage failure).
  void ApplyChange(Change change);

  /// Forces a checkpoint and returns once an epoch has committed in which every job has
  /// read its sources at least up to `targets` (the table writes acknowledged before).
  void Checkpoint(const SourceTargets& targets = {});

  /// Tells the engine that a source has new data (a table write committed).
  void Wake();

  /// Why a view's job stopped, if it did: a runtime error (XX000, or its own SQLSTATE), or
  /// its state passing view_state_limit (54000).
  std::optional<SqlError> JobError(uint32_t job_id) const;

  /// The most committed state a job (a view's or a sink's dataflow) may hold, as RocksDB
  /// estimates the size of its state tables after each checkpoint; past it the job stops
  /// with a 54000 error, at its last committed epoch. 0: no limit.
  void set_view_state_limit(uint64_t bytes) { view_state_limit_.store(bytes); }
  uint64_t view_state_limit() const { return view_state_limit_.load(); }
  /// The jobs stopped for passing view_state_limit.
  std::set<uint32_t> JobsOverStateLimit() const;

  /// Why the last checkpoint failed, while the engine waits for storage to work again.
  std::optional<Status> storage_failure() const;

  /// The pool's worker threads: the default parallelism of new views.
  size_t workers() const { return scheduler_->workers(); }
  /// True while the sources must pause (uncommitted state past the hard cap); jobs poll it.
  const std::atomic<bool>* throttle() const { return &throttle_; }

  void set_checkpoint_interval(std::chrono::milliseconds interval);
  std::chrono::milliseconds checkpoint_interval() const;

  /// CPU time all checkpoints since the start cost, as CheckpointRecord counts it.
  struct CheckpointCpu {
    std::chrono::microseconds barrier{0};
    std::chrono::microseconds commit{0};
  };
  CheckpointCpu checkpoint_cpu() const {
    return {std::chrono::microseconds(barrier_cpu_micros_.load(std::memory_order_relaxed)),
            std::chrono::microseconds(commit_cpu_micros_.load(std::memory_order_relaxed))};
  }

  /// The most recent checkpoints, oldest first (at most kCheckpointHistory).
  std::vector<CheckpointRecord> CheckpointHistory() const;
  static constexpr size_t kCheckpointHistory = 1000;

  /// Every running job's dataflow graph and counters, by job id.
  std::vector<JobGraph> DescribeJobs() const;

 private:
  struct Request {
    Change change;          // Empty for a plain checkpoint request.
    SourceTargets targets;  // What each source must have read when it injects the barrier.
    std::promise<void> done;
  };

  void Run();
  /// Commits one epoch with the requests' changes. Returns false if the commit failed.
  bool CommitEpoch(std::vector<std::unique_ptr<Request>>* requests);
  /// Injects the barrier of `epoch` (starting the jobs a change added) and waits until
  /// every task of every running job reported it. Returns the reports of the jobs that did
  /// not fail.
  std::vector<BarrierReport> CollectBarrier(uint64_t epoch, const SourceTargets& targets);
  void Submit(std::unique_ptr<Request> request);
  void StopJobs();
  /// After a failed commit: stops every job (they stay listed, with the failure as their
  /// error), then retries with backoff until a synced write succeeds, and restarts the jobs
  /// from the last committed epoch. Returns false if the engine is stopping meanwhile.
  bool RecoverFromStorageFailure();
  /// Stops every job whose committed state passed view_state_limit.
  void EnforceStateLimit();
  /// Fails the requests waiting for a commit with the storage failure.
  void FailRequests(std::vector<std::unique_ptr<Request>>* requests, const Status& failure);

  // EpochCollector, called by the tasks.
  void OnBarrierPassed(BarrierReport report) override;
  std::unique_ptr<storage::EpochBatch> NewBatch(uint64_t epoch, int64_t time,
                                                size_t reserved_bytes) override {
    return batches_.Take(epoch, time, reserved_bytes);
  }
  void OnJobFailed(uint32_t job_id, const std::string& error) override;

  storage::Store* store_;
  Metrics* metrics_;
  size_t state_memory_;
  std::unique_ptr<Scheduler> scheduler_;
  std::atomic<bool> throttle_{false};  // Pauses the sources: past the hard memory cap.
  // Changed by the coordinator only; it reads without the lock, Wake() reads under it.
  mutable std::mutex jobs_mutex_;
  JobSet jobs_;
  bool dirty_ = false;  // Coordinator only: rows moved since the last commit.
  std::map<uint32_t, uint64_t> truncated_logs_;  // Coordinator only: log → kept from.
  std::function<SourceTargets()> log_heads_;
  std::function<JobSet()> rebuild_jobs_;

  std::mutex collect_mutex_;
  std::condition_variable collected_;
  uint64_t collecting_epoch_ = 0;       // GUARDED_BY(collect_mutex_)
  int64_t epoch_time_ = 0;              // Of the last barrier (coordinator thread).
  std::vector<BarrierReport> reports_;  // GUARDED_BY(collect_mutex_)
  storage::EpochBatchPool batches_;     // The tasks' batches and the commits', back after it.
  size_t last_commit_bytes_ = 0;        // Coordinator only: the last commit batch's own records.
  std::map<uint32_t, size_t> reported_tasks_;  // GUARDED_BY(collect_mutex_)

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::unique_ptr<Request>> pending_;  // GUARDED_BY(mutex_)
  bool stopping_ = false;                          // GUARDED_BY(mutex_)
  std::optional<Status> failure_;                  // GUARDED_BY(mutex_)
  std::chrono::milliseconds checkpoint_interval_;  // GUARDED_BY(mutex_)
  std::map<uint32_t, SqlError> job_errors_;        // GUARDED_BY(mutex_)
  std::set<uint32_t> over_state_limit_;            // GUARDED_BY(mutex_)
  std::atomic<uint64_t> view_state_limit_{0};
  std::deque<CheckpointRecord> history_;  // GUARDED_BY(mutex_)
  std::atomic<uint64_t> barrier_cpu_micros_{0};
  std::atomic<uint64_t> commit_cpu_micros_{0};
  std::thread thread_;

  std::atomic<uint64_t>* checkpoints_total_;
  std::atomic<int64_t>* committed_epoch_gauge_;
  Histogram* checkpoint_duration_;
  std::atomic<int64_t>* checkpoint_bytes_;
  std::atomic<uint64_t>* early_checkpoints_;
  std::atomic<int64_t>* buffered_bytes_;
  std::atomic<uint64_t>* throttled_total_;
  std::atomic<uint64_t>* storage_failures_total_;
  std::atomic<uint64_t>* storage_recoveries_total_;
};

}  // namespace stave::executor
