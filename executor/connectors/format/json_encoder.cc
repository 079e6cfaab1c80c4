#include "executor/connectors/format/json_encoder.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <iterator>

#include "common/array_value.h"
#include "executor/connectors/format/utf8.h"

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

void AppendJsonString(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t pos = 0;
  while (pos < text.size()) {
    // Copy the longest run that needs no escaping in one go.
    size_t run = pos;
    while (run < text.size()) {
      unsigned char c = static_cast<unsigned char>(text[run]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++run;
    }
    out->append(text.data() + pos, run - pos);
    pos = run;
    if (pos == text.size()) break;
    unsigned char c = static_cast<unsigned char>(text[pos]);
    if (c >= 0x80) {
      size_t length = Utf8SequenceLength(text, pos);
      if (length == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
        ++pos;
      } else {
        out->append(text.data() + pos, length);
        pos += length;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xF]);
        break;
    }
    ++pos;
  }
  out->push_back('"');
}

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

void AppendJsonObject(const Chunk& chunk, size_t row, const std::vector<size_t>& columns,
                      const std::vector<std::string>& names, std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(names[i], out);
    out->push_back(':');
    AppendColumnValue(chunk.columns[columns[i]], row, out);
  }
  out->push_back('}');
}

}  // namespace stave::executor
