#include "storage/store.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include <spdlog/spdlog.h>

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>

#include "storage/data_directory.h"
#include "storage/epoch_file.h"
#include "storage/failpoint_file_system.h"

#include "storage/key_codec.h"

namespace stave::storage {
namespace {

constexpr std::string_view kCommittedEpochName = "committed_epoch";
constexpr std::string_view kNextObjectIdName = "next_object_id";
constexpr uint64_t kMaxWalBytes = uint64_t{32} << 20;
constexpr size_t kHintPrefixBytes = 7;  // Section, table id, virtual node.
// An epoch of at least this many bytes, or entries, commits as an ingested file rather than
// a write (storage/epoch_file.h). Below both, a file per epoch would only multiply small
// files. A write's cost follows its entries (each is a memtable insert, about 4 us here),
// a file's its bytes, plus a few syncs: 100K entries of 52 bytes take 0.43 s as a synced
// write and 0.1 s as a file (engine_bench's baselines), and the two meet near 8K entries.
constexpr size_t kIngestBytes = size_t{8} << 20;
constexpr size_t kIngestEntries = 16384;
// The name of an epoch's file while it is written, in the data directory. A crash may leave
// one behind: the next start removes it.
constexpr std::string_view kEpochFileSuffix = ".epoch-sst";

// `full_disk`: which disk ran out of space, should it be ENOSPC (RocksDB's NoSpace).
Status FromRocks(const rocksdb::Status& status, std::string_view what,
                 std::string_view full_disk = "the data directory's disk is full") {
  if (status.ok()) return Status::Ok();
  std::string message = std::string(what) + ": " + status.ToString();
  if (status.IsCorruption()) return Status::Corruption(message);
  if (status.IsNoSpace()) {
    return Status::DiskFull(message + " (no space left: " + std::string(full_disk) + ")");
  }
  return Status::IoError(message);
}

std::string MetaKey(std::string_view name) {
  std::string key(1, key_section::kMeta);
  key.append(name);
  return key;
}

std::string EncodeU64(uint64_t value) {
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &value, 8);
  return bytes;
}

std::string CatalogKey(uint32_t object_id) {
  std::string key(1, key_section::kCatalog);
  AppendBigEndian32(object_id, &key);
  return key;
}

std::string StateTablePrefix(uint32_t table_id) {
  std::string key(1, key_section::kState);
  AppendBigEndian32(table_id, &key);
  return key;
}

std::string TableLogPrefix(uint32_t table_id) {
  std::string key(1, key_section::kTableLog);
  AppendBigEndian32(table_id, &key);
  return key;
}

std::string SourcePositionPrefix(uint32_t owner) {
  std::string key(1, key_section::kSourcePosition);
  AppendBigEndian32(owner, &key);
  return key;
}

std::string DeadLetterPrefix(uint32_t stream_id) {
  std::string key(1, key_section::kDeadLetter);
  AppendBigEndian32(stream_id, &key);
  return key;
}

std::string RoleKey(std::string_view name) {
  std::string key(1, key_section::kRole);
  key.append(name);
  return key;
}

// What a reader gets while the database is closed after a storage failure.
Status DatabaseClosed() {
  return Status::IoError(
      "the data directory is closed after a storage failure; it reopens once the disk takes "
      "writes again");
}

// The smallest key greater than every key starting with `prefix`.
std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty() && static_cast<uint8_t>(prefix.back()) == 0xFF) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(static_cast<uint8_t>(prefix.back()) + 1);
  return prefix;
}

}  // namespace

std::string SettingKey(std::string_view name) {
  std::string key = MetaKey("setting.");
  key.append(name);
  return key;
}

void StateRun::AppendFullKey(const Entry& entry, std::string* out) const {
  out->push_back(key_section::kState);
  AppendBigEndian32(table_id, out);
  AppendBigEndian16(entry.virtual_node, out);
  out->append(entry.key);
}

void WriteBatch::PutState(std::string_view key, std::string_view value) { batch_.Put(key, value); }

void WriteBatch::AddStateRun(std::shared_ptr<const StateRun> run) {
  if (run->entries.empty()) return;
  run_bytes_ += run->bytes;
  run_entries_ += run->entries.size();
  runs_.push_back({std::move(run), static_cast<size_t>(batch_.Count())});
}

