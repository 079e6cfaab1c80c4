#include "executor/connectors/table/table_source.h"

#include "common/sql_error.h"
#include "storage/key_codec.h"

namespace stave::executor {

SourceReader::PollStatus TableSource::Poll(size_t max_rows, Chunk* chunk,
                                           std::chrono::steady_clock::time_point* wake_at) {
  uint64_t end = table_->next_sequence();
  if (next_sequence_ >= end) {
    // The engine is also woken when a write commits; this is only a safety net.
    *wake_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    return PollStatus::kIdle;
  }
  Chunk out = Chunk::WithTypes(table_->changelog_types());
  bool corrupt = false;
  store_
      ->ReadTableLog(table_->id(), next_sequence_,
                     [&](uint64_t sequence, std::string_view record) {
                       if (sequence >= end) return false;
                       if (!DecodeChangeRecord(record, table_->changelog_types(), &out)) {
                         corrupt = true;
                         return false;
                       }
                       next_sequence_ = sequence + 1;
                       return out.size() <
                              max_rows;  // Whole records: a chunk may exceed max_rows by one.
                     })
      .ThrowIfError();
  if (corrupt) {
    throw SqlError("XX001", "corrupt log record in table \"" + table_->object().name + "\"");
  }
  *chunk = std::move(out);
  return PollStatus::kData;
}

std::string TableSource::Position() const {
  std::string bytes;
  storage::AppendBigEndian64(next_sequence_, &bytes);
  return bytes;
}

Status TableSource::Seek(std::string_view position) {
  if (position.size() != 8) return Status::Corruption("malformed table position");
  next_sequence_ = storage::ReadBigEndian64(position);
  return Status::Ok();
}

bool TableSource::CaughtUp(const SourceTargets& targets) const {
  auto it = targets.find(table_->id());
  return it == targets.end() || next_sequence_ >= it->second;
}

}  // namespace stave::executor
