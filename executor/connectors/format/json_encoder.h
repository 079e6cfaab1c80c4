#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"
#include "common/json_string.h"
#include "common/value.h"
#include "executor/chunk.h"

namespace stave::executor {

/// Appends `value`, of type `type`, as a JSON value, the way JsonObjectEncoder writes a
/// column's value: for values held apart from a chunk (an array's elements).
void AppendJsonValue(const Value& value, DataType type, std::string* out);

/// Writes rows of chunks as flat JSON objects, `{"name":value,...}`, of the columns
/// `columns` (indexes into the chunks) under the names `names`, in that order. NULL is null,
/// booleans are true/false, integers are integers, doubles are written in the shortest text
/// that reads back to the same value (real columns: the same single-precision value), and
/// NaN and the infinities, which JSON numbers cannot express, as the strings "NaN",
/// "Infinity" and "-Infinity". Strings and names are escaped as AppendJsonString does; the
/// names once, when the encoder is made, not once a row.
class JsonObjectEncoder {
 public:
  /// REQUIRES: columns.size() == names.size().
  JsonObjectEncoder(std::vector<size_t> columns, const std::vector<std::string>& names);

  /// Appends row `row` of `chunk`. REQUIRES: row < chunk.size(), and the chunk has every
  /// column the encoder names.
  void Append(const Chunk& chunk, size_t row, std::string* out) const;

 private:
  std::vector<size_t> columns_;
  // `{"name":` before the first value, `,"name":` before each of the others.
  std::vector<std::string> prefixes_;
};

}  // namespace stave::executor
