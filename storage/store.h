#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "common/status.h"

namespace stave::storage {

/// A state table's writes of one epoch, sorted by key, each key once, left in the memory the
/// table wrote them into. StateTable::FlushTo hands them to the epoch's batch by reference:
/// the commit reads them from there, where copying them into the task's batch and then into
/// the epoch's combined batch cost two copies of every byte, and fresh pages for both.
struct StateRun {
  struct Entry {
    std::string_view key;  // The state key, without its prefix (section, table, virtual node).
    std::string_view value;
    uint16_t virtual_node = 0;
    bool deleted = false;
  };
  uint32_t table_id = 0;
  std::vector<Entry> entries;
  size_t bytes = 0;  // Of the full keys and the values, as the commit writes them.
  std::shared_ptr<const void> memory;  // Keeps the keys' and values' bytes alive.

  /// Appends the full RocksDB key of `entry` to `out`.
  void AppendFullKey(const Entry& entry, std::string* out) const;
  /// The bytes of a full key's prefix (section, table id, virtual node).
  static constexpr size_t kPrefixBytes = 7;
};

/// Changes written to RocksDB together, atomically: all of them survive a crash or none.
/// Not thread-safe.
class WriteBatch {
 public:
  /// `reserved_bytes`: room made at once, for a batch about as large as one before it.
  explicit WriteBatch(size_t reserved_bytes = 0) : batch_(reserved_bytes) {}

  /// `key` is the full state key built by StateTable (section, table, virtual node, key).
  void PutState(std::string_view key, std::string_view value);
  void DeleteState(std::string_view key);
  /// Adds a state table's sorted writes, as if each were written here now, after the changes
  /// written before it.
  void AddStateRun(std::shared_ptr<const StateRun> run);
  /// Removes every row of the state tables in [first, end) (a dropped object's tables).
  void DeleteStateTables(uint32_t first_table_id, uint32_t end_table_id);

  /// A server setting changed by ALTER SYSTEM, kept for later starts.
  void PutSetting(std::string_view name, std::string_view value);

  void PutCatalogEntry(uint32_t object_id, std::string_view entry);
  void DeleteCatalogEntry(uint32_t object_id);
  void PutNextObjectId(uint64_t next_id);

  /// Records a source's read position; `owner` is the job reading it.
  void PutSourcePosition(uint32_t owner, std::string_view name, std::string_view position);
  void DeleteSourcePositions(uint32_t owner);

  /// Appends record `sequence` to a table's log (the changes of one DML commit).
  void PutTableLogRecord(uint32_t table_id, uint64_t sequence, std::string_view record);
  void DeleteTableLog(uint32_t table_id);
  /// Deletes a log's records below `sequence` (no reader needs them any more).
  void DeleteTableLogBelow(uint32_t table_id, uint64_t sequence);

  /// Keeps a record that a source could not decode (its stream's on_error = 'dead_letter'),
  /// keyed by where it was read: a replay of the epoch writes the same key again, so a
  /// record is never stored twice, however many jobs read the stream.
  /// A login role (a user) and its entry (JSON: password verifiers, LOGIN), by name.
  void PutRole(std::string_view name, std::string_view entry);
  void DeleteRole(std::string_view name);

  void PutDeadLetter(uint32_t stream_id, int32_t partition, int64_t offset,
                     std::string_view record);
  void DeleteDeadLetters(uint32_t stream_id);

  /// Appends every change of `parts`, in order, as if each had been written into this
  /// batch directly: how the parallel tasks' deltas of one epoch become its one commit.
  void Append(const std::vector<const WriteBatch*>& parts);

  /// The bytes the batch writes, its state runs' included.
  size_t ByteSize() const { return batch_.GetDataSize() + run_bytes_; }
  /// The bytes of the changes written into the batch itself (its state runs' excluded).
  size_t RecordBytes() const { return batch_.GetDataSize(); }
  size_t Count() const { return static_cast<size_t>(batch_.Count()) + run_entries_; }

