#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"
#include "common/value.h"

namespace stave::storage {

/// Memcomparable encoding: the byte order of encoded keys is the SQL order of the values
/// (ascending, NULLS LAST), so RocksDB range scans walk state in key order. Each value is a
/// marker byte (0x01 value, 0x02 NULL) followed by: integers as big-endian with the sign bit
/// flipped; doubles as IEEE-754 bits transformed so that byte order is numeric order;
/// strings with 0x00 escaped as 0x00 0xFF and terminated by 0x00 0x00; numerics by value, so
/// that 1.10 and 1.1 have one encoding (EncodeKeyDecimal).
void EncodeKeyValue(const Value& value, DataType type, std::string* out);

/// EncodeKeyValue by physical type, for a value held unboxed (a column's row): each appends
/// the marker byte, then the value.
void AppendKeyNull(std::string* out);
void AppendKeyInt(int64_t value, std::string* out);
void AppendKeyDouble(double value, std::string* out);
void AppendKeyString(std::string_view value, std::string* out);
void AppendKeyNumeric(const Decimal& value, std::string* out);

/// A numeric as a key: a class byte (-Infinity, negative, zero, positive, Infinity, NaN, in
/// PostgreSQL's order), then for a nonzero value the exponent of its first digit (3 bytes,
/// biased) and its significant digits in groups of 38 (each 16 bytes, big-endian, the last
/// left-aligned, and a byte saying whether another follows), all inverted for negative
/// values. Trailing zeros do not change the encoding; an ordinary value has one group.
void EncodeKeyDecimal(const Decimal& value, std::string* out);

/// Decodes one value written by EncodeKeyValue from the front of `*in`, advancing it.
/// Returns false if the bytes are malformed. A numeric comes back with the scale of `type`
/// when it has one, otherwise with no trailing fraction zeros.
bool DecodeKeyValue(std::string_view* in, DataType type, Value* value);

/// Appends `value` as 4 big-endian bytes (ids in keys sort numerically).
void AppendBigEndian32(uint32_t value, std::string* out);
void AppendBigEndian16(uint16_t value, std::string* out);
void AppendBigEndian64(uint64_t value, std::string* out);
uint64_t ReadBigEndian64(std::string_view bytes);
uint32_t ReadBigEndian32(std::string_view bytes);

}  // namespace stave::storage
