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

/// A numeric in a row: its kind (0 finite, 1 NaN, 2 Infinity, 3 -Infinity), then for a
/// finite value the scale and the zigzagged unscaled value's low and high 64 bits, each a
/// varint (a small value takes 4 bytes). A wide value (decimal.h) is tag 4, its scale, a
/// sign byte ('+' or '-') and its unscaled digits as a varint length and text.
void AppendRowDecimal(const Decimal& value, std::string* out);
/// Reads what AppendRowDecimal wrote from the front of `*in`, advancing it; false if the
/// bytes are malformed.
bool ReadRowDecimal(std::string_view* in, Decimal* value);

/// EncodeRow's layout, written from any holder of a row's fields (the writing counterpart of
/// VisitRow): `fields.IsNull(i)`, `fields.Int(i)`, `fields.Double(i)`, `fields.String(i)` (a
/// string_view) and `fields.Numeric(i)` for column `i`.
template <typename Fields>
void EncodeRowFrom(const Fields& fields, const RowTypes& types, std::string* out) {
  for (size_t i = 0; i < types.size(); ++i) {
    if (fields.IsNull(i)) {
      out->push_back(0);
      continue;
    }
    out->push_back(1);
    switch (types[i].physical()) {
      case PhysicalType::kInt64:
      case PhysicalType::kFloat64: {
        uint64_t bits;
        if (types[i].physical() == PhysicalType::kInt64) {
          bits = static_cast<uint64_t>(fields.Int(i));
        } else {
          double d = fields.Double(i);
          std::memcpy(&bits, &d, 8);
        }
        char bytes[8];
        std::memcpy(bytes, &bits, 8);
        out->append(bytes, 8);
        break;
      }
      case PhysicalType::kString: {
        std::string_view string = fields.String(i);
        AppendVarint(string.size(), out);
        out->append(string);
        break;
      }
      case PhysicalType::kDecimal:
        AppendRowDecimal(fields.Numeric(i), out);
        break;
    }
  }
}

/// Decodes a row written by EncodeRow. Returns nullopt if the bytes do not match `types`.
std::optional<std::vector<Value>> DecodeRow(std::string_view bytes, const RowTypes& types);

/// Decodes a row written by EncodeRow field by field, without building Values (scans decode
/// straight into columns): for column `i` it calls `visitor.Null(i)`, `visitor.Int(i, v)`,
/// `visitor.Double(i, v)`, `visitor.String(i, std::string_view)` or `visitor.Numeric(i, d)`.
/// Returns false if the bytes do not match `types`; the visitor may have seen part of the row then.
template <typename Visitor>
bool VisitRow(std::string_view bytes, const RowTypes& types, Visitor& visitor);

/// VisitRow for a row at the front of `*bytes`, which it advances past the row; the bytes
/// after it are not read. A grouped view's rows carry its aggregate's state there
/// (HashAggregateOperator), so readers of a view's rows decode them with this.
template <typename Visitor>
bool VisitRowPrefix(std::string_view* in, const RowTypes& types, Visitor& visitor) {
  std::string_view& bytes = *in;
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
  return true;
}

template <typename Visitor>
bool VisitRow(std::string_view bytes, const RowTypes& types, Visitor& visitor) {
  return VisitRowPrefix(&bytes, types, visitor) && bytes.empty();
}

/// DecodeRow for a row at the front of `*bytes` (VisitRowPrefix), advancing it past the row.
std::optional<std::vector<Value>> DecodeRowPrefix(std::string_view* bytes, const RowTypes& types);

}  // namespace stave::storage
