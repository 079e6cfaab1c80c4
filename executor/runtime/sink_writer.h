#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "executor/connectors/sink_target.h"
#include "storage/row_codec.h"
#include "storage/store.h"

namespace stave::executor {

/// What a sink keeps in each checkpoint besides the epochs it owes: its generation (which
/// run prepared a transaction), the transaction it prepared last, and whether it is paused.
struct SinkRecord {
  /// Its name among the positions the checkpoint keeps for the sink's job.
  static constexpr std::string_view kPositionName = "sink";

  uint64_t generation = 0;
  uint64_t prepared_epoch = 0;  ///< 0: none.
  std::string prepared_id;
  bool paused = false;

  std::string Encode() const;
  /// nullopt if malformed.
  static std::optional<SinkRecord> Decode(std::string_view bytes);
  bool operator==(const SinkRecord& other) const = default;
};

/// What the system table and SHOW SINKS say about a running sink.
struct SinkStatus {
  std::string state;             ///< "running", "retrying", "failed", "paused".
  uint64_t committed_epoch = 0;  ///< Last checkpoint that holds the sink's share.
  uint64_t finished_epoch = 0;   ///< Last epoch the target has.
  uint64_t owed_epochs = 0;      ///< Committed epochs the target does not have yet.
  std::string last_error;
};

/// The side of a sink that talks to its target, on a thread of its own so that a slow or
/// absent target never blocks the dataflow's workers or the checkpoints of other jobs.
///
/// The protocol, per epoch e:
/// - Pre-commit (two-phase targets): at e's barrier, the sink operator asks to prepare e's
///   changes. That succeeds only if every earlier epoch is finished (a prepared transaction
///   holds its row locks, so e+1 is written only after e is committed). On success the
///   prepared id goes into e's checkpoint; otherwise the changes do, as owed.
/// - After e's checkpoint commits: COMMIT PREPARED, or deliver the owed changes of e (read
///   back from the checkpoint) in one transaction with the sink's progress record.
/// - Recovery: transactions an earlier run prepared are committed if their checkpoint
///   committed and rolled back otherwise; owed epochs the target has not finished (by its
///   progress record) are delivered, in order.
/// Failures reconnect and retry with backoff; epochs wait in the checkpoint meanwhile.
/// Thread-safe.
class SinkWriter {
 public:
  /// `log_id`: the store log holding the sink's owed epochs (its object id). `recovered`:
  /// the sink's record from the last checkpoint (default for a new sink). `rows_delivered`
  /// (optional) counts the changes this run made durable in the target.
  SinkWriter(uint32_t log_id, std::string name, std::unique_ptr<SinkTarget> target,
             const storage::Store* store, storage::RowTypes types, SinkRecord recovered,
             std::atomic<uint64_t>* rows_delivered = nullptr);
  ~SinkWriter();
  SinkWriter(const SinkWriter&) = delete;
  SinkWriter& operator=(const SinkWriter&) = delete;

  /// Starts the thread. `committed_epoch`: the last committed checkpoint.
  void Start(uint64_t committed_epoch);
  /// Stops the thread (a transaction it left prepared is resolved at the next start).
  void Stop();
  /// DROP SINK: stops the thread, then removes the sink's traces from the target. Returns
  /// why that failed, or an empty string.
  std::string DropTarget();

  /// True while the target lags behind: kOwedEpochsToPause epochs or more wait for it. The
  /// sink's sources pause meanwhile, so a slow or unreachable target slows the sink's input
  /// instead of filling checkpoints with owed rows; barriers, and checkpoints, go on.
  const std::atomic<bool>* lagging() const { return &lagging_; }
  static constexpr size_t kOwedEpochsToPause = 3;

  bool two_phase() const { return target_->two_phase(); }
  bool discards() const { return target_->discards(); }
  uint32_t log_id() const { return log_id_; }
  /// The generation of this run: the recovered one plus one.
  uint64_t generation() const { return generation_; }

