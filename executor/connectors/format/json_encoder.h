#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"
#include "common/value.h"
#include "executor/chunk.h"

namespace stave::executor {

/// Appends `text` as a JSON string (RFC 8259): in double quotes, with '"' and '\' escaped,
/// control characters as \b \f \n \r \t or \u00XX, and every byte that is not part of
/// well-formed UTF-8 replaced by U+FFFD, so that the output is always valid JSON.
void AppendJsonString(std::string_view text, std::string* out);

/// Appends `value`, of type `type`, as a JSON value, the way AppendJsonObject writes a
/// column's value: for values held apart from a chunk (an array's elements).
void AppendJsonValue(const Value& value, DataType type, std::string* out);

/// Appends row `row` of `chunk` as a flat JSON object, `{"name":value,...}`, of the columns
/// `columns` (indexes into the chunk) under the names `names`, in that order. NULL is null,
/// booleans are true/false, integers are integers, doubles are written in the shortest text
/// that reads back to the same value (real columns: the same single-precision value), and
/// NaN and the infinities, which JSON numbers cannot express, as the strings "NaN",
/// "Infinity" and "-Infinity". Strings and names are escaped as AppendJsonString does.
/// REQUIRES: columns.size() == names.size(); row < chunk.size().
void AppendJsonObject(const Chunk& chunk, size_t row, const std::vector<size_t>& columns,
                      const std::vector<std::string>& names, std::string* out);

}  // namespace stave::executor
