#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/value.h"
#include "executor/change_record.h"
#include "executor/chunk.h"
#include "planner/catalog.h"
#include "storage/row_codec.h"
#include "storage/store.h"

namespace stave::executor {

/// One row change of a table: `row` holds the table's changelog columns (the visible ones,
/// then the row id of a keyless table).
using TableChange = RowChange;

/// A table's durable side. A table is a replayable source made of two things kept in one
/// RocksDB write per commit: a log of its changes (one record per committed DML statement or
/// transaction, numbered by sequence), which views read like a stream from any position; and
/// its latest rows by key, which DML and SELECT read. An acknowledged write is synced before
/// the reply. Thread-safe: writers serialize on mutex().
class Table {
 public:
  /// Reads the next log sequence and row id from the store.
  Table(planner::CatalogObjectPtr object, storage::Store* store);

  const planner::CatalogObject& object() const { return *object_; }
  uint32_t id() const { return object_->id; }
  const storage::RowTypes& changelog_types() const { return changelog_types_; }

  /// The sequence the next log record gets: every record below it is durable.
  uint64_t next_sequence() const { return next_sequence_.load(std::memory_order_acquire); }

  /// Held while a commit decides keys and row ids and writes.
  std::mutex& mutex() { return mutex_; }

  /// The key of a row: its primary key columns, or its row id.
  std::string KeyOf(const std::vector<Value>& row) const;
  /// The latest durable row of `key`. REQUIRES: mutex() held for a stable answer.
  std::optional<std::vector<Value>> Lookup(const std::string& key) const;
  /// Allocates a row id. REQUIRES: mutex() held.
  int64_t AllocateRowId() { return next_row_id_++; }

  /// Adds `changes` (one commit's worth) to `batch`: the log record and the new latest rows.
  /// Returns the record's sequence. REQUIRES: mutex() held until Published().
  uint64_t AddToBatch(const std::vector<TableChange>& changes, storage::WriteBatch* batch);
  /// Makes records below `next` visible to readers, after the batch was written.
  void Published(uint64_t next) { next_sequence_.store(next, std::memory_order_release); }

  /// State slots of a table's object: its latest rows, and its counters.
  static constexpr uint32_t kRowsSlot = 0;
  static constexpr uint32_t kCountersSlot = 1;

 private:
  planner::CatalogObjectPtr object_;
  storage::Store* store_;
  storage::RowTypes changelog_types_;
  storage::RowTypes visible_types_;
  std::mutex mutex_;
  std::atomic<uint64_t> next_sequence_{0};
  int64_t next_row_id_ = 0;        // GUARDED_BY(mutex_)
  uint64_t pending_sequence_ = 0;  // GUARDED_BY(mutex_): next sequence to hand out.
};

}  // namespace stave::executor
