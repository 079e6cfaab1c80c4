#include "common/array_value.h"

#include <bit>
#include <cctype>
#include <cstdint>

#include "common/decimal.h"
#include "common/sql_error.h"
#include "common/value_cast.h"

namespace stave::array {
namespace {

constexpr char kEndMarker = 0x00;
constexpr char kValueMarker = 0x01;
constexpr char kNullMarker = 0x02;

void AppendBigEndian64(uint64_t value, std::string* out) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

uint64_t ReadBigEndian64(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

uint64_t DoubleToOrderedBits(double value) {
  if (value == 0) value = 0;  // -0.0 and 0.0 are equal in SQL; give them one encoding.
  uint64_t bits = std::bit_cast<uint64_t>(value);
  return (bits & (uint64_t{1} << 63)) ? ~bits : bits | (uint64_t{1} << 63);
}

double OrderedBitsToDouble(uint64_t bits) {
  bits = (bits & (uint64_t{1} << 63)) ? bits & ~(uint64_t{1} << 63) : ~bits;
  return std::bit_cast<double>(bits);
}

[[noreturn]] void ThrowCorrupt() {
  throw SqlError(sqlstate::kInternalError, "corrupt array encoding");
}

// Strings are their bytes, a 0x00 byte escaped as 0x00 0xFF, then 0x00 0x00: byte order is
// string order.
void AppendEscapedText(std::string_view text, std::string* out) {
  for (char c : text) {
    out->push_back(c);
    if (c == '\0') out->push_back(static_cast<char>(0xFF));
  }
  out->push_back('\0');
  out->push_back('\0');
}

std::string ReadEscapedText(std::string_view* in) {
  std::string text;
  while (true) {
    if (in->size() < 2) ThrowCorrupt();
    char c = in->front();
    in->remove_prefix(1);
    if (c != '\0') {
      text.push_back(c);
      continue;
    }
    char next = in->front();
    in->remove_prefix(1);
    if (next == '\0') return text;
    text.push_back('\0');  // 0x00 0xFF stands for a 0x00 byte.
  }
}

// Reads one element at the front of `*in`; false at the end marker.
bool DecodeNext(std::string_view* in, DataType element_type, Value* value) {
  if (in->empty()) ThrowCorrupt();
  char marker = in->front();
  in->remove_prefix(1);
  if (marker == kEndMarker) return false;
  if (marker == kNullMarker) {
    *value = Value::Null();
    return true;
  }
  if (marker != kValueMarker) ThrowCorrupt();
  switch (element_type.physical()) {
    case PhysicalType::kDecimal:
      // A numeric element is its text (decimal::Format), which keeps its display scale; so
      // arrays of numerics order by that text, and {1.5} and {1.50} are distinct arrays.
      *value = Value::Numeric(decimal::Parse(ReadEscapedText(in)));
      return true;
    case PhysicalType::kInt64:
      if (in->size() < 8) ThrowCorrupt();
      *value = Value::Int(static_cast<int64_t>(ReadBigEndian64(*in) ^ (uint64_t{1} << 63)));
      in->remove_prefix(8);
      return true;
    case PhysicalType::kFloat64:
      if (in->size() < 8) ThrowCorrupt();
      *value = Value::Double(OrderedBitsToDouble(ReadBigEndian64(*in)));
      in->remove_prefix(8);
      return true;
    case PhysicalType::kString:
      *value = Value::String(ReadEscapedText(in));
      return true;
  }
  ThrowCorrupt();
}

bool NeedsQuotes(std::string_view text) {
  if (text.empty()) return true;
  if (text.size() == 4 && std::tolower(static_cast<unsigned char>(text[0])) == 'n' &&
      std::tolower(static_cast<unsigned char>(text[1])) == 'u' &&
      std::tolower(static_cast<unsigned char>(text[2])) == 'l' &&
      std::tolower(static_cast<unsigned char>(text[3])) == 'l') {
    return true;
  }
  for (char c : text) {
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == ',' ||
        std::isspace(static_cast<unsigned char>(c))) {
      return true;
    }
  }
  return false;
}

bool IsArraySpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::string Encode(const std::vector<Value>& elements, DataType element_type) {
  std::string out;
  for (const Value& element : elements) {
    if (element.is_null()) {
      out.push_back(kNullMarker);
      continue;
    }
    out.push_back(kValueMarker);
    switch (element_type.physical()) {
      case PhysicalType::kDecimal:
        AppendEscapedText(decimal::Format(element.decimal_value()), &out);
        break;
      case PhysicalType::kInt64:
        AppendBigEndian64(static_cast<uint64_t>(element.int_value()) ^ (uint64_t{1} << 63), &out);
        break;
      case PhysicalType::kFloat64:
        AppendBigEndian64(DoubleToOrderedBits(element.double_value()), &out);
        break;
      case PhysicalType::kString:
        AppendEscapedText(element.string_value(), &out);
        break;
    }
  }
  out.push_back(kEndMarker);
  return out;
}

std::vector<Value> Decode(std::string_view encoded, DataType element_type) {
  std::vector<Value> elements;
  Value value;
  while (DecodeNext(&encoded, element_type, &value)) elements.push_back(std::move(value));
  return elements;
}

size_t Length(std::string_view encoded, DataType element_type) {
  size_t count = 0;
  Value value;
  while (DecodeNext(&encoded, element_type, &value)) ++count;
  return count;
}

std::string FormatText(std::string_view encoded, DataType element_type) {
  std::string out = "{";
  Value value;
  bool first = true;
  while (DecodeNext(&encoded, element_type, &value)) {
    if (!first) out.push_back(',');
    first = false;
    if (value.is_null()) {
      out += "NULL";
      continue;
    }
    std::string text = value.ToText(element_type);
    if (!NeedsQuotes(text)) {
      out += text;
      continue;
    }
    out.push_back('"');
    for (char c : text) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(c);
    }
    out.push_back('"');
  }
  out.push_back('}');
  return out;
}

std::string ParseText(std::string_view text, DataType element_type) {
  auto malformed = [&](std::string detail) {
    return SqlError(sqlstate::kInvalidTextRepresentation,
                    "malformed array literal: \"" + std::string(text) + "\"")
        .WithDetail(std::move(detail));
  };
  size_t pos = 0;
  auto skip_space = [&] {
    while (pos < text.size() && IsArraySpace(text[pos])) ++pos;
  };
  skip_space();
  if (pos < text.size() && text[pos] == '[') {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "array literals with explicit dimensions are not supported");
  }
  if (pos >= text.size() || text[pos] != '{') {
    throw malformed("Array value must start with \"{\" or dimension information.");
  }
  ++pos;
  std::vector<Value> elements;
  skip_space();
  if (pos < text.size() && text[pos] == '}') {
    ++pos;
  } else {
    while (true) {
      skip_space();
      if (pos >= text.size()) throw malformed("Unexpected end of input.");
      if (text[pos] == '{') {
        throw SqlError(sqlstate::kFeatureNotSupported, "multidimensional arrays are not supported");
      }
      std::string element;
      bool quoted = false;
      if (text[pos] == '"') {
        quoted = true;
        ++pos;
        while (true) {
          if (pos >= text.size()) throw malformed("Unexpected end of input.");
          char c = text[pos++];
          if (c == '"') break;
          if (c == '\\') {
            if (pos >= text.size()) throw malformed("Unexpected end of input.");
            c = text[pos++];
          }
          element.push_back(c);
        }
        skip_space();
      } else {
        // Unquoted: up to the next delimiter; trailing white space that was not escaped is
        // dropped.
        size_t kept = 0;
        while (pos < text.size() && text[pos] != ',' && text[pos] != '}') {
          char c = text[pos++];
          if (c == '"' || c == '{')
            throw malformed("Unexpected \"" + std::string(1, c) + "\" character.");
          if (c == '\\') {
            if (pos >= text.size()) throw malformed("Unexpected end of input.");
            element.push_back(text[pos++]);
            kept = element.size();
            continue;
          }
          element.push_back(c);
          if (!IsArraySpace(c)) kept = element.size();
        }
        element.resize(kept);
        if (element.empty()) throw malformed("Unexpected \",\" character.");
      }
      bool is_null = !quoted && element.size() == 4 && (element[0] == 'N' || element[0] == 'n') &&
                     (element[1] == 'U' || element[1] == 'u') &&
                     (element[2] == 'L' || element[2] == 'l') &&
                     (element[3] == 'L' || element[3] == 'l');
      elements.push_back(is_null
                             ? Value::Null()
                             : CastValue(Value::String(element), TypeId::kVarchar, element_type));
      if (pos >= text.size()) throw malformed("Unexpected end of input.");
      if (text[pos] == ',') {
        ++pos;
        continue;
      }
      if (text[pos] == '}') {
        ++pos;
        break;
      }
      throw malformed("Unexpected array element.");
    }
  }
  skip_space();
  if (pos != text.size()) throw malformed("Junk after closing right brace.");
  return Encode(elements, element_type);
}

}  // namespace stave::array
