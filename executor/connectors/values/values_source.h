#pragma once

#include <cstdint>
#include <memory>

#include "executor/connectors/source_reader.h"
#include "planner/logical_plan.h"

namespace stave::executor {

/// The rows of a VALUES list or generate_series (for a node without rows: one row with no
/// columns), computed a chunk at a time so that a long series never has to fit in memory.
/// Shared by the batch engine and ValuesSource.
class ValuesRowsCursor {
 public:
  /// Evaluates the series bounds now; throws SqlError for a zero step.
  explicit ValuesRowsCursor(const planner::ValuesNode& node);

  /// Skips to row `row` (a position ValuesSource saved).
  void Seek(uint64_t row) { next_ = row; }
  uint64_t next_row() const { return next_; }
  bool done() const { return next_ >= count_; }

  /// The next up to `max_rows` rows (at least one when !done()).
  Chunk Next(size_t max_rows);

 private:
  const planner::ValuesNode& node_;
  std::vector<DataType> types_;
  // A series: its first value and step; a VALUES list: unused.
  int64_t start_ = 0;
  int64_t step_ = 1;
  uint64_t count_ = 0;
  uint64_t next_ = 0;
};

/// A view's constant relation (VALUES, generate_series): its rows once, then nothing. The
/// position counts the rows delivered, so a view restarted from a checkpoint after them does
/// not see them twice, and one restarted from before them sees them again.
class ValuesSource : public SourceReader {
 public:
  explicit ValuesSource(std::shared_ptr<const planner::ValuesNode> node) : node_(std::move(node)) {}

  PollStatus Poll(size_t max_rows, Chunk* chunk,
                  std::chrono::steady_clock::time_point* wake_at) override;
  std::string Position() const override;
  Status Seek(std::string_view position) override;
  bool CaughtUp(const SourceTargets& targets) const override {
    (void)targets;
    return Delivered();
  }

 private:
  bool Delivered() const {
    return seek_to_ == kDelivered || (cursor_ != nullptr && cursor_->done());
  }
  // Created at the first Poll, so an error in the bounds is the source's error.
  ValuesRowsCursor* Cursor();

  // A position past every row (a count no list or series reaches).
  static constexpr uint64_t kDelivered = UINT64_MAX;

  std::shared_ptr<const planner::ValuesNode> node_;
  std::unique_ptr<ValuesRowsCursor> cursor_;
  uint64_t seek_to_ = 0;
};

}  // namespace stave::executor
