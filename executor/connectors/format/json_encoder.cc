#include "executor/connectors/format/json_encoder.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <iterator>
#include <utility>

#include "common/array_value.h"

namespace stave::executor {
namespace {

template <typename Float>
void AppendJsonFloat(Float value, std::string* out) {
  if (std::isnan(value)) {
    out->append("\"NaN\"");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  } else {
    // fmt's default is the shortest text that round-trips; its forms ("1e+20", "-0", "0.5")
    // are all JSON numbers.
    fmt::format_to(std::back_inserter(*out), "{}", value);
  }
}

// A value held as an int64: a boolean or an integer.
void AppendJsonInteger(int64_t value, DataType type, std::string* out) {
  if (type.id == TypeId::kBoolean) {
    out->append(value != 0 ? "true" : "false");
    return;
  }
  char digits[24];
  auto result = std::to_chars(digits, digits + sizeof(digits), value);
  out->append(digits, result.ptr);
}

void AppendJsonDouble(double value, DataType type, std::string* out) {
  if (type.id == TypeId::kFloat32) {
    AppendJsonFloat(static_cast<float>(value), out);
  } else {
    AppendJsonFloat(value, out);
  }
}

// A numeric as a JSON number with all its digits, as PostgreSQL's to_json writes it; NaN
// and the infinities, which JSON numbers cannot be, as strings.
void AppendJsonDecimal(const Decimal& value, std::string* out) {
  if (value.is_finite()) {
    out->append(decimal::Format(value));
  } else {
    AppendJsonString(decimal::Format(value), out);
  }
}

void AppendColumnValue(const Column& column, size_t row, std::string* out) {
  if (column.IsNull(row)) {
    out->append("null");
    return;
  }
  if (column.type.IsTemporal() || column.type.id == TypeId::kBytea ||
      column.type.id == TypeId::kJsonb || column.type.IsArray()) {
    AppendJsonValue(column.GetValue(row), column.type, out);
    return;
  }
  switch (column.type.physical()) {
    case PhysicalType::kInt64:
      AppendJsonInteger(column.ints[row], column.type, out);
      return;
    case PhysicalType::kFloat64:
      AppendJsonDouble(column.doubles[row], column.type, out);
      return;
    case PhysicalType::kString:
      AppendJsonString(column.strings[row], out);
      return;
    case PhysicalType::kDecimal:
      AppendJsonDecimal(column.decimals[row], out);
      return;
  }
}

}  // namespace

void AppendJsonValue(const Value& value, DataType type, std::string* out) {
  if (value.is_null()) {
    out->append("null");
    return;
  }
  // As PostgreSQL's to_json writes them: temporal values as ISO text, bytea as its hex text,
  // jsonb as the document itself, arrays as JSON arrays.
  if (type.IsTemporal() || type.id == TypeId::kBytea) {
    AppendJsonString(value.ToText(type), out);
    return;
  }
  if (type.id == TypeId::kJsonb) {
    out->append(value.string_value());
    return;
  }
  if (type.IsArray()) {
    out->push_back('[');
    bool first = true;
    for (const Value& element : array::Decode(value.string_value(), type.ElementType())) {
      if (!first) out->push_back(',');
      first = false;
      AppendJsonValue(element, type.ElementType(), out);
    }
    out->push_back(']');
    return;
  }
  switch (type.physical()) {
    case PhysicalType::kInt64:
      AppendJsonInteger(value.int_value(), type, out);
      return;
    case PhysicalType::kFloat64:
      AppendJsonDouble(value.double_value(), type, out);
      return;
    case PhysicalType::kString:
      AppendJsonString(value.string_value(), out);
      return;
    case PhysicalType::kDecimal:
      AppendJsonDecimal(value.decimal_value(), out);
      return;
  }
}

JsonObjectEncoder::JsonObjectEncoder(std::vector<size_t> columns,
                                     const std::vector<std::string>& names)
    : columns_(std::move(columns)) {
  for (size_t i = 0; i < columns_.size(); ++i) {
    std::string prefix(i == 0 ? "{" : ",");
    AppendJsonString(names[i], &prefix);
    prefix.push_back(':');
    prefixes_.push_back(std::move(prefix));
  }
}

void JsonObjectEncoder::Append(const Chunk& chunk, size_t row, std::string* out) const {
  if (columns_.empty()) {
    out->append("{}");
    return;
  }
  for (size_t i = 0; i < columns_.size(); ++i) {
    out->append(prefixes_[i]);
    AppendColumnValue(chunk.columns[columns_[i]], row, out);
  }
  out->push_back('}');
}

}  // namespace stave::executor
