#include "executor/connectors/table/table_source.h"

#include "common/sql_error.h"
#include "executor/connectors/log_position.h"
#include "executor/plan_builder.h"
#include "storage/key_codec.h"

namespace stave::executor {

TableSource::TableSource(std::shared_ptr<Table> table, const storage::Store* store,
                         const std::string& reader)
    : table_(std::move(table)),
      store_(store),
      progress_("table " + table_->object().name + " for " + reader) {}

Chunk TableSource::Backfill() {
  std::shared_ptr<const storage::Snapshot> snapshot;
  {
    // Writers hold the mutex from choosing a sequence until it is published: under it, the
    // snapshot holds exactly the records below next_sequence(), and the rows they made.
    std::lock_guard lock(table_->mutex());
    next_sequence_ = table_->next_sequence();
    snapshot = store_->NewSnapshot().ValueOrThrow();
  }
  const planner::CatalogObject& object = table_->object();
  storage::RowTypes visible(table_->changelog_types().begin(),
                            table_->changelog_types().begin() + object.columns.size());
  Chunk out = Chunk::WithTypes(table_->changelog_types());
  bool corrupt = false;
  uint32_t rows_table = StateTableId(object.id, Table::kRowsSlot);
  progress_.Start(store_->ApproximateStateTablesSize(rows_table, rows_table + 1));
  snapshot
      ->ScanStateTable(rows_table,
                       [&](std::string_view key, std::string_view value) {
                         progress_.Row(key.size() + value.size());
                         auto row = storage::DecodeRow(value, visible);
                         if (!row) {
                           corrupt = true;
                           return false;
                         }
                         if (object.HasRowId()) {
                           std::string_view rest = key.substr(2);  // After the virtual node.
                           Value row_id;
                           storage::DecodeKeyValue(&rest, TypeId::kInt64, &row_id);
                           row->push_back(std::move(row_id));
                         }
                         out.AppendRow(*row, RowOp::kInsert);
                         return true;
                       })
      .ThrowIfError();
  if (corrupt) throw SqlError("XX001", "corrupt row in table \"" + object.name + "\"");
  backfilled_ = true;
  progress_.Finish();
  return out;
}

SourceReader::PollStatus TableSource::Poll(size_t max_rows, Chunk* chunk,
                                           std::chrono::steady_clock::time_point* wake_at) {
  if (!backfilled_) {
    *chunk = Backfill();
    return PollStatus::kData;
  }
  uint64_t end = table_->next_sequence();
  if (next_sequence_ >= end) {
    // The engine is also woken when a write commits; this is only a safety net.
    *wake_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    return PollStatus::kIdle;
  }
  Chunk out = Chunk::WithTypes(table_->changelog_types());
  bool corrupt = false;
  store_
      ->ReadTableLog(table_->id(), next_sequence_,
                     [&](uint64_t sequence, std::string_view record) {
                       if (sequence >= end) return false;
                       if (!DecodeChangeRecord(record, table_->changelog_types(), &out)) {
                         corrupt = true;
                         return false;
                       }
                       next_sequence_ = sequence + 1;
                       return out.size() <
                              max_rows;  // Whole records: a chunk may exceed max_rows by one.
                     })
      .ThrowIfError();
  if (corrupt) {
    throw SqlError("XX001", "corrupt log record in table \"" + table_->object().name + "\"");
  }
  *chunk = std::move(out);
  return PollStatus::kData;
}

std::string TableSource::Position() const {
  return LogPosition{backfilled_, next_sequence_}.Encode();
}

Status TableSource::Seek(std::string_view position) {
  std::optional<LogPosition> decoded = LogPosition::Decode(position);
  if (!decoded) return Status::Corruption("malformed table position");
  backfilled_ = decoded->backfilled;
  if (backfilled_) progress_.MarkDone();  // Recovered past it.
  next_sequence_ = decoded->next_sequence;
  return Status::Ok();
}

bool TableSource::CaughtUp(const SourceTargets& targets) const {
  auto it = targets.find(table_->id());
  return it == targets.end() || (backfilled_ && next_sequence_ >= it->second);
}

std::optional<std::pair<uint32_t, uint64_t>> TableSource::RetainedLog() const {
  // Before its backfill, the reader may still take a snapshot of any sequence from now on:
  // nothing may go until it has.
  return std::make_pair(table_->id(), backfilled_ ? next_sequence_ : 0);
}

}  // namespace stave::executor