rocksdb::Status WriteBatch::ForEachChange(rocksdb::WriteBatch::Handler* records,
                                          const std::function<void(const StateRun&)>& run) const {
  // Forwards each record, after the runs placed before it.
  class Interleave : public rocksdb::WriteBatch::Handler {
   public:
    Interleave(const std::vector<PlacedRun>& runs, rocksdb::WriteBatch::Handler* records,
               const std::function<void(const StateRun&)>& run)
        : runs_(runs), records_(records), run_(run) {}
    rocksdb::Status PutCF(uint32_t family, const rocksdb::Slice& key,
                          const rocksdb::Slice& value) override {
      RunsUpTo(position_++);
      return records_->PutCF(family, key, value);
    }
    rocksdb::Status DeleteCF(uint32_t family, const rocksdb::Slice& key) override {
      RunsUpTo(position_++);
      return records_->DeleteCF(family, key);
    }
    rocksdb::Status SingleDeleteCF(uint32_t family, const rocksdb::Slice& key) override {
      RunsUpTo(position_++);
      return records_->SingleDeleteCF(family, key);
    }
    rocksdb::Status DeleteRangeCF(uint32_t family, const rocksdb::Slice& begin,
                                  const rocksdb::Slice& end) override {
      RunsUpTo(position_++);
      return records_->DeleteRangeCF(family, begin, end);
    }
    rocksdb::Status MergeCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
      return rocksdb::Status::NotSupported("an epoch batch holds no merge records");
    }
    // Visits the runs placed before record `position` (SIZE_MAX: all that are left).
    void RunsUpTo(size_t position) {
      for (; next_run_ < runs_.size() && runs_[next_run_].position <= position; ++next_run_) {
        run_(*runs_[next_run_].run);
      }
    }

   private:
    const std::vector<PlacedRun>& runs_;
    rocksdb::WriteBatch::Handler* records_;
    const std::function<void(const StateRun&)>& run_;
    size_t position_ = 0;
    size_t next_run_ = 0;
  };
  Interleave interleave(runs_, records, run);
  rocksdb::Status status = batch_.Iterate(&interleave);
  if (status.ok()) interleave.RunsUpTo(SIZE_MAX);
  return status;
}

rocksdb::WriteBatch WriteBatch::WithRunsWrittenIn() const {
  // Stave writes the default column family only.
  class Copy : public rocksdb::WriteBatch::Handler {
   public:
    explicit Copy(rocksdb::WriteBatch* out) : out_(out) {}
    rocksdb::Status PutCF(uint32_t, const rocksdb::Slice& key,
                          const rocksdb::Slice& value) override {
      return out_->Put(key, value);
    }
    rocksdb::Status DeleteCF(uint32_t, const rocksdb::Slice& key) override {
      return out_->Delete(key);
    }
    rocksdb::Status SingleDeleteCF(uint32_t, const rocksdb::Slice& key) override {
      return out_->SingleDelete(key);
    }
    rocksdb::Status DeleteRangeCF(uint32_t, const rocksdb::Slice& begin,
                                  const rocksdb::Slice& end) override {
      return out_->DeleteRange(begin, end);
    }

   private:
    rocksdb::WriteBatch* out_;
  };
  rocksdb::WriteBatch out(ByteSize());
  Copy copy(&out);
  std::string key;
  // Its handlers fail on nothing written here.
  ForEachChange(&copy, [&](const StateRun& run) {
    for (const StateRun::Entry& entry : run.entries) {
      key.clear();
      run.AppendFullKey(entry, &key);
      rocksdb::Status status =
          entry.deleted ? out.Delete(key)
                        : out.Put(key, rocksdb::Slice(entry.value.data(), entry.value.size()));
      status.PermitUncheckedError();
    }
  }).PermitUncheckedError();
  return out;
}

void WriteBatch::Clear() {
  batch_.Clear();
  next_object_id_.reset();
  runs_.clear();
  run_bytes_ = 0;
  run_entries_ = 0;
}

std::unique_ptr<EpochBatch> EpochBatchPool::Take(uint64_t epoch, int64_t time,
                                                 size_t reserved_bytes) {
  std::unique_ptr<EpochBatch> batch;
  {
    std::lock_guard lock(mutex_);
    // The smallest batch with the room asked for, else the largest there is: a source's
    // few bytes do not take the room an aggregate's next batch needs.
    auto better = [reserved_bytes](size_t room, size_t than) {
      bool fits = room >= reserved_bytes;
      if (fits != (than >= reserved_bytes)) return fits;
      return fits ? room < than : room > than;
    };
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (best == free_.end() || better((*it)->Capacity(), (*best)->Capacity())) best = it;
    }
    if (best != free_.end()) {
      batch = std::move(*best);
      free_.erase(best);
    }
  }
  if (!batch) return std::make_unique<EpochBatch>(epoch, time, reserved_bytes);
  batch->Reuse(epoch, time);
  return batch;
}

void EpochBatchPool::GiveBack(std::unique_ptr<EpochBatch> batch) {
  if (!batch || batch->Capacity() > kMaxBatchBytes) return;
  batch->Clear();  // Lets go of its state runs' memory now.
  std::lock_guard lock(mutex_);
  if (free_.size() < kMaxBatches) free_.push_back(std::move(batch));
}