  /// Removes every change, keeping the memory they took.
  void Clear();
  /// The bytes the batch holds without growing.
  size_t Capacity() const { return batch_.Data().capacity(); }

  /// A state run and its place among the batch's records: after the first `position`.
  struct PlacedRun {
    std::shared_ptr<const StateRun> run;
    size_t position = 0;
  };
  /// The state runs, by position.
  const std::vector<PlacedRun>& state_runs() const { return runs_; }
  /// Calls `records` for each change written into the batch itself and `run` for each state
  /// run, in batch order: a run before the record at its position, so that a record written
  /// after a run overrides it, and a range deletion drops the runs before it only.
  rocksdb::Status ForEachChange(rocksdb::WriteBatch::Handler* records,
                                const std::function<void(const StateRun&)>& run) const;
  /// The batch's changes as one RocksDB batch, its state runs written in at their places.
  rocksdb::WriteBatch WithRunsWrittenIn() const;

 private:
  friend class Store;

  std::optional<uint64_t> next_object_id_;
  rocksdb::WriteBatch batch_;
  std::vector<PlacedRun> runs_;
  size_t run_bytes_ = 0;
  size_t run_entries_ = 0;
};

/// Everything one checkpoint changes, gathered while the barrier of epoch `epoch` passes
/// through the dataflow, then written by Store::Commit as one synced write. That write is
/// the checkpoint's commit point.
class EpochBatch : public WriteBatch {
 public:
  explicit EpochBatch(uint64_t epoch, int64_t time = 0, size_t reserved_bytes = 0)
      : WriteBatch(reserved_bytes), epoch_(epoch), time_(time) {}
  uint64_t epoch() const { return epoch_; }
  /// Empties the batch for epoch `epoch`, keeping its memory.
  void Reuse(uint64_t epoch, int64_t time) {
    Clear();
    epoch_ = epoch;
    time_ = time;
  }
  /// The epoch's processing time (microseconds since 2000-01-01 UTC, as a timestamptz): when
  /// the coordinator injected its barrier. What now() is in a view from this epoch on.
  int64_t time() const { return time_; }

 private:
  uint64_t epoch_;
  int64_t time_;
};

/// Epoch batches whose memory serves again. A task's batch of one epoch is about as large as
/// its next, and a batch written into fresh memory pays the kernel's zeroing of each page at
/// its first write, every epoch. Thread-safe: the tasks take batches, the coordinator gives
/// them back once their epoch has committed.
class EpochBatchPool {
 public:
  /// An empty batch for `epoch`, recycled if one is free; a new one has room for
  /// `reserved_bytes`.
  std::unique_ptr<EpochBatch> Take(uint64_t epoch, int64_t time, size_t reserved_bytes);
  void GiveBack(std::unique_ptr<EpochBatch> batch);

 private:
  // Kept at most: as many as the tasks of a few jobs, none of an unusual size (a backfill's).
  static constexpr size_t kMaxBatches = 64;
  static constexpr size_t kMaxBatchBytes = size_t{64} << 20;
  std::mutex mutex_;
  std::vector<std::unique_ptr<EpochBatch>> free_;  // GUARDED_BY(mutex_)
};

/// A consistent read-only view of everything committed up to one epoch: ad-hoc SELECTs read
/// all views through one Snapshot, so they see them at the same point in time. Keeps the
/// RocksDB snapshot, and the database it belongs to, alive while it exists (a reopen after a
/// storage failure waits for it). REQUIRES: the Store outlives it.
class Snapshot {
 public:
  ~Snapshot();
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  uint64_t epoch() const { return epoch_; }

  /// Calls `visit(key, value)` for every row of a state table in key order (within a virtual
  /// node), `key` without the table prefix. Stops early when `visit` returns false.
  Status ScanStateTable(
      uint32_t table_id,
      const std::function<bool(std::string_view key, std::string_view value)>& visit) const;
  /// The same, for the rows whose key (as ScanStateTable shows it) starts with `prefix`.
  Status ScanStateTable(
      uint32_t table_id, std::string_view prefix,
      const std::function<bool(std::string_view key, std::string_view value)>& visit) const;

