#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

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
/// nothing. At a barrier, FlushTo moves the buffer into the epoch's batch.
/// Not thread-safe: owned by one operator instance.
class StateTable {
 public:
  StateTable(const Store* store, uint32_t table_id) : store_(store), table_id_(table_id) {}

  uint32_t table_id() const { return table_id_; }

  /// The latest value of `key`: this epoch's write if any, else the committed one.
  Result<std::optional<std::string>> Get(std::string_view key) const;
  void Put(std::string_view key, std::string value);
  void Delete(std::string_view key);

  /// Moves this epoch's writes into `batch` and empties the buffer.
  void FlushTo(EpochBatch* batch);

  /// Bytes held by the uncommitted buffer.
  size_t buffered_bytes() const { return buffered_bytes_; }

  /// The full RocksDB key of a state key.
  std::string FullKey(std::string_view key) const;

 private:
  const Store* store_;
  uint32_t table_id_;
  // Full key → new value, or nullopt for a delete.
  std::unordered_map<std::string, std::optional<std::string>> buffer_;
  size_t buffered_bytes_ = 0;
};

}  // namespace stave::storage
