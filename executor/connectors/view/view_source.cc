#include "executor/connectors/view/view_source.h"

#include <algorithm>

#include "common/sql_error.h"
#include "executor/change_record.h"
#include "executor/connectors/log_position.h"
#include "executor/operators/materialize_operator.h"
#include "executor/plan_builder.h"
#include "storage/state_table.h"

namespace stave::executor {
namespace {

// A position is a LogPosition, then for a view that carries event time what the reader
// knows of its watermark (ViewWatermark::Encode).
constexpr size_t kLogPositionBytes = 9;

}  // namespace

ViewSource::ViewSource(planner::CatalogObjectPtr view, const storage::Store* store,
                       const std::string& reader)
    : view_(std::move(view)),
      store_(store),
      progress_("materialized view " + view_->name + " for " + reader),
      carries_event_time_(!view_->event_time_columns.empty()) {
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
                           // Past the row: a grouped view's aggregate state.
                           auto row = storage::DecodeRowPrefix(&value, visible);
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
    if (carries_event_time_) ReadPublishedWatermarks(*snapshot);
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
                       std::optional<InstanceWatermark> published;
                       if (!DecodeChangeRecord(record, changelog_types_, &out, &published)) {
                         corrupt = true;
                         return false;
                       }
                       if (published) {
                         watermark_.Note(ViewLogInstance(sequence), *published);
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

void ViewSource::ReadPublishedWatermarks(const storage::Snapshot& snapshot) {
  std::string prefix;
  storage::AppendBigEndian16(storage::VirtualNodeOf(kViewWatermarkGroup), &prefix);
  prefix.append(kViewWatermarkGroup);
  bool corrupt = false;
  snapshot
      .ScanStateTable(StateTableId(view_->id, kViewRowsSlot + 1), prefix,
                      [&](std::string_view key, std::string_view value) {
                        std::optional<InstanceWatermark> published =
                            InstanceWatermark::Decode(value);
                        key.remove_prefix(prefix.size());
                        if (key.size() != 4 || !published) {
                          corrupt = true;
                          return false;
                        }
                        watermark_.Note(storage::ReadBigEndian32(key), *published);
                        return true;
                      })
      .ThrowIfError();
  if (corrupt) {
    throw SqlError("XX001", "corrupt watermark in materialized view \"" + view_->name + "\"");
  }
}

std::optional<int64_t> ViewSource::TakeWatermark() {
  if (watermark_.value() <= watermark_told_) return std::nullopt;
  watermark_told_ = watermark_.value();
  return watermark_told_;
}

std::string ViewSource::Position() const {
  std::string position = LogPosition{backfilled_, next_sequence_}.Encode();
  if (carries_event_time_) position.append(watermark_.Encode());
  return position;
}

Status ViewSource::Seek(std::string_view position) {
  std::optional<LogPosition> decoded = LogPosition::Decode(position.substr(0, kLogPositionBytes));
  if (!decoded) return Status::Corruption("malformed view position");
  ViewWatermark watermark;
  if (position.size() > kLogPositionBytes) {
    std::optional<ViewWatermark> recorded =
        ViewWatermark::Decode(position.substr(kLogPositionBytes));
    if (!recorded) return Status::Corruption("malformed view position");
    watermark = std::move(*recorded);
  }
  backfilled_ = decoded->backfilled;
  if (backfilled_) progress_.MarkDone();  // Recovered past it.
  next_sequence_ = decoded->next_sequence;
  watermark_ = std::move(watermark);
  watermark_told_ = INT64_MIN;  // Downstream starts without one.
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