void WriteBatch::PutSetting(std::string_view name, std::string_view value) {
  batch_.Put(SettingKey(name), value);
}

void WriteBatch::DeleteState(std::string_view key) { batch_.Delete(key); }

void WriteBatch::DeleteStateTables(uint32_t first_table_id, uint32_t end_table_id) {
  batch_.DeleteRange(StateTablePrefix(first_table_id), StateTablePrefix(end_table_id));
}

void WriteBatch::PutCatalogEntry(uint32_t object_id, std::string_view entry) {
  batch_.Put(CatalogKey(object_id), entry);
}

void WriteBatch::PutRole(std::string_view name, std::string_view entry) {
  batch_.Put(RoleKey(name), entry);
}

void WriteBatch::DeleteRole(std::string_view name) { batch_.Delete(RoleKey(name)); }

void WriteBatch::DeleteCatalogEntry(uint32_t object_id) { batch_.Delete(CatalogKey(object_id)); }

void WriteBatch::PutNextObjectId(uint64_t next_id) {
  next_object_id_ = next_id;
  batch_.Put(MetaKey(kNextObjectIdName), EncodeU64(next_id));
}

void WriteBatch::PutSourcePosition(uint32_t owner, std::string_view name,
                                   std::string_view position) {
  std::string key = SourcePositionPrefix(owner);
  key.append(name);
  batch_.Put(key, position);
}

void WriteBatch::DeleteSourcePositions(uint32_t owner) {
  std::string begin = SourcePositionPrefix(owner);
  batch_.DeleteRange(begin, PrefixEnd(begin));
}

void WriteBatch::PutTableLogRecord(uint32_t table_id, uint64_t sequence, std::string_view record) {
  std::string key = TableLogPrefix(table_id);
  AppendBigEndian64(sequence, &key);
  batch_.Put(key, record);
}

void WriteBatch::DeleteTableLogBelow(uint32_t table_id, uint64_t sequence) {
  std::string begin = TableLogPrefix(table_id);
  std::string end = begin;
  AppendBigEndian64(sequence, &end);
  batch_.DeleteRange(begin, end);
}

void WriteBatch::DeleteTableLog(uint32_t table_id) {
  std::string begin = TableLogPrefix(table_id);
  batch_.DeleteRange(begin, PrefixEnd(begin));
}

void WriteBatch::PutDeadLetter(uint32_t stream_id, int32_t partition, int64_t offset,
                               std::string_view record) {
  std::string key = DeadLetterPrefix(stream_id);
  AppendBigEndian32(static_cast<uint32_t>(partition), &key);
  AppendBigEndian64(static_cast<uint64_t>(offset), &key);
  batch_.Put(key, record);
}

void WriteBatch::DeleteDeadLetters(uint32_t stream_id) {
  std::string begin = DeadLetterPrefix(stream_id);
  batch_.DeleteRange(begin, PrefixEnd(begin));
}

Snapshot::~Snapshot() { db_->ReleaseSnapshot(snapshot_); }

Status Snapshot::ScanStateTable(
    uint32_t table_id,
    const std::function<bool(std::string_view key, std::string_view value)>& visit) const {
  return ScanStateTable(table_id, "", visit);
}

Status Snapshot::ScanStateTable(
    uint32_t table_id, std::string_view prefix,
    const std::function<bool(std::string_view key, std::string_view value)>& visit) const {
  std::string begin = StateTablePrefix(table_id);
  size_t table_prefix = begin.size();
  begin.append(prefix);
  std::string end = PrefixEnd(begin);
  rocksdb::ReadOptions options;
  options.snapshot = snapshot_;
  rocksdb::Slice upper(end);
  options.iterate_upper_bound = &upper;
  if (prefix.empty()) {
    // A whole table: read ahead in large requests rather than a block at a time, and keep
    // the blocks of this one pass out of the cache that holds the working set.
    options.readahead_size = size_t{4} << 20;
    options.fill_cache = false;
  }
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(options));
  for (it->Seek(begin); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    key.remove_prefix(table_prefix);
    if (!visit(key, std::string_view(it->value().data(), it->value().size()))) break;
  }
  return FromRocks(it->status(), "scanning a state table");
}

Result<std::optional<std::string>> Snapshot::GetStateTableRow(uint32_t table_id,
                                                              std::string_view key) const {
  std::string full_key = StateTablePrefix(table_id);
  full_key.append(key);
  rocksdb::ReadOptions options;
  options.snapshot = snapshot_;
  std::string value;
  rocksdb::Status status = db_->Get(options, full_key, &value);
  if (status.IsNotFound()) return std::optional<std::string>();
  if (!status.ok()) return FromRocks(status, "reading a state table row");
  return std::optional<std::string>(std::move(value));
}

