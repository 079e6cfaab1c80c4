#pragma once

#include "executor/connectors/source_reader.h"
#include "executor/connectors/view/view_watermark.h"
#include "planner/catalog.h"
#include "storage/row_codec.h"
#include "storage/store.h"

namespace stave::executor {

/// Reads a materialized view as a changelog, for a view defined over it. It starts with a
/// backfill: the view's rows at a committed epoch E, read from a snapshot and delivered in
/// one chunk (so no checkpoint can fall inside it). Then it follows the view's change log
/// from epoch E + 1: per epoch, a record from each materializing instance, written in the
/// same batch as the view's state. Its position is the next log sequence to read.
///
/// A view that carries event time publishes its watermark, per materializing instance, in
/// its state and in its log records: the reader follows them (ViewWatermark) and tells the
/// view's watermark downstream, so windows over the view close. What it knows of them is
/// part of its position.
class ViewSource : public SourceReader {
 public:
  /// `reader`: what reads it, for the log ("view totals").
  ViewSource(planner::CatalogObjectPtr view, const storage::Store* store,
             const std::string& reader = "a query");

  PollStatus Poll(size_t max_rows, Chunk* chunk,
                  std::chrono::steady_clock::time_point* wake_at) override;
  void SetStartEpoch(uint64_t epoch) override { start_epoch_ = epoch; }
  std::string Position() const override;
  Status Seek(std::string_view position) override;
  bool CaughtUp(const SourceTargets& targets) const override;
  std::optional<std::pair<uint32_t, uint64_t>> RetainedLog() const override;
  std::optional<BackfillStatus> backfill() const override { return progress_.status(); }
  std::optional<int64_t> TakeWatermark() override;

 private:
  /// What each materializing instance published by the snapshot's epoch.
  void ReadPublishedWatermarks(const storage::Snapshot& snapshot);

  planner::CatalogObjectPtr view_;
  const storage::Store* store_;
  storage::RowTypes changelog_types_;
  uint64_t start_epoch_ = 0;  // The backfill's snapshot is at least this epoch.
  bool backfilled_ = false;
  uint64_t next_sequence_ = 0;  // In the change log, once backfilled.
  BackfillProgress progress_;
  bool carries_event_time_;
  ViewWatermark watermark_;
  int64_t watermark_told_ = INT64_MIN;  // The last watermark TakeWatermark returned.
};

}  // namespace stave::executor
