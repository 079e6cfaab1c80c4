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

/// A row's fields held as Values, for EncodeRowFrom and EncodePackedRowFrom.
struct RowValues {
  const std::vector<Value>& row;
  bool IsNull(size_t i) const { return row[i].is_null(); }
  int64_t Int(size_t i) const { return row[i].int_value(); }
  double Double(size_t i) const { return row[i].double_value(); }
  std::string_view String(size_t i) const { return row[i].string_value(); }
  const Decimal& Numeric(size_t i) const { return row[i].decimal_value(); }
};

/// The fields both row layouts write alike: a string (its length as a varint, then its bytes)
/// or a numeric (AppendRowDecimal). REQUIRES: column `i` is a string or a numeric.
template <typename Fields>
void AppendVariableField(const Fields& fields, size_t i, PhysicalType type, std::string* out) {
  if (type == PhysicalType::kString) {
    std::string_view string = fields.String(i);
    AppendVarint(string.size(), out);
    out->append(string);
  } else {
    AppendRowDecimal(fields.Numeric(i), out);
  }
}

/// Reads a field AppendVariableField wrote at the front of `*bytes`, advancing past it, and
/// hands it to `visitor` as column `i`. Returns false if the bytes do not hold one.
template <typename Visitor>
bool VisitVariableField(std::string_view* bytes, size_t i, PhysicalType type, Visitor& visitor) {
  if (type == PhysicalType::kString) {
    uint64_t length;
    if (!ReadVarint(bytes, &length) || length > bytes->size()) return false;
    visitor.String(i, bytes->substr(0, length));
    bytes->remove_prefix(length);
    return true;
  }
  Decimal value;
  if (!ReadRowDecimal(bytes, &value)) return false;
  visitor.Numeric(i, value);
  return true;
}

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
      case PhysicalType::kString:
      case PhysicalType::kDecimal:
        AppendVariableField(fields, i, types[i].physical(), out);
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
      case PhysicalType::kString:
      case PhysicalType::kDecimal:
        if (!VisitVariableField(&bytes, i, types[i].physical(), visitor)) return false;
        break;
    }
  }
  return true;
}

template <typename Visitor>
bool VisitRow(std::string_view bytes, const RowTypes& types, Visitor& visitor) {
  return VisitRowPrefix(&bytes, types, visitor) && bytes.empty();
}

/// A packed row, for values rewritten often whose fields are mostly zero or NULL (aggregate
/// states): a bitmap of the columns that hold a value (column i is bit i % 8 of byte i / 8),
/// then each of those values: an integer zigzagged into a varint, a double as 8
/// little-endian bytes, a string or a numeric as EncodeRow writes it. A NULL costs a bit and
/// a small integer a byte, where EncodeRow spends a byte and nine. Written from `fields` as
/// EncodeRowFrom's.
template <typename Fields>
void EncodePackedRowFrom(const Fields& fields, const RowTypes& types, std::string* out) {
  size_t bitmap_at = out->size();
  out->append((types.size() + 7) / 8, '\0');
  for (size_t i = 0; i < types.size(); ++i) {
    if (fields.IsNull(i)) continue;
    (*out)[bitmap_at + i / 8] = static_cast<char>((*out)[bitmap_at + i / 8] | (1 << (i % 8)));
    switch (types[i].physical()) {
      case PhysicalType::kInt64: {
        auto bits = static_cast<uint64_t>(fields.Int(i));
        AppendVarint((bits << 1) ^ (0 - (bits >> 63)), out);
        break;
      }
      case PhysicalType::kFloat64: {
        double d = fields.Double(i);
        char bytes[8];
        std::memcpy(bytes, &d, 8);
        out->append(bytes, 8);
        break;
      }
      case PhysicalType::kString:
      case PhysicalType::kDecimal:
        AppendVariableField(fields, i, types[i].physical(), out);
        break;
    }
  }
}

/// Decodes a packed row at the front of `*in` (EncodePackedRowFrom), advancing it past the
/// row, as VisitRowPrefix does. Returns false if the bytes do not match `types`.
template <typename Visitor>
bool VisitPackedRowPrefix(std::string_view* in, const RowTypes& types, Visitor& visitor) {
  std::string_view& bytes = *in;
  size_t bitmap_bytes = (types.size() + 7) / 8;
  if (bytes.size() < bitmap_bytes) return false;
  std::string_view bitmap = bytes.substr(0, bitmap_bytes);
  bytes.remove_prefix(bitmap_bytes);
  // Bits past the last column are never set.
  if (types.size() % 8 != 0 && (static_cast<uint8_t>(bitmap.back()) >> (types.size() % 8)) != 0) {
    return false;
  }
  for (size_t i = 0; i < types.size(); ++i) {
    if ((static_cast<uint8_t>(bitmap[i / 8]) & (1 << (i % 8))) == 0) {
      visitor.Null(i);
      continue;
    }
    switch (types[i].physical()) {
      case PhysicalType::kInt64: {
        uint64_t zigzag;
        if (!ReadVarint(&bytes, &zigzag)) return false;
        visitor.Int(i, static_cast<int64_t>((zigzag >> 1) ^ (0 - (zigzag & 1))));
        break;
      }
      case PhysicalType::kFloat64: {
        if (bytes.size() < 8) return false;
        double d;
        std::memcpy(&d, bytes.data(), 8);
        bytes.remove_prefix(8);
        visitor.Double(i, d);
        break;
      }
      case PhysicalType::kString:
      case PhysicalType::kDecimal:
        if (!VisitVariableField(&bytes, i, types[i].physical(), visitor)) return false;
        break;
    }
  }
  return true;
}

/// DecodeRow for a row at the front of `*bytes` (VisitRowPrefix), advancing it past the row.
std::optional<std::vector<Value>> DecodeRowPrefix(std::string_view* bytes, const RowTypes& types);

}  // namespace stave::storage