namespace {

// RocksDB's options, the same at every open of the database (at start, and at a reopen after
// a storage failure). Built afresh each time: RocksDB copies what it keeps of them.
rocksdb::Options DatabaseOptions(rocksdb::Env* env) {
  rocksdb::Options options;
  options.env = env;
  options.create_if_missing = true;
  options.IncreaseParallelism(2);
  options.OptimizeLevelStyleCompaction();
  // An epoch's state reaches level 0 as a file of its own (or a memtable flush), its keys
  // spread over the key space (a join's rows by price, say), so each compaction into level 1
  // rewrites most of it. OptimizeLevelStyleCompaction's trigger of 2 files did that for
  // every other epoch; 8 does it a quarter as often, for a few more files to look into per
  // read (Bloom filters skip most). Nexmark at 10M events, two pairs: q4 +15-35 %, q7
  // +15-18 %, q9 +28-31 % events/s per core (docs/decisions.md). Writes slow down later to
  // match.
  options.level0_file_num_compaction_trigger = 8;
  options.level0_slowdown_writes_trigger = 40;
  options.level0_stop_writes_trigger = 60;
  // Recovery after a crash replays the write-ahead log into memtables, at roughly 20 MB/s
  // on a slow VM (per entry, not per byte). Past this size RocksDB flushes the memtables
  // the oldest log holds, so a restart never replays more than about this much.
  options.max_total_wal_size = kMaxWalBytes;
  // An epoch's state rewrites keys in sorted runs (StateTable::FlushTo): a hint per
  // (section, table, virtual node) lets each insert start where the previous one ended.
  // Hints need the memtable inserts of a write group done one batch after another, which
  // costs nothing here: the writers are few (the coordinator and table commits).
  options.memtable_insert_with_hint_prefix_extractor.reset(
      rocksdb::NewFixedPrefixTransform(kHintPrefixBytes));
  options.allow_concurrent_memtable_write = false;
  // Reads of keys that do not exist (a new group, a join key without a match) skip the files
  // that cannot hold them: whole-key Bloom filters, about 1.25 bytes of memory per key.
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

// Counts the CPU time of RocksDB's compactions, as their jobs report it.
class CompactionCpuListener : public rocksdb::EventListener {
 public:
  explicit CompactionCpuListener(std::shared_ptr<std::atomic<uint64_t>> micros)
      : micros_(std::move(micros)) {}
  void OnCompactionCompleted(rocksdb::DB*, const rocksdb::CompactionJobInfo& info) override {
    micros_->fetch_add(info.stats.cpu_micros, std::memory_order_relaxed);
  }

 private:
  std::shared_ptr<std::atomic<uint64_t>> micros_;
};

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const std::string& directory) {
  // The format is checked before RocksDB opens anything: a directory of another format is
  // never read, let alone written.
  if (Status prepared = PrepareDataDirectory(directory); !prepared.ok()) return prepared;
  std::unique_ptr<Store> store(new Store(
      directory, rocksdb::NewCompositeEnv(NewFailpointFileSystem(rocksdb::FileSystem::Default()))));
  if (Status opened = store->OpenDatabase(); !opened.ok()) return opened;
  return store;
}

Status Store::OpenDatabase() {
  // Epoch files a crash left unfinished or not ingested: never part of the database.
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory_, error)) {
    if (entry.path().string().ends_with(kEpochFileSuffix)) {
      std::filesystem::remove(entry.path(), error);
    }
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Options options = DatabaseOptions(env_.get());
  options.listeners.push_back(std::make_shared<CompactionCpuListener>(compaction_cpu_micros_));
  rocksdb::Status status = rocksdb::DB::Open(options, directory_, &raw);
  if (!status.ok()) {
    return FromRocks(status, "cannot open the data directory \"" + directory_ + "\"");
  }
  std::shared_ptr<rocksdb::DB> db(raw);
  if (Status meta = LoadMeta(db.get()); !meta.ok()) return meta;
  db_ = std::move(db);
  return Status::Ok();
}

Store::~Store() {
  if (db_) {
    // Flushing the memtables on a clean stop spares the next start a replay of the
    // write-ahead log, which otherwise dominates recovery time.
    db_->Flush(rocksdb::FlushOptions()).PermitUncheckedError();
    db_->Close().PermitUncheckedError();
  }
}

std::shared_ptr<rocksdb::DB> Store::Pin() const {
  std::lock_guard lock(db_mutex_);
  return db_;
}

