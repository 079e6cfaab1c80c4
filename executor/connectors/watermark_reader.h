#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "executor/connectors/source_reader.h"
#include "planner/bound_expression.h"

namespace stave::executor {

/// Wraps the reader of a stream declared with `WATERMARK FOR column AS expression`: the
/// stream's watermark is the highest value of the expression over the rows read so far, and
/// a row whose event-time column is below the watermark when it arrives is late — dropped
/// and counted. Rows are judged one at a time, in the order the source gives them.
///
/// The watermark and the count of late rows are part of the position a checkpoint records,
/// so a replay after a crash drops exactly the rows the first run dropped: what is late
/// depends on what came before it, and that must not change because the process died.
class WatermarkReader : public SourceReader {
 public:
  WatermarkReader(std::unique_ptr<SourceReader> inner, size_t event_time_column,
                  planner::BoundExprPtr watermark);

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

  /// What a recorded position holds, for stave_catalog.sources.
  struct DecodedPosition {
    int64_t watermark = INT64_MIN;
    uint64_t late_rows = 0;
    std::string_view inner;  ///< The wrapped reader's own position.
  };
  static std::optional<DecodedPosition> DecodePosition(std::string_view position);

 private:
  std::unique_ptr<SourceReader> inner_;
  size_t event_time_column_;
  planner::BoundExprPtr expression_;
  int64_t watermark_ = INT64_MIN;
  int64_t watermark_told_ = INT64_MIN;  // The last watermark TakeWatermark returned.
  uint64_t late_rows_ = 0;
};

}  // namespace stave::executor
