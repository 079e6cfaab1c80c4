#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "common/status.h"
#include "storage/store.h"

namespace stave::storage {

/// The number of virtual nodes. A state key starts with its virtual node (a stable hash of
/// the key), so parallel instances can own disjoint ranges of virtual nodes and the
/// parallelism can change between restarts without rewriting state.
inline constexpr uint16_t kVirtualNodeCount = 256;

/// The virtual node of a key: a stable hash (FNV-1a), never std::hash, because it is on disk.
uint16_t VirtualNodeOf(std::string_view key);

/// One operator's keyed state. Writes of the current epoch stay in an in-memory buffer and
/// reads see them first, so an operator reads its own uncommitted writes while RocksDB holds
/// only committed epochs: a crash loses exactly the uncommitted epoch, and rollback costs
/// nothing. At a barrier, FlushTo hands the buffer's writes to the epoch's batch as a sorted
/// run that reads them where they lie (no copy), and keeps them, sealed, readable until that
/// epoch has committed: the operator goes on with the next epoch while the checkpoint is
/// written.
/// Not thread-safe: owned by one operator instance.
class StateTable {
 public:
  StateTable(const Store* store, uint32_t table_id) : store_(store), table_id_(table_id) {}

  uint32_t table_id() const { return table_id_; }
  const Store* store() const { return store_; }

  /// The latest value of `key`: this epoch's write if any, else the committed one.
  Result<std::optional<std::string>> Get(std::string_view key) const;
  void Put(std::string_view key, std::string_view value);
  void Delete(std::string_view key);
  /// Writes `key` (nullopt: deletes it) once in this epoch, after any other write of it in
  /// the epoch, with no read of it until the epoch is flushed: an aggregate writing each
  /// changed group at its barrier, just before FlushTo. Appended to the epoch's run, which
  /// FlushTo sorts, where Put inserts into the buffer's map: a write costs a copy, not an
  /// insert into a table that grows to the epoch's size. Get sees it once flushed.
  void WriteOnce(std::string_view key, std::optional<std::string_view> value);

  /// Grouped keys: `group`, then `suffix`, in the virtual node of `group` alone, so the keys
  /// of a group lie together in RocksDB and one prefix scan reads them (a join key's rows,
  /// one entry each). `group` must be prefix-free among the groups of the table (as
  /// memcomparable keys of fixed columns are).
  void PutInGroup(std::string_view group, std::string_view suffix, std::string_view value);
  void DeleteInGroup(std::string_view group, std::string_view suffix);
  /// WriteOnce for a grouped key (`group`, then `suffix`), with WriteOnce's contract: a join
  /// writing each changed row of a key at its barrier.
  void WriteOnceInGroup(std::string_view group, std::string_view suffix,
                        std::optional<std::string_view> value);
  /// The latest value of one grouped key, as Get: a point lookup, which the store's Bloom
  /// filters answer for a key it does not hold without reading its files.
  Result<std::optional<std::string>> GetInGroup(std::string_view group,
                                                std::string_view suffix) const;
  /// Writes a new key that nothing reads back: no write of this table has it, and no Get or
  /// scan asks for it before its epoch commits (a keyless view's rows, numbered by their
  /// instance). Kept in arrival order outside the buffer's map, so an append-only table pays
  /// a copy per row instead of a map insert, and, appended in key order within one group,
  /// reaches RocksDB in key order without a sort. Get does not see it.
  void AppendInGroup(std::string_view group, std::string_view suffix, std::string_view value);
  /// Calls `visit(suffix, value)` for the committed keys of `group`, in key order, until it
  /// returns false. REQUIRES: the group has no write in this epoch's buffer nor in a sealed
  /// one not committed yet -- the caller keeps a group it changed in memory until then
  /// (Committed tells when).
  Status ScanCommittedGroup(
      std::string_view group,
      const std::function<bool(std::string_view suffix, std::string_view value)>& visit) const;
  /// Whether the store has committed `epoch`: writes flushed into it no longer need reading
  /// from the sealed buffer.
  bool Committed(uint64_t epoch) const { return store_->committed_epoch() >= epoch; }

  /// Adds this epoch's changes to `batch` (a StateRun, in memory `batch` then shares) and seals
  /// them: reads still see them until the store has committed `batch.epoch()`.
  void FlushTo(EpochBatch* batch);

  /// Bytes held by the current epoch's buffer.
  size_t buffered_bytes() const { return buffered_bytes_; }

  /// The full RocksDB key of a state key.
  std::string FullKey(std::string_view key) const;