Status Store::LoadMeta(rocksdb::DB* db) {
  std::string value;
  rocksdb::Status status = db->Get(rocksdb::ReadOptions(), MetaKey(kCommittedEpochName), &value);
  if (status.ok() && value.size() == 8) {
    uint64_t epoch;
    std::memcpy(&epoch, value.data(), 8);
    committed_epoch_.store(epoch);
  } else if (!status.ok() && !status.IsNotFound()) {
    return FromRocks(status, "reading the committed epoch");
  }
  status = db->Get(rocksdb::ReadOptions(), MetaKey(kNextObjectIdName), &value);
  if (status.ok() && value.size() == 8) {
    std::memcpy(&next_object_id_, value.data(), 8);
  } else if (!status.ok() && !status.IsNotFound()) {
    return FromRocks(status, "reading the next object id");
  }
  return Status::Ok();
}

namespace {

// RocksDB keeps a batch's bytes in a protected member; a pointer to it, formed through a
// derived class, reaches them in any batch.
struct BatchBytes : rocksdb::WriteBatch {
  static std::string& Of(rocksdb::WriteBatch* batch) { return batch->*(&BatchBytes::rep_); }
};

}  // namespace

void WriteBatch::Append(const std::vector<const WriteBatch*>& parts) {
  // A RocksDB batch is a 12-byte header (sequence number, then the record count as a
  // little-endian fixed32) followed by its records; appending batches is concatenating their
  // records and adding the counts, as RocksDB's own WriteBatchInternal::Append does. Doing
  // it here costs one copy instead of re-encoding every record through WriteBatch::Iterate.
  constexpr size_t kHeader = 12;
  size_t bytes = batch_.GetDataSize();
  uint64_t count = batch_.Count();
  for (const WriteBatch* part : parts) {
    // A part's runs go where its records do: after the records of the parts before it.
    for (const PlacedRun& placed : part->runs_) {
      runs_.push_back({placed.run, static_cast<size_t>(count) + placed.position});
    }
    run_bytes_ += part->run_bytes_;
    run_entries_ += part->run_entries_;
    if (part->batch_.Count() == 0) continue;
    bytes += part->batch_.GetDataSize() - kHeader;
    count += part->batch_.Count();
  }
  // This batch's records, taken over with their memory: a batch reused from epoch to epoch
  // keeps it.
  std::string rep = std::move(BatchBytes::Of(&batch_));
  rep.reserve(bytes);
  for (const WriteBatch* part : parts) {
    if (part->next_object_id_) next_object_id_ = part->next_object_id_;
    if (part->batch_.Count() == 0) continue;
    rep.append(part->batch_.Data(), kHeader, std::string::npos);
  }
  auto count32 = static_cast<uint32_t>(count);
  for (int i = 0; i < 4; ++i) rep[8 + i] = static_cast<char>((count32 >> (8 * i)) & 0xFF);
  // A batch built from bytes works out what they hold (puts, deletes, ranges) when asked.
  batch_ = rocksdb::WriteBatch(std::move(rep));
}

Status Store::Commit(EpochBatch* batch) {
  std::lock_guard lock(commit_mutex_);
  batch->batch_.Put(MetaKey(kCommittedEpochName), EncodeU64(batch->epoch()));
  Status status;
  if (batch->ByteSize() >= kIngestBytes || batch->Count() >= kIngestEntries) {
    status = IngestSynced(*batch, batch->epoch());
  } else if (!batch->runs_.empty()) {
    rocksdb::WriteBatch written = batch->WithRunsWrittenIn();
    status = WriteSynced(&written, "committing an epoch");
  } else {
    status = WriteSynced(&batch->batch_, "committing an epoch");
  }
  if (!status.ok()) return status;
  committed_epoch_.store(batch->epoch(), std::memory_order_release);
  if (batch->next_object_id_) next_object_id_ = *batch->next_object_id_;
  return Status::Ok();
}

namespace {

// Writes and syncs a small file of its own in the data directory (then deletes it).
Status CheckDiskTakesWrites(rocksdb::FileSystem* file_system, const std::string& directory) {
  std::string path = directory + "/STORAGE_CHECK";
  rocksdb::IOOptions io;
  std::unique_ptr<rocksdb::FSWritableFile> file;
  rocksdb::IOStatus status =
      file_system->NewWritableFile(path, rocksdb::FileOptions(), &file, nullptr);
  if (status.ok()) status = file->Append(std::string(4096, '\0'), io, nullptr);
  if (status.ok()) status = file->Sync(io, nullptr);
  if (file) {
    rocksdb::IOStatus closed = file->Close(io, nullptr);
    if (status.ok()) status = closed;
  }
  file_system->DeleteFile(path, io, nullptr).PermitUncheckedError();
  return FromRocks(status, "checking that the data directory takes writes");
}

}  // namespace

