#include "executor/connectors/values/values_source.h"

#include <charconv>
#include <limits>

#include "common/sql_error.h"
#include "executor/expression_evaluator.h"

namespace stave::executor {

namespace {

// The one row with no columns that constant expressions are evaluated against.
Chunk OneEmptyRow() {
  Chunk one;
  one.ops.push_back(RowOp::kInsert);
  return one;
}

}  // namespace

ValuesRowsCursor::ValuesRowsCursor(const planner::ValuesNode& node) : node_(node) {
  for (const planner::Column& column : node.output) types_.push_back(column.type);
  if (!node.series) {
    count_ = node.rows.empty() ? 1 : node.rows.size();
    return;
  }
  Chunk one = OneEmptyRow();
  std::vector<Value> bounds;
  for (const planner::BoundExprPtr& bound : node.rows[0]) {
    bounds.push_back(Evaluate(*bound, one).GetValue(0));
  }
  // A NULL bound yields no rows, as in PostgreSQL.
  for (const Value& bound : bounds) {
    if (bound.is_null()) return;
  }
  start_ = bounds[0].int_value();
  int64_t stop = bounds[1].int_value();
  step_ = bounds[2].int_value();
  if (step_ == 0) throw SqlError("22023", "step size cannot equal zero");
  __int128 span = static_cast<__int128>(stop) - start_;
  if ((step_ > 0 && span < 0) || (step_ < 0 && span > 0)) return;
  __int128 count = span / step_ + 1;
  count_ = count > std::numeric_limits<uint64_t>::max() ? std::numeric_limits<uint64_t>::max()
                                                        : static_cast<uint64_t>(count);
}

Chunk ValuesRowsCursor::Next(size_t max_rows) {
  uint64_t end = next_ + std::min<uint64_t>(max_rows, count_ - std::min(next_, count_));
  if (!node_.series && node_.rows.empty()) {
    next_ = end;
    return end > 0 ? OneEmptyRow() : Chunk();
  }
  Chunk out = Chunk::WithTypes(types_);
  if (node_.series) {
    for (; next_ < end; ++next_) {
      out.columns[0].AppendInt(static_cast<int64_t>(start_ + static_cast<__int128>(next_) * step_));
      out.ops.push_back(RowOp::kInsert);
    }
    return out;
  }
  Chunk one = OneEmptyRow();
  for (; next_ < end; ++next_) {
    const std::vector<planner::BoundExprPtr>& row = node_.rows[next_];
    for (size_t c = 0; c < row.size(); ++c) out.columns[c].AppendFrom(Evaluate(*row[c], one), 0);
    out.ops.push_back(RowOp::kInsert);
  }
  return out;
}

ValuesRowsCursor* ValuesSource::Cursor() {
  if (cursor_ == nullptr) {
    cursor_ = std::make_unique<ValuesRowsCursor>(*node_);
    cursor_->Seek(seek_to_);
  }
  return cursor_.get();
}

SourceReader::PollStatus ValuesSource::Poll(size_t max_rows, Chunk* chunk,
                                            std::chrono::steady_clock::time_point* wake_at) {
  (void)wake_at;
  ValuesRowsCursor* cursor = Cursor();
  if (cursor->done()) return PollStatus::kFinished;
  *chunk = cursor->Next(std::max<size_t>(max_rows, 1));
  return PollStatus::kData;
}

std::string ValuesSource::Position() const {
  if (Delivered()) return "delivered";
  uint64_t row = cursor_ != nullptr ? cursor_->next_row() : seek_to_;
  return row == 0 ? "" : std::to_string(row);
}

Status ValuesSource::Seek(std::string_view position) {
  uint64_t row = 0;
  if (position == "delivered") {
    row = kDelivered;
  } else if (!position.empty()) {
    auto [end, error] = std::from_chars(position.data(), position.data() + position.size(), row);
    if (error != std::errc() || end != position.data() + position.size()) {
      return Status::Corruption("bad VALUES position \"" + std::string(position) + "\"");
    }
  }
  seek_to_ = row;
  if (cursor_ != nullptr) cursor_->Seek(row);
  return Status::Ok();
}

}  // namespace stave::executor
