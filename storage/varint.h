#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stave::storage {

/// LEB128 variable-length unsigned integers, for lengths and counts inside encoded values.
inline void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

/// Reads a varint from the front of `*in`, advancing it. False if it is truncated.
inline bool ReadVarint(std::string_view* in, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64 && !in->empty(); shift += 7) {
    uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    *value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace stave::storage