Status Store::RecoverFromWriteFailure(std::string_view what) {
  if (write_failed_.load(std::memory_order_acquire)) {
    // Resuming RocksDB while the disk still fails makes it flush, and a failed write of its
    // MANIFEST is fatal (only a reopen recovers): so first a small file of our own, written
    // and synced through the same file system, must succeed.
    Status disk = CheckDiskTakesWrites(env_->GetFileSystem().get(), directory_);
    if (!disk.ok()) return disk;
    // Resume fails, and nothing is written, while the fault lasts. Busy: RocksDB is already
    // recovering by itself (from a full disk it retries every few seconds), and the write
    // below succeeds once it has. Any other failure is one RocksDB does not recover from
    // while open (a failed sync of its write-ahead log, say): reopening it does.
    std::shared_ptr<rocksdb::DB> db = Pin();
    rocksdb::Status resumed = db ? db->Resume() : rocksdb::Status::IOError("closed");
    db.reset();
    if (!resumed.ok() && !resumed.IsBusy()) {
      spdlog::warn("RocksDB does not resume after the storage failure ({}): reopening it",
                   resumed.ToString());
      if (Status reopened = Reopen(what); !reopened.ok()) return reopened;
      spdlog::warn("reopened the data directory at committed epoch {}", committed_epoch());
    }
  }
  return Status::Ok();
}

Status Store::WriteSynced(rocksdb::WriteBatch* batch, std::string_view what) {
  if (Status recovered = RecoverFromWriteFailure(what); !recovered.ok()) return recovered;
  std::shared_ptr<rocksdb::DB> db = Pin();
  if (!db) return DatabaseClosed();
  rocksdb::WriteOptions options;
  options.sync = true;
  Status status = FromRocks(db->Write(options, batch), what);
  write_failed_.store(!status.ok(), std::memory_order_release);
  return status;
}

Status Store::IngestSynced(const WriteBatch& batch, uint64_t epoch) {
  constexpr std::string_view kWhat = "committing an epoch";
  if (Status recovered = RecoverFromWriteFailure(kWhat); !recovered.ok()) return recovered;
  std::shared_ptr<rocksdb::DB> db = Pin();
  if (!db) return DatabaseClosed();
  std::string path = directory_ + "/" + std::to_string(epoch) + std::string(kEpochFileSuffix);
  // Written and synced through the same file system as RocksDB's own files. Ingesting it is
  // atomic and durable: RocksDB links it into the database, syncs the directory, and
  // records it in its synced MANIFEST, or leaves the database as it was.
  rocksdb::Status written = WriteEpochFile(batch, DatabaseOptions(env_.get()), path);
  if (written.ok()) {
    rocksdb::IngestExternalFileOptions options;
    options.move_files = true;  // A hard link: the file is written once.
    written = db->IngestExternalFile({path}, options);
  }
  // Ingested, the file lives on under RocksDB's name for it; failed, it is of no use.
  env_->GetFileSystem()->DeleteFile(path, rocksdb::IOOptions(), nullptr).PermitUncheckedError();
  Status status = FromRocks(written, kWhat);
  write_failed_.store(!status.ok(), std::memory_order_release);
  return status;
}

Status Store::Reopen(std::string_view what) {
  // Readers hold the database only while they read (a snapshot, for one query), so it is
  // free soon; one that holds it longer makes this reopen fail, and the next write try again.
  constexpr auto kWaitForReaders = std::chrono::seconds(10);
  auto deadline = std::chrono::steady_clock::now() + kWaitForReaders;
  std::unique_lock lock(db_mutex_);
  while (db_ && db_.use_count() > 1) {
    lock.unlock();
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::IoError(std::string(what) +
                             ": cannot reopen the data directory after a storage failure while "
                             "queries still read it; retrying");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    lock.lock();
  }
  if (db_) {
    // Closing drops what RocksDB held in memory; the write-ahead log on disk holds every
    // acknowledged write, and the reopen replays it as a start would.
    db_->Close().PermitUncheckedError();
    db_.reset();
  }
  // Fails while the disk does; the database then stays closed until a later write reopens it.
  return OpenDatabase();
}

Status Store::CheckWritable() {
  rocksdb::WriteBatch batch;
  batch.Put(MetaKey("storage_check"), "");
  return WriteSynced(&batch, "checking that the data directory takes writes");
}

Status Store::WriteDurably(WriteBatch* batch) {
  Status status = WriteSynced(&batch->batch_, "writing table changes");
  if (status.ok() && batch->next_object_id_) next_object_id_ = *batch->next_object_id_;
  return status;
}

