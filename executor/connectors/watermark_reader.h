#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "executor/connectors/source_reader.h"
#include "planner/bound_expression.h"

namespace stave::executor {

/// Wraps the reader of a stream declared with `WATERMARK FOR column AS expression`.
///
/// Each split of the stream (a Kafka partition; a reader of one split has one) has its own
/// watermark: the highest value of the expression over the rows of that split so far. A row
/// whose event-time column is below its split's watermark when it arrives is late: dropped
/// and counted. The stream's watermark, told downstream, is the minimum over the splits —
/// so no row that passes is ever below it — except that a split with no row for the idle
/// timeout (if one is set) is left out until it has rows again, so an idle partition does
/// not hold event time back; its rows below the stream's watermark are then late too.
///
/// Judged per split, what is late depends only on the order of that split's own rows, which
/// a replay repeats: the split watermarks, the stream's watermark and the count of late rows
/// are part of the position a checkpoint records, so a replay after a crash drops exactly
/// the rows the first run dropped. (Idleness is wall-clock time, which no replay repeats: a
/// split that comes back from idleness may lose different rows in a replay.)
class WatermarkReader : public SourceReader {
 public:
  WatermarkReader(std::unique_ptr<SourceReader> inner, size_t event_time_column,
                  planner::BoundExprPtr watermark,
                  std::optional<std::chrono::milliseconds> idle_timeout = std::nullopt);

  PollStatus Poll(size_t max_rows, Chunk* chunk,
                  std::chrono::steady_clock::time_point* wake_at) override;
  std::string Position() const override;
  Status Seek(std::string_view position) override;
  void SetStartEpoch(uint64_t epoch) override { inner_->SetStartEpoch(epoch); }
  std::vector<DeadLetter> TakeDeadLetters() override { return inner_->TakeDeadLetters(); }
  uint64_t bad_records() const override { return inner_->bad_records(); }
  bool CaughtUp(const SourceTargets& targets) const override { return inner_->CaughtUp(targets); }
  std::optional<int64_t> TakeWatermark() override;
  uint64_t late_rows() const override { return late_rows_; }

  // What the wrapped reader knows of itself, unchanged by the watermark: its log, bytes,
  // backfill, splits and lag. Lag() and backfill() stay thread-safe: inner_ never changes.
  std::optional<std::pair<uint32_t, uint64_t>> RetainedLog() const override {
    return inner_->RetainedLog();
  }
  std::optional<uint64_t> payload_bytes() const override { return inner_->payload_bytes(); }
  std::optional<BackfillStatus> backfill() const override { return inner_->backfill(); }
  std::vector<int32_t> Splits() const override { return inner_->Splits(); }
  std::vector<std::pair<int32_t, int64_t>> Lag() const override { return inner_->Lag(); }
  /// The splits of the rows of the last Poll that were not late, in order.
  const std::vector<int32_t>& RowSplits() const override { return row_splits_; }

  /// What a recorded position holds, for stave_catalog.sources.
  struct DecodedPosition {
    int64_t watermark = INT64_MIN;
    uint64_t late_rows = 0;
    std::map<int32_t, int64_t> splits;  ///< Split → its watermark.
    std::string_view inner;             ///< The wrapped reader's own position.
  };
  static std::optional<DecodedPosition> DecodePosition(std::string_view position);

 private:
  using Clock = std::chrono::steady_clock;
  struct Split {
    int64_t watermark = INT64_MIN;
    Clock::time_point last_row;
  };

  /// Follows the inner reader's list of splits (a new one starts active, with no watermark).
  void UpdateSplits(Clock::time_point now);
  /// Raises the stream's watermark to the minimum over the active splits; returns when the
  /// next active split would fall idle (max() if never).
  Clock::time_point Advance(Clock::time_point now);

  std::unique_ptr<SourceReader> inner_;
  size_t event_time_column_;
  planner::BoundExprPtr expression_;
  std::optional<std::chrono::milliseconds> idle_timeout_;
  std::map<int32_t, Split> splits_;
  int64_t watermark_ = INT64_MIN;
  int64_t watermark_told_ = INT64_MIN;  // The last watermark TakeWatermark returned.
  uint64_t late_rows_ = 0;
  std::vector<int32_t> row_splits_;  // The inner reader's, less the late rows'.
};

}  // namespace stave::executor