  /// The value of one row of a state table, by its key as ScanStateTable shows it (the
  /// virtual node, then the state key); nullopt when there is no such row.
  Result<std::optional<std::string>> GetStateTableRow(uint32_t table_id,
                                                      std::string_view key) const;

 private:
  friend class Store;
  Snapshot(std::shared_ptr<rocksdb::DB> db, const rocksdb::Snapshot* snapshot, uint64_t epoch)
      : db_(std::move(db)), snapshot_(snapshot), epoch_(epoch) {}
  std::shared_ptr<rocksdb::DB> db_;
  const rocksdb::Snapshot* snapshot_;
  uint64_t epoch_;
};

/// The embedded RocksDB database under a data directory. Thread-safe: sessions read
/// snapshots while the engine commits epochs.
class Store {
 public:
  /// Opens (creating if needed) the database in `directory`. The database then holds
  /// exactly the last committed epoch: uncommitted changes never reach RocksDB.
  static Result<std::unique_ptr<Store>> Open(const std::string& directory);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  /// The last committed epoch, 0 for a new database.
  uint64_t committed_epoch() const { return committed_epoch_.load(std::memory_order_acquire); }
  uint64_t next_object_id() const { return next_object_id_; }
  /// CPU time RocksDB's compactions have taken since the store opened, in microseconds.
  uint64_t compaction_cpu_micros() const {
    return compaction_cpu_micros_->load(std::memory_order_relaxed);
  }

  /// Writes `batch` synced, together with `committed_epoch = batch.epoch()`.
  /// REQUIRES: batch.epoch() > committed_epoch(); called by one thread at a time.
  Status Commit(EpochBatch* batch);

  /// A small synced write, to learn whether the data directory takes writes again after a
  /// failure (it resumes RocksDB first if the failure left it read-only, and reopens it if
  /// RocksDB will not resume).
  Status CheckWritable();
  /// Writes `batch` synced, outside any epoch: a table's acknowledged writes are durable
  /// before the client hears of them.
  Status WriteDurably(WriteBatch* batch);

  /// The sequence number the next record of a table's log gets (0 for an empty log).
  Result<uint64_t> NextTableLogSequence(uint32_t table_id) const;
  /// Calls `visit(sequence, record)` for a table's log records from `from` on, in order,
  /// until it returns false. Reads the latest data.
  Status ReadTableLog(uint32_t table_id, uint64_t from,
                      const std::function<bool(uint64_t, std::string_view)>& visit) const;

  /// Writes a consistent copy of the database into the new directory `target` and returns
  /// the epoch it holds: every committed epoch up to that one and every durable table write
  /// made before the call. Files are hard-linked where `target` is on the same file system,
  /// copied otherwise. The copy is built beside `target` and renamed into place once
  /// complete, so `target` never holds a partial copy. Starting a server on `target`
  /// restores it. REQUIRES: `target` does not exist and its parent directory does.
  Result<uint64_t> Backup(const std::string& target);

  /// A snapshot of the latest committed epoch. Fails only while the database is closed
  /// after a storage failure it could not be reopened from yet.
  Result<std::shared_ptr<const Snapshot>> NewSnapshot() const;

  /// Reads one committed state row by its full key (see StateTable).
  Result<std::optional<std::string>> GetState(std::string_view full_key) const;
  /// Calls `visit(key, value)` for every committed state row whose full key starts with
  /// `full_prefix`, in key order, `key` without the prefix, until it returns false.
  Status ScanState(std::string_view full_prefix,
                   const std::function<bool(std::string_view, std::string_view)>& visit) const;

  /// All catalog entries, ordered by object id.
  Result<std::vector<std::pair<uint32_t, std::string>>> LoadCatalogEntries() const;

  /// All roles stored by PutRole, as (name, entry), ordered by name.
  Result<std::vector<std::pair<std::string, std::string>>> LoadRoles() const;

  /// A setting stored by PutSetting, or nullopt.
  Result<std::optional<std::string>> GetSetting(std::string_view name) const;

