#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

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
/// nothing. At a barrier, FlushTo copies the buffer into the epoch's batch and keeps it,
/// sealed, readable until that epoch has committed: the operator goes on with the next
/// epoch while the checkpoint is written.
/// Not thread-safe: owned by one operator instance.
class StateTable {
 public:
  StateTable(const Store* store, uint32_t table_id) : store_(store), table_id_(table_id) {}

  uint32_t table_id() const { return table_id_; }
  const Store* store() const { return store_; }

  /// The latest value of `key`: this epoch's write if any, else the committed one.
  Result<std::optional<std::string>> Get(std::string_view key) const;
  void Put(std::string_view key, std::string value);
  void Delete(std::string_view key);

  /// Grouped keys: `group`, then `suffix`, in the virtual node of `group` alone, so the keys
  /// of a group lie together in RocksDB and one prefix scan reads them (a join key's rows,
  /// one entry each). `group` must be prefix-free among the groups of the table (as
  /// memcomparable keys of fixed columns are).
  void PutInGroup(std::string_view group, std::string_view suffix, std::string value);
  void DeleteInGroup(std::string_view group, std::string_view suffix);
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

  /// Writes this epoch's changes into `batch` and seals them: reads still see them until the
  /// store has committed `batch.epoch()`.
  void FlushTo(EpochBatch* batch);

  /// Bytes held by the current epoch's buffer.
  size_t buffered_bytes() const { return buffered_bytes_; }

  /// The full RocksDB key of a state key.
  std::string FullKey(std::string_view key) const;

 private:
  const Store* store_;
  uint32_t table_id_;
  // A change: the new value, or nullopt for a delete, and the key's virtual node.
  struct Change {
    std::optional<std::string> value;
    uint16_t virtual_node;
  };
  // By state key (without the table prefix, so a short key stays inside std::string's own
  // bytes), looked up by string_view. RocksDB keys are built in a reused scratch string.
  // Open addressing: a write touches the control bytes and one slot, and allocates nothing
  // for a short key, where a node-based map allocates a node per key and chases it.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
  };
  using Buffer = absl::flat_hash_map<std::string, Change, KeyHash, std::equal_to<>>;

  void Write(std::string_view key, std::optional<std::string> value, uint16_t virtual_node);
  /// FullKey into key_scratch_.
  std::string_view ScratchKey(std::string_view key) const;
  std::string_view ScratchKey(std::string_view key, uint16_t virtual_node) const;
  /// Section, table id, virtual node.
  static constexpr size_t kKeyPrefixBytes = 7;
  /// Drops the sealed buffer once its epoch is in RocksDB.
  void ReleaseCommitted() const;

  // State key → new value, or nullopt for a delete.
  Buffer buffer_;
  // AppendInGroup's rows of this epoch: full RocksDB keys and values, each length-prefixed.
  std::string appended_;
  size_t buffered_bytes_ = 0;
  // The changes of epochs flushed but perhaps not committed yet, and the newest of them.
  mutable Buffer sealed_;
  uint64_t sealed_epoch_ = 0;
  mutable std::string key_scratch_;
};

}  // namespace stave::storage
