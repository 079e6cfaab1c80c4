#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stave::executor {

/// A record a source could not decode, kept because its stream says on_error = 'dead_letter'.
/// Stored by where it was read (storage::WriteBatch::PutDeadLetter), so a replay stores it
/// once.
struct DeadLetter {
  uint32_t stream_id = 0;
  int32_t partition = 0;
  int64_t offset = 0;
  std::string error;  ///< Why it could not be decoded.
  std::string raw;    ///< The record's bytes as read.
};

/// The stored value of a dead letter: its error and raw bytes (the key holds the rest).
std::string EncodeDeadLetter(const DeadLetter& letter);
/// Fills `error` and `raw` of `letter` from EncodeDeadLetter's bytes; false if malformed.
bool DecodeDeadLetter(std::string_view bytes, DeadLetter* letter);

/// Bytes as text for a varchar column: themselves when they are valid UTF-8 without NUL,
/// else PostgreSQL's bytea hex form (`\x…`).
std::string RawBytesAsText(std::string_view bytes);

}  // namespace stave::executor
