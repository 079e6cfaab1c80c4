#include "executor/connectors/view/view_source.h"

#include <algorithm>

#include "common/sql_error.h"
#include "executor/change_record.h"
#include "executor/connectors/log_position.h"
#include "executor/plan_builder.h"

namespace stave::executor {

ViewSource::ViewSource(planner::CatalogObjectPtr view, const storage::Store* store,
                       const std::string& reader)
    : view_(std::move(view)),
      store_(store),
      progress_("materialized view " + view_->name + " for " + reader) {
  for (const auto& column : view_->ChangelogColumns()) changelog_types_.push_back(column.type);
}

SourceReader::PollStatus ViewSource::Poll(size_t max_rows, Chunk* chunk,
                                          std::chrono::steady_clock::time_point* wake_at) {
  Chunk out = Chunk::WithTypes(changelog_types_);
  if (!backfilled_ && store_->committed_epoch() < start_epoch_) {
    // The view logs its changes only after the epoch that added this reader: wait for it.
    *wake_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
    return PollStatus::kIdle;
  }
  if (!backfilled_) {
    std::shared_ptr<const storage::Snapshot> snapshot = store_->NewSnapshot().ValueOrThrow();
    storage::RowTypes visible(changelog_types_.begin(), changelog_types_.end() - 1);
    bool corrupt = false;
    uint32_t rows_table = StateTableId(view_->id, kViewRowsSlot);
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
                           row->push_back(Value::String(std::string(key.substr(2))));
                           out.AppendRow(*row, RowOp::kInsert);
                           return true;
                         })
        .ThrowIfError();
    if (corrupt)
      throw SqlError("XX001", "corrupt row in materialized view \"" + view_->name + "\"");
    backfilled_ = true;
    progress_.Finish();
    next_sequence_ = ViewLogSequence(snapshot->epoch() + 1, 0);
    *chunk = std::move(out);
    return PollStatus::kData;
  }
  bool corrupt = false;
  bool full = false;
  // The log holds the records of committed epochs that changed the view, and none of
  // epochs not committed yet. Read the committed epoch first: records of later epochs read
  // below are whole too, as each epoch's records commit in one write.
  uint64_t committed = store_->committed_epoch();
  store_
      ->ReadTableLog(view_->id, next_sequence_,
                     [&](uint64_t sequence, std::string_view record) {
                       if (!DecodeChangeRecord(record, changelog_types_, &out)) {
                         corrupt = true;
                         return false;
                       }
                       next_sequence_ = sequence + 1;
                       full = out.size() >= max_rows;
                       return !full;
                     })
      .ThrowIfError();
  if (corrupt)
    throw SqlError("XX001", "corrupt change log of materialized view \"" + view_->name + "\"");
  // Epochs without a record changed nothing: having read to the end, the reader is at the
  // committed epoch.
  if (!full) next_sequence_ = std::max(next_sequence_, ViewLogSequence(committed + 1, 0));
  if (out.empty()) {
    // New records appear only when an epoch commits.
    *wake_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    return PollStatus::kIdle;
  }
  *chunk = std::move(out);
  return PollStatus::kData;
}

std::string ViewSource::Position() const {
  return LogPosition{backfilled_, next_sequence_}.Encode();
}

Status ViewSource::Seek(std::string_view position) {
  std::optional<LogPosition> decoded = LogPosition::Decode(position);
  if (!decoded) return Status::Corruption("malformed view position");
  backfilled_ = decoded->backfilled;
  if (backfilled_) progress_.MarkDone();  // Recovered past it.
  next_sequence_ = decoded->next_sequence;
  return Status::Ok();
}

bool ViewSource::CaughtUp(const SourceTargets& targets) const {
  auto it = targets.find(view_->id);
  return it == targets.end() ||
         (backfilled_ && next_sequence_ >= ViewLogSequence(it->second + 1, 0));
}

std::optional<std::pair<uint32_t, uint64_t>> ViewSource::RetainedLog() const {
  if (!backfilled_) return std::nullopt;
  return std::make_pair(view_->id, next_sequence_);
}

}  // namespace stave::executor