Result<uint64_t> Store::NextTableLogSequence(uint32_t table_id) const {
  std::string begin = TableLogPrefix(table_id);
  std::string end = PrefixEnd(begin);
  rocksdb::ReadOptions options;
  rocksdb::Slice lower(begin);
  options.iterate_lower_bound = &lower;
  std::shared_ptr<rocksdb::DB> db = Pin();
  if (!db) return DatabaseClosed();
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(options));
  it->SeekForPrev(end);
  if (it->Valid() && it->key().starts_with(begin)) {
    if (it->key().size() != begin.size() + 8) return Status::Corruption("malformed table log key");
    return ReadBigEndian64(std::string_view(it->key().data() + begin.size(), 8)) + 1;
  }
  Status status = FromRocks(it->status(), "reading a table log");
  if (!status.ok()) return status;
  return uint64_t{0};
}

Status Store::ReadTableLog(uint32_t table_id, uint64_t from,
                           const std::function<bool(uint64_t, std::string_view)>& visit) const {
  std::string begin = TableLogPrefix(table_id);
  std::string start = begin;
  AppendBigEndian64(from, &start);
  Status malformed;
  Status status = ScanLatest(begin, start, "reading a table log",
                             [&](std::string_view key, std::string_view value) {
                               if (key.size() != 8) {
                                 malformed = Status::Corruption("malformed table log key");
                                 return false;
                               }
                               return visit(ReadBigEndian64(key), value);
                             });
  return malformed.ok() ? status : malformed;
}

Result<uint64_t> Store::Backup(const std::string& target) {
  namespace fs = std::filesystem;
  fs::path target_path = fs::path(target).lexically_normal();
  if (!target_path.has_filename()) target_path = target_path.parent_path();
  // RocksDB builds its checkpoint in "<staging>.tmp" and renames it to <staging>; the
  // marker is added there before the last rename makes the copy visible as `target`.
  std::string staging = target_path.string() + ".partial";
  std::error_code ignored;
  fs::remove_all(staging, ignored);  // Left by a backup that crashed midway.
  fs::remove_all(staging + ".tmp", ignored);
  std::shared_ptr<rocksdb::DB> db = Pin();
  if (!db) return DatabaseClosed();
  rocksdb::Checkpoint* raw = nullptr;
  Status status = FromRocks(rocksdb::Checkpoint::Create(db.get(), &raw), "starting a backup");
  if (!status.ok()) return status;
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  uint64_t epoch;
  {
    // No epoch commits while RocksDB takes the copy (it flushes the memtables first, so
    // the copy needs no write-ahead log replay); table writes may, and are either in the
    // copy or not, each whole.
    std::lock_guard lock(commit_mutex_);
    epoch = committed_epoch();
    status = FromRocks(checkpoint->CreateCheckpoint(staging), "writing the backup",
                       "the disk of the data directory or of the backup is full");
  }
  if (status.ok()) status = WriteFormatFile(staging);
  if (status.ok() && ::rename(staging.c_str(), target_path.c_str()) != 0) {
    status = Status::IoError("cannot rename \"" + staging + "\" to \"" + target_path.string() +
                             "\": " + std::strerror(errno));
  }
  if (status.ok()) status = SyncDirectory(target_path.parent_path().string());
  if (!status.ok()) {
    fs::remove_all(staging, ignored);
    fs::remove_all(staging + ".tmp", ignored);
    return status;
  }
  return epoch;
}

Result<std::shared_ptr<const Snapshot>> Store::NewSnapshot() const {
  std::shared_ptr<rocksdb::DB> db = Pin();
  if (!db) return DatabaseClosed();
  const rocksdb::Snapshot* snapshot = db->GetSnapshot();
  return std::shared_ptr<const Snapshot>(new Snapshot(std::move(db), snapshot, committed_epoch()));
}

Result<std::optional<std::string>> Store::GetState(std::string_view full_key) const {
  std::shared_ptr<rocksdb::DB> db = Pin();
  if (!db) return DatabaseClosed();
  std::string value;
  rocksdb::Status status = db->Get(rocksdb::ReadOptions(), full_key, &value);
  if (status.IsNotFound()) return std::optional<std::string>();
  if (!status.ok()) return FromRocks(status, "reading state");
  return std::optional<std::string>(std::move(value));
}

Status Store::ScanLatest(
    std::string_view prefix, std::string_view from, std::string_view what,
    const std::function<bool(std::string_view key, std::string_view value)>& visit) const {
  std::string end = PrefixEnd(std::string(prefix));
  rocksdb::ReadOptions options;
  rocksdb::Slice upper(end);
  options.iterate_upper_bound = &upper;
  std::shared_ptr<rocksdb::DB> db = Pin();
  if (!db) return DatabaseClosed();
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(options));
  for (it->Seek(rocksdb::Slice(from.data(), from.size())); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    key.remove_prefix(prefix.size());
    if (!visit(key, std::string_view(it->value().data(), it->value().size()))) break;
  }
  return FromRocks(it->status(), what);
}

