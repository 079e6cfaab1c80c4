#include "executor/connectors/watermark_reader.h"

#include <vector>

#include "executor/expression_evaluator.h"
#include "storage/key_codec.h"

namespace stave::executor {
namespace {

// Position layout: watermark (8 bytes, big-endian two's complement), late rows (8 bytes),
// then the wrapped reader's position.
constexpr size_t kHeaderBytes = 16;

}  // namespace

WatermarkReader::WatermarkReader(std::unique_ptr<SourceReader> inner, size_t event_time_column,
                                 planner::BoundExprPtr watermark)
    : inner_(std::move(inner)),
      event_time_column_(event_time_column),
      expression_(std::move(watermark)) {}

SourceReader::PollStatus WatermarkReader::Poll(size_t max_rows, Chunk* chunk,
                                               std::chrono::steady_clock::time_point* wake_at) {
  PollStatus status = inner_->Poll(max_rows, chunk, wake_at);
  if (status != PollStatus::kData || chunk->empty()) return status;
  Column candidates = Evaluate(*expression_, *chunk);
  const Column& event_time = chunk->columns[event_time_column_];
  std::vector<uint8_t> keep(chunk->size(), 1);
  bool any_late = false;
  for (size_t row = 0; row < chunk->size(); ++row) {
    // A row without an event time belongs to no window and cannot be late; it does not
    // move the watermark either.
    if (event_time.IsNull(row)) continue;
    if (event_time.ints[row] < watermark_) {
      keep[row] = 0;
      any_late = true;
      ++late_rows_;
      continue;
    }
    if (!candidates.IsNull(row) && candidates.ints[row] > watermark_) {
      watermark_ = candidates.ints[row];
    }
  }
  if (any_late) *chunk = chunk->Select(keep);
  // A chunk of late rows only is still progress: the caller reads on.
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
  position += inner_->Position();
  return position;
}

std::optional<WatermarkReader::DecodedPosition> WatermarkReader::DecodePosition(
    std::string_view position) {
  if (position.size() < kHeaderBytes) return std::nullopt;
  DecodedPosition decoded;
  decoded.watermark = static_cast<int64_t>(storage::ReadBigEndian64(position));
  decoded.late_rows = storage::ReadBigEndian64(position.substr(8));
  decoded.inner = position.substr(kHeaderBytes);
  return decoded;
}

Status WatermarkReader::Seek(std::string_view position) {
  std::optional<DecodedPosition> decoded = DecodePosition(position);
  if (!decoded) return Status::Corruption("a stream position without its watermark");
  watermark_ = decoded->watermark;
  late_rows_ = decoded->late_rows;
  // watermark_told_ stays at its minimum, so the restored watermark is told downstream.
  return inner_->Seek(decoded->inner);
}

}  // namespace stave::executor