  /// Two-phase: asks to prepare `epoch`'s `count` changes. `done` is called (on the writer's
  /// thread, or at once) with the prepared id, or nullopt if the epoch must be owed
  /// instead.
  void RequestPrepare(uint64_t epoch, std::shared_ptr<const SinkEpochChanges> changes,
                      uint64_t count, std::function<void(std::optional<std::string>)> done);
  /// The changes of `epoch` are owed: its checkpoint holds them. `changes` is the same data
  /// in memory (`count` changes), which the writer keeps (within a budget) to deliver
  /// without reading the checkpoint back; `bytes` is its size.
  void NoteOwed(uint64_t epoch, std::shared_ptr<const SinkEpochChanges> changes = nullptr,
                uint64_t count = 0, size_t bytes = 0);
  /// A checkpoint committed.
  void OnEpochCommitted(uint64_t epoch);

  /// The last epoch the target has finished.
  uint64_t finished_epoch() const;
  /// The record the next checkpoint should hold.
  SinkRecord record() const;
  void SetPaused(bool paused);
  SinkStatus status() const;

  /// An owed record (the layout of a change record) of `changes` (one part).
  static std::string EncodeOwed(const Chunk& changes, const storage::RowTypes& types);
  /// Changes per owed record: an epoch of any size is kept and delivered in parts of this
  /// many (the parts a large epoch is staged in).
  static constexpr size_t kChangesPerRecord = 4096;
  /// Memory for owed epochs kept to deliver without reading them back.
  static constexpr size_t kOwedMemoryBytes = size_t{128} << 20;

 private:
  struct PrepareRequest {
    uint64_t epoch;
    std::shared_ptr<const SinkEpochChanges> changes;
    uint64_t count;
    std::function<void(std::optional<std::string>)> done;
  };

  void Run();
  /// One round of work against the target. Throws on a target failure.
  void Step(std::unique_lock<std::mutex>* lock);
  /// Streams an owed epoch's changes from the store.
  SinkChangeBatches OwedChanges(uint64_t epoch) const;
  /// How many changes an owed epoch has.
  uint64_t CountOwed(uint64_t epoch) const;
  /// Whether `epoch` (of `changes` changes) must be owed rather than prepared: the sink is
  /// stopping or paused, an earlier epoch is still owed, or it is too large for one
  /// transaction. REQUIRES: mutex_ held.
  bool MustOwe(uint64_t epoch, size_t changes) const;
  /// Sets lagging_ from the owed epochs. REQUIRES: mutex_ held.
  void UpdateLagging();
  void CountDelivered(uint64_t changes) {
    if (rows_delivered_) rows_delivered_->fetch_add(changes, std::memory_order_relaxed);
  }
  /// Answers a pending prepare request with "owe it".
  void RefusePrepare(std::unique_lock<std::mutex>* lock);

  const uint32_t log_id_;
  const std::string name_;
  // Used by the thread only, but for max_changes_per_transaction (immutable).
  std::unique_ptr<SinkTarget> target_;
  const storage::Store* store_;
  const storage::RowTypes types_;
  uint64_t generation_;
  std::atomic<uint64_t>* const rows_delivered_;
  std::atomic<bool> lagging_{false};
  // Changes in the transaction this run prepared (record_.prepared_id), counted as delivered
  // once it commits. Used by the thread only.
  uint64_t prepared_changes_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;    // GUARDED_BY(mutex_)
  bool connected_ = false;   // GUARDED_BY(mutex_)
  uint64_t committed_ = 0;   // GUARDED_BY(mutex_)
  uint64_t finished_ = 0;    // GUARDED_BY(mutex_)
  std::set<uint64_t> owed_;  // GUARDED_BY(mutex_)
  struct OwedInMemory {
    std::shared_ptr<const SinkEpochChanges> changes;
    uint64_t count;
    size_t bytes;
  };
  std::map<uint64_t, OwedInMemory> owed_in_memory_;  // GUARDED_BY(mutex_)
  size_t owed_memory_bytes_ = 0;                     // GUARDED_BY(mutex_)
  SinkRecord record_;                                // GUARDED_BY(mutex_)
  bool prepared_pending_ = false;                    // GUARDED_BY(mutex_): record_'s not committed
  std::optional<PrepareRequest> prepare_;            // GUARDED_BY(mutex_)
  std::chrono::steady_clock::time_point retry_at_;   // GUARDED_BY(mutex_)
  std::chrono::milliseconds backoff_{0};             // GUARDED_BY(mutex_)
  std::string state_ = "running";                    // GUARDED_BY(mutex_)
  std::string last_error_;                           // GUARDED_BY(mutex_)
  std::thread thread_;
};

}  // namespace stave::executor
