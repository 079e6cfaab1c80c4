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
#include <string>
#include <thread>
#include <vector>

#include "executor/job.h"
#include "executor/metrics.h"
#include "storage/store.h"

namespace stave::executor {

/// One committed checkpoint, as the history keeps it.
struct CheckpointRecord {
  uint64_t epoch = 0;
  std::chrono::system_clock::time_point started;
  std::chrono::microseconds duration{0};  ///< From the barrier to the synced commit.
  uint64_t bytes = 0;                     ///< Size of the epoch's write batch.
};

/// The running jobs, by view id. Touched only on the engine thread.
using JobSet = std::map<uint32_t, std::unique_ptr<Job>>;

/// Runs every materialized view's dataflow on one thread and checkpoints them: every
/// `checkpoint_interval` (and on demand) a barrier passes through all jobs at once, and
/// their state deltas, source positions and the epoch number are committed as one synced
/// RocksDB write batch. Catalog changes ride in the same batch as the epoch they belong to.
/// After each commit a snapshot of the committed epoch is published for ad-hoc SELECTs.
/// Thread-safe: sessions call ApplyChange/Checkpoint/snapshot concurrently.
class Engine {
 public:
  /// `checkpoint_interval` of zero: checkpoints only on demand (and at shutdown).
  /// `state_memory` bounds the uncommitted state the jobs hold: past it the engine takes the
  /// next checkpoint early (0: no bound).
  Engine(storage::Store* store, Metrics* metrics, std::chrono::milliseconds checkpoint_interval,
         size_t state_memory = 0);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Starts the engine thread with `jobs` (recovered from the catalog).
  void Start(JobSet jobs);
  /// Commits a final checkpoint, then stops the thread. Idempotent.
  void Stop();

  /// A change to the set of jobs plus what it writes to the epoch batch (catalog entries,
  /// deleted state). Runs on the engine thread between chunks; must not throw.
  using Change = std::function<void(JobSet* jobs, storage::EpochBatch* batch)>;

  /// Applies `change` at the next barrier and returns once its epoch has committed.
  /// Throws SqlError if the engine cannot commit (a storage failure).
  void ApplyChange(Change change);

  /// Forces a checkpoint and returns once an epoch has committed in which every job has
  /// read its sources at least up to `targets` (the table writes acknowledged before).
  void Checkpoint(const SourceTargets& targets = {});

  /// Tells the engine that a source has new data (a table write committed).
  void Wake();

  /// The snapshot of the last committed epoch.
  std::shared_ptr<const storage::Snapshot> snapshot() const;

  /// Why a view's job stopped, if it did.
  std::optional<std::string> JobError(uint32_t job_id) const;

  void set_checkpoint_interval(std::chrono::milliseconds interval);
  std::chrono::milliseconds checkpoint_interval() const;

  /// The most recent checkpoints, oldest first (at most kCheckpointHistory).
  std::vector<CheckpointRecord> CheckpointHistory() const;
  static constexpr size_t kCheckpointHistory = 1000;

 private:
  struct Request {
    Change change;          // Empty for a plain checkpoint request.
    SourceTargets targets;  // What the jobs must have read before the commit.
    std::promise<void> done;
  };

  void Run();
  /// Commits one epoch with the requests' changes. Returns false if the commit failed.
  bool CommitEpoch(std::vector<std::unique_ptr<Request>>* requests);
  void Submit(std::unique_ptr<Request> request);

  storage::Store* store_;
  Metrics* metrics_;
  size_t state_memory_;
  JobSet jobs_;         // Engine thread only.
  bool dirty_ = false;  // Engine thread only: jobs changed state since the last commit.
  std::map<uint32_t, uint64_t> truncated_logs_;  // Engine thread only: view log → kept from.

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::unique_ptr<Request>> pending_;      // GUARDED_BY(mutex_)
  bool stopping_ = false;                              // GUARDED_BY(mutex_)
  bool woken_ = false;                                 // GUARDED_BY(mutex_)
  std::optional<std::string> failure_;                 // GUARDED_BY(mutex_)
  std::chrono::milliseconds checkpoint_interval_;      // GUARDED_BY(mutex_)
  std::shared_ptr<const storage::Snapshot> snapshot_;  // GUARDED_BY(mutex_)
  std::map<uint32_t, std::string> job_errors_;         // GUARDED_BY(mutex_)
  std::deque<CheckpointRecord> history_;               // GUARDED_BY(mutex_)
  std::thread thread_;

  std::atomic<uint64_t>* checkpoints_total_;
  std::atomic<int64_t>* committed_epoch_gauge_;
  std::atomic<int64_t>* checkpoint_duration_us_;
  std::atomic<int64_t>* checkpoint_bytes_;
  std::atomic<uint64_t>* early_checkpoints_;
  std::atomic<int64_t>* buffered_bytes_;
};

}  // namespace stave::executor
