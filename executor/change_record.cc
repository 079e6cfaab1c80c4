#include "executor/change_record.h"

#include "storage/varint.h"

namespace stave::executor {

using storage::AppendVarint;
using storage::ReadVarint;

std::string EncodeChangeRecord(const std::vector<RowChange>& changes,
                               const storage::RowTypes& types) {
  std::string record;
  AppendVarint(changes.size(), &record);
  for (const RowChange& change : changes) {
    record.push_back(static_cast<char>(change.op));
    std::string row;
    storage::EncodeRow(change.row, types, &row);
    AppendVarint(row.size(), &record);
    record.append(row);
  }
  return record;
}

bool DecodeChangeRecord(std::string_view record, const storage::RowTypes& types, Chunk* chunk) {
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
  return record.empty();
}

}  // namespace stave::executor
