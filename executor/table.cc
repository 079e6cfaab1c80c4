#include "executor/table.h"

#include <algorithm>

#include "common/sql_error.h"
#include "executor/plan_builder.h"
#include "storage/key_codec.h"
#include "storage/state_table.h"

namespace stave::executor {
namespace {

constexpr std::string_view kNextRowIdKey = "next_row_id";
// The sequence the table's next log record gets, kept with every write. The log's last
// record alone cannot be trusted to tell it: a checkpoint may delete every record that all
// readers have read, and a sequence must never be reused (a reader at sequence n skips
// everything below n).
constexpr std::string_view kNextSequenceKey = "next_sequence";

}  // namespace

Table::Table(planner::CatalogObjectPtr object, storage::Store* store)
    : object_(std::move(object)), store_(store) {
  for (const auto& column : object_->ChangelogColumns()) changelog_types_.push_back(column.type);
  for (const auto& column : object_->columns) visible_types_.push_back(column.type);
  uint64_t next = store_->NextTableLogSequence(id()).ValueOrThrow();
  storage::StateTable counters(store_, StateTableId(id(), kCountersSlot));
  std::optional<std::string> stored_sequence = counters.Get(kNextSequenceKey).ValueOrThrow();
  if (stored_sequence && stored_sequence->size() == 8) {
    next = std::max(next, storage::ReadBigEndian64(*stored_sequence));
  }
  next_sequence_.store(next);
  pending_sequence_ = next;
  std::optional<std::string> stored = counters.Get(kNextRowIdKey).ValueOrThrow();
  if (stored && stored->size() == 8)
    next_row_id_ = static_cast<int64_t>(storage::ReadBigEndian64(*stored));
}

std::string Table::KeyOf(const std::vector<Value>& row) const {
  std::string key;
  if (object_->HasRowId()) {
    storage::EncodeKeyValue(row.back(), TypeId::kInt64, &key);
  } else {
    for (size_t column : object_->primary_key) {
      storage::EncodeKeyValue(row[column], object_->columns[column].type, &key);
    }
  }
  return key;
}

std::optional<std::vector<Value>> Table::Lookup(const std::string& key) const {
  storage::StateTable rows(store_, StateTableId(id(), kRowsSlot));
  std::optional<std::string> stored = rows.Get(key).ValueOrThrow();
  if (!stored) return std::nullopt;
  auto row = storage::DecodeRow(*stored, visible_types_);
  if (!row) throw SqlError("XX001", "corrupt row in table \"" + object_->name + "\"");
  if (object_->HasRowId()) {
    std::string_view rest = key;
    Value row_id;
    storage::DecodeKeyValue(&rest, TypeId::kInt64, &row_id);
    row->push_back(row_id);
  }
  return row;
}

uint64_t Table::AddToBatch(const std::vector<RowChange>& changes, storage::WriteBatch* batch) {
  uint64_t sequence = pending_sequence_++;
  batch->PutTableLogRecord(id(), sequence, EncodeChangeRecord(changes, changelog_types_));
  storage::StateTable rows(store_, StateTableId(id(), kRowsSlot));
  std::vector<Value> visible(visible_types_.size());
  for (const RowChange& change : changes) {
    if (RowSign(change.op) > 0) {
      for (size_t i = 0; i < visible.size(); ++i) visible[i] = change.row[i];
      std::string value;
      storage::EncodeRow(visible, visible_types_, &value);
      batch->PutState(rows.FullKey(change.key), value);
    } else {
      batch->DeleteState(rows.FullKey(change.key));
    }
  }
  storage::StateTable counters(store_, StateTableId(id(), kCountersSlot));
  std::string next_sequence;
  storage::AppendBigEndian64(sequence + 1, &next_sequence);
  batch->PutState(counters.FullKey(kNextSequenceKey), next_sequence);
  if (object_->HasRowId()) {
    std::string bytes;
    storage::AppendBigEndian64(static_cast<uint64_t>(next_row_id_), &bytes);
    batch->PutState(counters.FullKey(kNextRowIdKey), bytes);
  }
  return sequence;
}

}  // namespace stave::executor
