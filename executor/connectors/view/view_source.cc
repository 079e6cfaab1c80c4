#include "executor/connectors/view/view_source.h"

#include <algorithm>

#include "common/sql_error.h"
#include "executor/change_record.h"
#include "executor/plan_builder.h"
#include "storage/key_codec.h"

namespace stave::executor {

ViewSource::ViewSource(planner::CatalogObjectPtr view, const storage::Store* store)
    : view_(std::move(view)), store_(store) {
  for (const auto& column : view_->ChangelogColumns()) changelog_types_.push_back(column.type);
}

SourceReader::PollStatus ViewSource::Poll(size_t max_rows, Chunk* chunk,
                                          std::chrono::steady_clock::time_point* wake_at) {
  Chunk out = Chunk::WithTypes(changelog_types_);
  if (!backfilled_) {
    std::shared_ptr<const storage::Snapshot> snapshot = store_->NewSnapshot();
    storage::RowTypes visible(changelog_types_.begin(), changelog_types_.end() - 1);
    bool corrupt = false;
    snapshot
        ->ScanStateTable(StateTableId(view_->id, kViewRowsSlot),
                         [&](std::string_view key, std::string_view value) {
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
    epoch_ = snapshot->epoch();
    *chunk = std::move(out);
    return PollStatus::kData;
  }
  bool corrupt = false;
  bool full = false;
  // The log holds a record for every committed epoch that changed the view, and none for
  // epochs not committed yet: this thread commits them.
  uint64_t committed = store_->committed_epoch();
  store_
      ->ReadTableLog(view_->id, epoch_ + 1,
                     [&](uint64_t epoch, std::string_view record) {
                       if (!DecodeChangeRecord(record, changelog_types_, &out)) {
                         corrupt = true;
                         return false;
                       }
                       epoch_ = epoch;
                       full = out.size() >= max_rows;
                       return !full;
                     })
      .ThrowIfError();
  if (corrupt)
    throw SqlError("XX001", "corrupt change log of materialized view \"" + view_->name + "\"");
  // Epochs without a record changed nothing: having read to the end, the reader is at the
  // committed epoch.
  if (!full) epoch_ = std::max(epoch_, committed);
  if (out.empty()) {
    // New records appear only when an epoch commits.
    *wake_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    return PollStatus::kIdle;
  }
  *chunk = std::move(out);
  return PollStatus::kData;
}

std::string ViewSource::Position() const {
  std::string bytes(1, backfilled_ ? 1 : 0);
  storage::AppendBigEndian64(epoch_, &bytes);
  return bytes;
}

Status ViewSource::Seek(std::string_view position) {
  if (position.size() != 9) return Status::Corruption("malformed view position");
  backfilled_ = position[0] != 0;
  epoch_ = storage::ReadBigEndian64(position.substr(1));
  return Status::Ok();
}

bool ViewSource::CaughtUp(const SourceTargets& targets) const {
  auto it = targets.find(view_->id);
  return it == targets.end() || (backfilled_ && epoch_ >= it->second);
}

std::optional<std::pair<uint32_t, uint64_t>> ViewSource::RetainedLog() const {
  if (!backfilled_) return std::nullopt;
  return std::make_pair(view_->id, epoch_ + 1);
}

}  // namespace stave::executor
