#include "executor/connectors/watermark_reader.h"

#include <algorithm>
#include <vector>

#include "executor/expression_evaluator.h"
#include "storage/key_codec.h"

namespace stave::executor {
namespace {

// Position layout: the stream's watermark (8 bytes, big-endian two's complement), late rows
// (8), the number of splits (4), then per split its id (4) and watermark (8); then the
// wrapped reader's position.
constexpr size_t kHeaderBytes = 20;
constexpr size_t kSplitBytes = 12;

void AppendBigEndian32(uint32_t value, std::string* out) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

uint32_t ReadBigEndian32(std::string_view bytes) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

}  // namespace

WatermarkReader::WatermarkReader(std::unique_ptr<SourceReader> inner, size_t event_time_column,
                                 planner::BoundExprPtr watermark,
                                 std::optional<std::chrono::milliseconds> idle_timeout)
    : inner_(std::move(inner)),
      event_time_column_(event_time_column),
      expression_(std::move(watermark)),
      idle_timeout_(idle_timeout) {}

void WatermarkReader::UpdateSplits(Clock::time_point now) {
  std::vector<int32_t> current = inner_->Splits();
  if (current.empty()) current.push_back(0);  // A reader of one split.
  for (int32_t id : current) splits_.try_emplace(id, Split{INT64_MIN, now});
  // A split the reader no longer lists (the one placeholder of a reader that learns its
  // splits later) goes, unless it had rows.
  for (auto it = splits_.begin(); it != splits_.end();) {
    bool listed = std::find(current.begin(), current.end(), it->first) != current.end();
    it = !listed && it->second.watermark == INT64_MIN ? splits_.erase(it) : std::next(it);
  }
}

WatermarkReader::Clock::time_point WatermarkReader::Advance(Clock::time_point now) {
  int64_t lowest = INT64_MAX;
  bool any_active = false;
  Clock::time_point next_idle = Clock::time_point::max();
  for (const auto& [id, split] : splits_) {
    if (idle_timeout_) {
      Clock::time_point idle_at = split.last_row + *idle_timeout_;
      if (now >= idle_at) continue;  // Idle: does not hold event time back.
      next_idle = std::min(next_idle, idle_at);
    }
    any_active = true;
    lowest = std::min(lowest, split.watermark);
  }
  if (any_active && lowest > watermark_) watermark_ = lowest;
  return next_idle;
}

SourceReader::PollStatus WatermarkReader::Poll(size_t max_rows, Chunk* chunk,
                                               Clock::time_point* wake_at) {
  PollStatus status = inner_->Poll(max_rows, chunk, wake_at);
  Clock::time_point now = Clock::now();
  UpdateSplits(now);
  row_splits_.clear();
  if (status == PollStatus::kData && !chunk->empty()) {
    Column candidates = Evaluate(*expression_, *chunk);
    const Column& event_time = chunk->columns[event_time_column_];
    const std::vector<int32_t>& row_splits = inner_->RowSplits();
    std::vector<uint8_t> keep(chunk->size(), 1);
    bool any_late = false;
    for (size_t row = 0; row < chunk->size(); ++row) {
      Split& split = splits_[row_splits.empty() ? splits_.begin()->first : row_splits[row]];
      split.last_row = now;
      // A row without an event time belongs to no window and cannot be late; it does not
      // move the watermark either.
      if (event_time.IsNull(row)) continue;
      // The stream's watermark is at most the split's, unless the split was idle.
      if (event_time.ints[row] < std::max(split.watermark, watermark_)) {
        keep[row] = 0;
        any_late = true;
        ++late_rows_;
        continue;
      }
      if (!candidates.IsNull(row))
        split.watermark = std::max(split.watermark, candidates.ints[row]);
    }
    if (any_late) *chunk = chunk->Select(keep);
    if (!row_splits.empty()) {
      for (size_t row = 0; row < keep.size(); ++row)
        if (keep[row]) row_splits_.push_back(row_splits[row]);
    }
  }
  // Also when no row came: a split may have fallen idle. Wake then to look again.
  Clock::time_point next_idle = Advance(now);
  if (status == PollStatus::kIdle) *wake_at = std::min(*wake_at, next_idle);
  return status;
}

std::optional<int64_t> WatermarkReader::TakeWatermark() {
  if (watermark_ == watermark_told_) return std::nullopt;
  watermark_told_ = watermark_;
  return watermark_;
}

std::string WatermarkReader::Position() const {
  std::string position;
  storage::AppendBigEndian64(static_cast<uint64_t>(watermark_), &position);
  storage::AppendBigEndian64(late_rows_, &position);
  AppendBigEndian32(static_cast<uint32_t>(splits_.size()), &position);
  for (const auto& [id, split] : splits_) {
    AppendBigEndian32(static_cast<uint32_t>(id), &position);
    storage::AppendBigEndian64(static_cast<uint64_t>(split.watermark), &position);
  }
  position += inner_->Position();
  return position;
}

std::optional<WatermarkReader::DecodedPosition> WatermarkReader::DecodePosition(
    std::string_view position) {
  if (position.size() < kHeaderBytes) return std::nullopt;
  DecodedPosition decoded;
  decoded.watermark = static_cast<int64_t>(storage::ReadBigEndian64(position));
  decoded.late_rows = storage::ReadBigEndian64(position.substr(8));
  uint32_t count = ReadBigEndian32(position.substr(16));
  position.remove_prefix(kHeaderBytes);
  if (position.size() / kSplitBytes < count) return std::nullopt;
  for (uint32_t i = 0; i < count; ++i) {
    auto id = static_cast<int32_t>(ReadBigEndian32(position));
    decoded.splits[id] = static_cast<int64_t>(storage::ReadBigEndian64(position.substr(4)));
    position.remove_prefix(kSplitBytes);
  }
  decoded.inner = position;
  return decoded;
}

Status WatermarkReader::Seek(std::string_view position) {
  std::optional<DecodedPosition> decoded = DecodePosition(position);
  if (!decoded) return Status::Corruption("a stream position without its watermark");
  watermark_ = decoded->watermark;
  late_rows_ = decoded->late_rows;
  splits_.clear();
  // Every split starts active again: idleness is measured from now.
  Clock::time_point now = Clock::now();
  for (const auto& [id, watermark] : decoded->splits) splits_[id] = Split{watermark, now};
  // watermark_told_ stays at its minimum, so the restored watermark is told downstream.
  return inner_->Seek(decoded->inner);
}

}  // namespace stave::executor
