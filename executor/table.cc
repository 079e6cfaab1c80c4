#include "executor/table.h"

#include "common/sql_error.h"
#include "executor/plan_builder.h"
#include "storage/key_codec.h"
#include "storage/state_table.h"

namespace stave::executor {
namespace {

constexpr std::string_view kNextRowIdKey = "next_row_id";

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

bool ReadVarint(std::string_view* in, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64 && !in->empty(); shift += 7) {
    uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    *value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace

Table::Table(planner::CatalogObjectPtr object, storage::Store* store)
    : object_(std::move(object)), store_(store) {
  for (const auto& column : object_->ChangelogColumns()) changelog_types_.push_back(column.type);
  for (const auto& column : object_->columns) visible_types_.push_back(column.type);
  uint64_t next = store_->NextTableLogSequence(id()).ValueOrThrow();
  next_sequence_.store(next);
  pending_sequence_ = next;
  storage::StateTable counters(store_, StateTableId(id(), kCountersSlot));
  std::optional<std::string> stored = counters.Get(kNextRowIdKey).ValueOrThrow();
  if (stored && stored->size() == 8) next_row_id_ = static_cast<int64_t>(storage::ReadBigEndian64(*stored));
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

uint64_t Table::AddToBatch(const std::vector<TableChange>& changes, storage::WriteBatch* batch) {
  uint64_t sequence = pending_sequence_++;
  batch->PutTableLogRecord(id(), sequence, EncodeRecord(changes, changelog_types_));
  storage::StateTable rows(store_, StateTableId(id(), kRowsSlot));
  std::vector<Value> visible(visible_types_.size());
  for (const TableChange& change : changes) {
    if (RowSign(change.op) > 0) {
      for (size_t i = 0; i < visible.size(); ++i) visible[i] = change.row[i];
      std::string value;
      storage::EncodeRow(visible, visible_types_, &value);
      batch->PutState(rows.FullKey(change.key), value);
    } else {
      batch->DeleteState(rows.FullKey(change.key));
    }
  }
  if (object_->HasRowId()) {
    storage::StateTable counters(store_, StateTableId(id(), kCountersSlot));
    std::string bytes;
    storage::AppendBigEndian64(static_cast<uint64_t>(next_row_id_), &bytes);
    batch->PutState(counters.FullKey(kNextRowIdKey), bytes);
  }
  return sequence;
}

std::string Table::EncodeRecord(const std::vector<TableChange>& changes,
                                const storage::RowTypes& types) {
  std::string record;
  AppendVarint(changes.size(), &record);
  for (const TableChange& change : changes) {
    record.push_back(static_cast<char>(change.op));
    std::string row;
    storage::EncodeRow(change.row, types, &row);
    AppendVarint(row.size(), &record);
    record.append(row);
  }
  return record;
}

bool Table::DecodeRecord(std::string_view record, const storage::RowTypes& types, Chunk* chunk) {
  uint64_t count;
  if (!ReadVarint(&record, &count)) return false;
  for (uint64_t i = 0; i < count; ++i) {
    if (record.empty()) return false;
    auto op = static_cast<uint8_t>(record.front());
    record.remove_prefix(1);
    if (op > static_cast<uint8_t>(RowOp::kUpdateInsert)) return false;
    uint64_t length;
    if (!ReadVarint(&record, &length) || length > record.size()) return false;
    auto row = storage::DecodeRow(record.substr(0, length), types);
    record.remove_prefix(length);
    if (!row) return false;
    chunk->AppendRow(*row, static_cast<RowOp>(op));
  }
  return record.empty();
}

}  // namespace stave::executor
