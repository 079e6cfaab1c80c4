#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"
#include "common/value.h"
#include "storage/varint.h"

namespace stave::storage {

/// A row's column types, in order.
using RowTypes = std::vector<DataType>;

/// Compact, not order-preserving encoding of a row for state values: per column a tag byte
/// (0 NULL, 1 value) then 8 little-endian bytes for integers and doubles, a varint length
/// and the bytes for strings, or a numeric as AppendRowDecimal writes it.
void EncodeRow(const std::vector<Value>& row, const RowTypes& types, std::string* out);

/// Appends the 8 bytes a row holds an integer or a double's bits in.
inline void AppendFixed64(uint64_t value, std::string* out) {
  char bytes[8];
  std::memcpy(bytes, &value, 8);
  out->append(bytes, 8);
}

/// A numeric in a row: its kind (0 finite, 1 NaN, 2 Infinity, 3 -Infinity), then for a
/// finite value the scale and the zigzagged unscaled value's low and high 64 bits, each a
/// varint (a small value takes 4 bytes). A wide value (decimal.h) is tag 4, its scale, a
/// sign byte ('+' or '-') and its unscaled digits as a varint length and text.
void AppendRowDecimal(const Decimal& value, std::string* out);
/// Reads what AppendRowDecimal wrote from the front of `*in`, advancing it; false if the
/// bytes are malformed.
bool ReadRowDecimal(std::string_view* in, Decimal* value);

/// Decodes a row written by EncodeRow. Returns nullopt if the bytes do not match `types`.
std::optional<std::vector<Value>> DecodeRow(std::string_view bytes, const RowTypes& types);

/// Decodes a row written by EncodeRow field by field, without building Values (scans decode
/// straight into columns): for column `i` it calls `visitor.Null(i)`, `visitor.Int(i, v)`,
/// `visitor.Double(i, v)`, `visitor.String(i, std::string_view)` or `visitor.Numeric(i, d)`.
/// Returns false if the bytes do not match `types`; the visitor may have seen part of the row then.
template <typename Visitor>
bool VisitRow(std::string_view bytes, const RowTypes& types, Visitor& visitor) {
  for (size_t i = 0; i < types.size(); ++i) {
    if (bytes.empty()) return false;
    char tag = bytes.front();
    bytes.remove_prefix(1);
    if (tag == 0) {
      visitor.Null(i);
      continue;
    }
    if (tag != 1) return false;
    switch (types[i].physical()) {
      case PhysicalType::kInt64:
      case PhysicalType::kFloat64: {
        if (bytes.size() < 8) return false;
        uint64_t bits;
        std::memcpy(&bits, bytes.data(), 8);
        bytes.remove_prefix(8);
        if (types[i].physical() == PhysicalType::kInt64) {
          visitor.Int(i, static_cast<int64_t>(bits));
        } else {
          double d;
          std::memcpy(&d, &bits, 8);
          visitor.Double(i, d);
        }
        break;
      }
      case PhysicalType::kString: {
        uint64_t length;
        if (!ReadVarint(&bytes, &length) || length > bytes.size()) return false;
        visitor.String(i, bytes.substr(0, length));
        bytes.remove_prefix(length);
        break;
      }
      case PhysicalType::kDecimal: {
        Decimal value;
        if (!ReadRowDecimal(&bytes, &value)) return false;
        visitor.Numeric(i, value);
        break;
      }
    }
  }
  return bytes.empty();
}

}  // namespace stave::storage