 private:
  /// The bytes of the keys and values an epoch writes, in blocks that never move, so that
  /// the buffer's entries point into them: a write allocates nothing of its own. Once the
  /// epoch is flushed, its arena is shared by the table's sealed buffer and the epoch's state
  /// run, and lives until both are done with it; its blocks then serve other arenas.
  class Arena {
   public:
    Arena() = default;
    Arena(const Arena&) = delete;
    Arena& operator=(const Arena&) = delete;
    ~Arena();
    std::string_view Copy(std::string_view bytes);
    char* Allocate(size_t size);

   private:
    static constexpr size_t kBlockBytes = size_t{64} << 10;
    // Past this a value gets a block of its own.
    static constexpr size_t kLargeBytes = kBlockBytes / 4;
    std::vector<std::unique_ptr<char[]>> blocks_;  // The last one is being filled.
    std::vector<std::unique_ptr<char[]>> large_;   // Single large values.
    size_t used_ = kBlockBytes;                    // Bytes filled in the last block.
  };
  // A change: the new value in the arena (or a delete), with room for the key's next value
  // of this epoch, and the key's virtual node.
  struct Change {
    const char* value = nullptr;
    uint32_t size = 0;
    uint32_t capacity = 0;
    uint16_t virtual_node = 0;
    bool deleted = false;
    std::string_view view() const { return {value, size}; }
    std::optional<std::string> Stored() const {
      return deleted ? std::nullopt : std::optional<std::string>(view());
    }
  };
  // By state key (without the table prefix), a view of the arena's copy. Open addressing:
  // a write touches the control bytes and one slot, and allocates nothing.
  using Buffer = absl::flat_hash_map<std::string_view, Change>;

  void Write(std::string_view key, std::optional<std::string_view> value, uint16_t virtual_node);
  /// WriteOnce's change of the key `group` + `suffix`, in `virtual_node`.
  void AppendOnce(std::string_view group, std::string_view suffix,
                  std::optional<std::string_view> value, uint16_t virtual_node);
  /// A run for this epoch's changes: the last one flushed, once its epoch has committed.
  std::shared_ptr<StateRun> TakeRun();
  /// Sorts `run`'s entries in RocksDB's key order.
  void SortEntries(StateRun* run);
  /// The change a run's entry makes, as the buffer's map holds it.
  static Change ChangeOf(const StateRun::Entry& entry) {
    return {entry.value.data(), static_cast<uint32_t>(entry.value.size()),
            static_cast<uint32_t>(entry.value.size()), entry.virtual_node, entry.deleted};
  }
  /// Writes each of `run`'s changes into `map`, over what it held for the key.
  static void InsertRun(const StateRun& run, Buffer* map) {
    for (const StateRun::Entry& entry : run.entries) {
      map->insert_or_assign(entry.key, ChangeOf(entry));
    }
  }
  Result<std::optional<std::string>> Lookup(std::string_view key, uint16_t virtual_node) const;
  /// FullKey into key_scratch_.
  std::string_view ScratchKey(std::string_view key) const;
  std::string_view ScratchKey(std::string_view key, uint16_t virtual_node) const;
  /// Section, table id, virtual node.
  static constexpr size_t kKeyPrefixBytes = 7;
  /// Drops the sealed buffer once its epoch is in RocksDB.
  void ReleaseCommitted() const;

  const Store* store_;
  uint32_t table_id_;
  // State key → new value, or a delete; the keys and values live in arena_ (made at the
  // epoch's first write).
  Buffer buffer_;
  std::shared_ptr<Arena> arena_;
  // AppendInGroup's rows of this epoch: full RocksDB keys and values, each length-prefixed.
  std::string appended_;
  size_t buffered_bytes_ = 0;
  // WriteOnce's changes of this epoch, unsorted, in the run FlushTo hands over.
  std::shared_ptr<StateRun> once_run_;
  // The changes of epochs flushed but perhaps not committed yet -- one epoch's run, sorted,
  // when it holds only WriteOnce's changes; else a map -- the arenas they live in, and the
  // newest of those epochs.
  mutable std::shared_ptr<const StateRun> sealed_run_;
  mutable Buffer sealed_;
  mutable std::vector<std::shared_ptr<const Arena>> sealed_arenas_;
  uint64_t sealed_epoch_ = 0;
  // The state run of the last epoch flushed: once that epoch has committed nothing reads it
  // any more, and it serves again, with its memory.
  std::shared_ptr<StateRun> last_run_;
  // FlushTo's scratch, kept for the next epoch: the entries in the order they came, and
  // their sort keys.
  std::vector<StateRun::Entry> unsorted_;
  struct SortKey {
    // The key's 16 bytes past those all keys of its virtual node share, big-endian.
    uint64_t high;
    uint64_t low;
    uint32_t index;  // In unsorted_.
  };
  std::vector<SortKey> sort_keys_;
  mutable std::string key_scratch_;
};

}  // namespace stave::storage
