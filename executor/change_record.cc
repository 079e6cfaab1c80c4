#include "executor/change_record.h"

#include "storage/key_codec.h"
#include "storage/varint.h"

namespace stave::executor {

using storage::AppendVarint;
using storage::ReadVarint;

namespace {

// After the rows, a record may end with this byte and an encoded InstanceWatermark.
constexpr char kWatermarkMarker = 'W';

}  // namespace

std::string InstanceWatermark::Encode() const {
  std::string bytes;
  storage::AppendBigEndian32(parallelism, &bytes);
  storage::AppendBigEndian64(static_cast<uint64_t>(watermark), &bytes);
  return bytes;
}

std::optional<InstanceWatermark> InstanceWatermark::Decode(std::string_view bytes) {
  if (bytes.size() != kEncodedBytes) return std::nullopt;
  InstanceWatermark decoded;
  decoded.parallelism = storage::ReadBigEndian32(bytes);
  decoded.watermark = static_cast<int64_t>(storage::ReadBigEndian64(bytes.substr(4)));
  if (decoded.parallelism == 0) return std::nullopt;
  return decoded;
}

std::string EncodeChangeRecord(const std::vector<RowChange>& changes,
                               const storage::RowTypes& types,
                               std::optional<InstanceWatermark> watermark) {
  std::string record;
  AppendVarint(changes.size(), &record);
  for (const RowChange& change : changes) {
    record.push_back(static_cast<char>(change.op));
    std::string row;
    storage::EncodeRow(change.row, types, &row);
    AppendVarint(row.size(), &record);
    record.append(row);
  }
  if (watermark) {
    record.push_back(kWatermarkMarker);
    record.append(watermark->Encode());
  }
  return record;
}

std::string EncodeChangeRecord(const Chunk& changes, const storage::RowTypes& types) {
  std::string record;
  AppendVarint(changes.size(), &record);
  std::string row;
  for (size_t r = 0; r < changes.size(); ++r) {
    record.push_back(static_cast<char>(changes.ops[r]));
    row.clear();
    storage::EncodeRowFrom(ChunkRow{changes, r}, types, &row);
    AppendVarint(row.size(), &record);
    record.append(row);
  }
  return record;
}

bool DecodeChangeRecord(std::string_view record, const storage::RowTypes& types, Chunk* chunk,
                        std::optional<InstanceWatermark>* watermark) {
  uint64_t count;
  if (!ReadVarint(&record, &count)) return false;
  for (uint64_t i = 0; i < count; ++i) {
    if (record.empty()) return false;
    auto op = static_cast<uint8_t>(record.front());
    record.remove_prefix(1);
    if (op > static_cast<uint8_t>(RowOp::kUpdateInsert)) return false;
    uint64_t length;
    if (!ReadVarint(&record, &length) || length > record.size()) return false;
    auto row = storage::DecodeRow(record.substr(0, length), types);
    record.remove_prefix(length);
    if (!row) return false;
    chunk->AppendRow(*row, static_cast<RowOp>(op));
  }
  if (record.empty()) return true;
  if (record.front() != kWatermarkMarker) return false;
  std::optional<InstanceWatermark> decoded = InstanceWatermark::Decode(record.substr(1));
  if (!decoded) return false;
  if (watermark) *watermark = decoded;
  return true;
}

}  // namespace stave::executor
