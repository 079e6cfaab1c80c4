#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"
#include "common/value.h"

namespace stave::storage {

/// A row's column types, in order.
using RowTypes = std::vector<DataType>;

/// Compact, not order-preserving encoding of a row for state values: per column a tag byte
/// (0 NULL, 1 value) then 8 little-endian bytes for integers and doubles, or a varint length
/// and the bytes for strings.
void EncodeRow(const std::vector<Value>& row, const RowTypes& types, std::string* out);

/// Decodes a row written by EncodeRow. Returns nullopt if the bytes do not match `types`.
std::optional<std::vector<Value>> DecodeRow(std::string_view bytes, const RowTypes& types);

}  // namespace stave::storage
