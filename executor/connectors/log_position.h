#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "storage/key_codec.h"

namespace stave::executor {

/// Where a reader of a change log (a table's or a view's) stands: whether its backfill from
/// a snapshot is done, and the next log sequence it reads. Checkpointed as a flag byte and
/// the sequence, big-endian.
struct LogPosition {
  bool backfilled = false;
  uint64_t next_sequence = 0;

  std::string Encode() const {
    std::string bytes(1, backfilled ? 1 : 0);
    storage::AppendBigEndian64(next_sequence, &bytes);
    return bytes;
  }
  /// Nullopt if `bytes` is not an encoded position.
  static std::optional<LogPosition> Decode(std::string_view bytes) {
    if (bytes.size() != 9) return std::nullopt;
    return LogPosition{bytes[0] != 0, storage::ReadBigEndian64(bytes.substr(1))};
  }
};

}  // namespace stave::executor