  /// A source position recorded by PutSourcePosition, or nullopt if none was committed.
  Result<std::optional<std::string>> GetSourcePosition(uint32_t owner, std::string_view name) const;

  /// Calls `visit(stream id, partition, offset, record)` for every dead letter, in key order,
  /// until it returns false.
  Status ScanDeadLetters(
      const std::function<bool(uint32_t, int32_t, int64_t, std::string_view)>& visit) const;

  /// Approximate bytes of state on disk (for metrics).
  uint64_t ApproximateSize() const;
  /// Approximate bytes of the state tables with ids in [first_table_id, end_table_id), on disk
  /// and in memtables. RocksDB estimates the memtables' share from the shape of its skip list,
  /// which can be far off either way (0 for megabytes of rows). Where that share could decide
  /// whether the total passes `decisive_bytes` (a limit), it is counted instead, by reading
  /// the range's entries in the memtables: at most the memtables' size, and only near the
  /// limit.
  uint64_t ApproximateStateTablesSize(uint32_t first_table_id, uint32_t end_table_id,
                                      uint64_t decisive_bytes = UINT64_MAX) const;

 private:
  Store(std::string directory, std::unique_ptr<rocksdb::Env> env)
      : directory_(std::move(directory)), env_(std::move(env)) {}
  Status OpenDatabase();
  Status LoadMeta(rocksdb::DB* db);
  // Calls `visit(key, value)` for the latest committed keys starting with `prefix`, from the
  // first at or after `from`, in key order, `key` without the prefix, until it returns false.
  // `what` names the read in an error.
  Status ScanLatest(
      std::string_view prefix, std::string_view from, std::string_view what,
      const std::function<bool(std::string_view key, std::string_view value)>& visit) const;
  // The open database, held for the caller's use: a reopen waits until no one holds the
  // old one. Null while the database is closed (a reopen failed; the next write retries it).
  std::shared_ptr<rocksdb::DB> Pin() const;
  // Closes and reopens the database once nothing holds it (RocksDB's own recovery of a
  // write-ahead log, as at a start), when a storage failure left RocksDB unable to resume.
  Status Reopen(std::string_view what);
  // Writes `batch` synced. After a failed write RocksDB refuses every write until resumed:
  // the next write resumes it first (or reopens it), so writing works again once the disk
  // does.
  Status WriteSynced(rocksdb::WriteBatch* batch, std::string_view what);
  // Commits an epoch's batch as one ingested file (storage/epoch_file.h), as durably and
  // atomically as WriteSynced.
  Status IngestSynced(const WriteBatch& batch, uint64_t epoch);
  // After a failed write: checks that the disk takes writes again, then has RocksDB resume
  // or reopens it. OK when no write failed.
  Status RecoverFromWriteFailure(std::string_view what);

  const std::string directory_;
  std::unique_ptr<rocksdb::Env> env_;  // RocksDB's files, through NewFailpointFileSystem.
  mutable std::mutex db_mutex_;        // Guards db_ (the pointer; RocksDB is thread-safe).
  std::shared_ptr<rocksdb::DB> db_;
  std::atomic<bool> write_failed_{false};
  // Held by Commit and Backup: a backup holds exactly the epoch it reports.
  std::mutex commit_mutex_;
  std::atomic<uint64_t> committed_epoch_{0};
  uint64_t next_object_id_ = 1;
  // Added to by a listener of every compaction; shared with it, so it outlives any reopen.
  std::shared_ptr<std::atomic<uint64_t>> compaction_cpu_micros_ =
      std::make_shared<std::atomic<uint64_t>>(0);
};

/// Key sections (see storage/README.md).
namespace key_section {
inline constexpr char kMeta = 0x01;
inline constexpr char kCatalog = 0x02;
inline constexpr char kState = 0x03;
inline constexpr char kSourcePosition = 0x04;
inline constexpr char kTableLog = 0x05;
inline constexpr char kDeadLetter = 0x06;
inline constexpr char kRole = 0x07;
}  // namespace key_section

}  // namespace stave::storage