Status Store::ScanState(
    std::string_view full_prefix,
    const std::function<bool(std::string_view, std::string_view)>& visit) const {
  return ScanLatest(full_prefix, full_prefix, "scanning state", visit);
}

Result<std::vector<std::pair<uint32_t, std::string>>> Store::LoadCatalogEntries() const {
  std::vector<std::pair<uint32_t, std::string>> entries;
  std::string section(1, key_section::kCatalog);
  Status malformed;
  Status status = ScanLatest(section, section, "reading the catalog",
                             [&](std::string_view key, std::string_view value) {
                               if (key.size() != 4) {
                                 malformed = Status::Corruption("malformed catalog key");
                                 return false;
                               }
                               entries.emplace_back(ReadBigEndian32(key), std::string(value));
                               return true;
                             });
  if (!malformed.ok()) return malformed;
  if (!status.ok()) return status;
  return entries;
}

Result<std::vector<std::pair<std::string, std::string>>> Store::LoadRoles() const {
  std::vector<std::pair<std::string, std::string>> roles;
  std::string section(1, key_section::kRole);
  Status status = ScanLatest(section, section, "reading the roles",
                             [&](std::string_view key, std::string_view value) {
                               roles.emplace_back(std::string(key), std::string(value));
                               return true;
                             });
  if (!status.ok()) return status;
  return roles;
}

Result<std::optional<std::string>> Store::GetSetting(std::string_view name) const {
  return GetState(SettingKey(name));
}

Result<std::optional<std::string>> Store::GetSourcePosition(uint32_t owner,
                                                            std::string_view name) const {
  std::string key = SourcePositionPrefix(owner);
  key.append(name);
  return GetState(key);
}

Status Store::ScanDeadLetters(
    const std::function<bool(uint32_t, int32_t, int64_t, std::string_view)>& visit) const {
  std::string section(1, key_section::kDeadLetter);
  constexpr size_t kKeyBytes = 4 + 4 + 8;  // Stream, partition, offset.
  Status malformed;
  Status status = ScanLatest(
      section, section, "reading dead letters", [&](std::string_view key, std::string_view value) {
        if (key.size() != kKeyBytes) {
          malformed = Status::Corruption("malformed dead letter key");
          return false;
        }
        uint32_t stream = ReadBigEndian32(key.substr(0, 4));
        auto partition = static_cast<int32_t>(ReadBigEndian32(key.substr(4, 4)));
        auto offset = static_cast<int64_t>(ReadBigEndian64(key.substr(8, 8)));
        return visit(stream, partition, offset, value);
      });
  return malformed.ok() ? status : malformed;
}

uint64_t Store::ApproximateSize() const {
  uint64_t size = 0;
  std::shared_ptr<rocksdb::DB> db = Pin();
  if (db) db->GetIntProperty(rocksdb::DB::Properties::kTotalSstFilesSize, &size);
  return size;
}

uint64_t Store::ApproximateStateTablesSize(uint32_t first_table_id, uint32_t end_table_id,
                                           uint64_t decisive_bytes) const {
  std::string begin = StateTablePrefix(first_table_id);
  std::string end = StateTablePrefix(end_table_id);
  std::shared_ptr<rocksdb::DB> db = Pin();
  if (!db) return 0;
  rocksdb::Range range(begin, end);
  auto estimate = [&](bool files) {
    rocksdb::SizeApproximationOptions options;
    options.include_files = files;
    options.include_memtables = !files;
    uint64_t size = 0;
    rocksdb::Status status =
        db->GetApproximateSizes(options, db->DefaultColumnFamily(), &range, 1, &size);
    return status.ok() ? size : 0;
  };
  uint64_t in_files = estimate(true);
  uint64_t memtables = 0;
  db->GetIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &memtables);
  // The memtables' share is at most their size.
  uint64_t in_memtables = std::min(estimate(false), memtables);
  if (in_files > decisive_bytes || in_files + memtables <= decisive_bytes) {
    return in_files + in_memtables;  // Decided either way.
  }
  // The latest entries of the range in the memtables (a key deleted there counts nothing).
  rocksdb::ReadOptions options;
  options.read_tier = rocksdb::kMemtableTier;
  rocksdb::Slice upper(end);
  options.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(options));
  uint64_t counted = 0;
  for (it->Seek(begin); it->Valid(); it->Next()) counted += it->key().size() + it->value().size();
  return in_files + (it->status().ok() ? counted : in_memtables);
}

}  // namespace stave::storage
