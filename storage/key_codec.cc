#include "storage/key_codec.h"

#include <bit>
#include <cstring>

namespace stave::storage {
namespace {

constexpr char kValueMarker = 0x01;
constexpr char kNullMarker = 0x02;

uint64_t DoubleToOrderedBits(double value) {
  if (value == 0) value = 0;  // -0.0 and 0.0 are equal in SQL; give them one encoding.
  uint64_t bits = std::bit_cast<uint64_t>(value);
  // Negative numbers: flip all bits (larger magnitude sorts first). Positive: flip the sign.
  return (bits & (uint64_t{1} << 63)) ? ~bits : bits | (uint64_t{1} << 63);
}

double OrderedBitsToDouble(uint64_t bits) {
  bits = (bits & (uint64_t{1} << 63)) ? bits & ~(uint64_t{1} << 63) : ~bits;
  return std::bit_cast<double>(bits);
}

}  // namespace

void AppendBigEndian64(uint64_t value, std::string* out) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

void AppendBigEndian32(uint32_t value, std::string* out) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

void AppendBigEndian16(uint16_t value, std::string* out) {
  out->push_back(static_cast<char>(value >> 8));
  out->push_back(static_cast<char>(value));
}

uint64_t ReadBigEndian64(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

uint32_t ReadBigEndian32(std::string_view bytes) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

void EncodeKeyValue(const Value& value, DataType type, std::string* out) {
  if (value.is_null()) {
    out->push_back(kNullMarker);
    return;
  }
  out->push_back(kValueMarker);
  switch (type.physical()) {
    case PhysicalType::kInt64:
      AppendBigEndian64(static_cast<uint64_t>(value.int_value()) ^ (uint64_t{1} << 63), out);
      break;
    case PhysicalType::kFloat64:
      AppendBigEndian64(DoubleToOrderedBits(value.double_value()), out);
      break;
    case PhysicalType::kString:
      for (char c : value.string_value()) {
        out->push_back(c);
        if (c == '\0') out->push_back(static_cast<char>(0xFF));
      }
      out->push_back('\0');
      out->push_back('\0');
      break;
  }
}

bool DecodeKeyValue(std::string_view* in, DataType type, Value* value) {
  if (in->empty()) return false;
  char marker = in->front();
  in->remove_prefix(1);
  if (marker == kNullMarker) {
    *value = Value::Null();
    return true;
  }
  if (marker != kValueMarker) return false;
  switch (type.physical()) {
    case PhysicalType::kInt64:
      if (in->size() < 8) return false;
      *value = Value::Int(static_cast<int64_t>(ReadBigEndian64(*in) ^ (uint64_t{1} << 63)));
      in->remove_prefix(8);
      return true;
    case PhysicalType::kFloat64:
      if (in->size() < 8) return false;
      *value = Value::Double(OrderedBitsToDouble(ReadBigEndian64(*in)));
      in->remove_prefix(8);
      return true;
    case PhysicalType::kString: {
      std::string text;
      for (size_t i = 0; i + 1 < in->size(); ++i) {
        char c = (*in)[i];
        if (c != '\0') {
          text.push_back(c);
          continue;
        }
        char next = (*in)[i + 1];
        if (next == '\0') {
          in->remove_prefix(i + 2);
          *value = Value::String(std::move(text));
          return true;
        }
        if (next != static_cast<char>(0xFF)) return false;
        text.push_back('\0');
        ++i;
      }
      return false;
    }
  }
  return false;
}

}  // namespace stave::storage
