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

enum DecimalKeyClass : uint8_t {
  kNegativeInfinityKey = 1,
  kNegativeKey,
  kZeroKey,
  kPositiveKey,
  kInfinityKey,
  kNaNKey,
};

constexpr int kExponentBias = 1 << 15;

int DecimalDigits(UInt128 magnitude) {
  int digits = 1;
  while (digits < decimal::kMaxDigits &&
         magnitude >= static_cast<UInt128>(decimal::PowerOfTen(digits))) {
    ++digits;
  }
  return digits;
}

bool DecodeKeyDecimal(std::string_view* in, DataType type, Decimal* value) {
  if (in->empty()) return false;
  auto key_class = static_cast<uint8_t>(in->front());
  in->remove_prefix(1);
  switch (key_class) {
    case kNegativeInfinityKey:
      *value = Decimal::Infinity(true);
      return true;
    case kInfinityKey:
      *value = Decimal::Infinity(false);
      return true;
    case kNaNKey:
      *value = Decimal::NaN();
      return true;
    case kZeroKey:
      *value = Decimal();
      break;
    case kNegativeKey:
    case kPositiveKey: {
      if (in->size() < 18) return false;
      uint8_t bytes[18];
      for (size_t i = 0; i < 18; ++i) {
        bytes[i] = static_cast<uint8_t>((*in)[i]);
        if (key_class == kNegativeKey) bytes[i] = static_cast<uint8_t>(~bytes[i]);
      }
      in->remove_prefix(18);
      int exponent = ((bytes[0] << 8) | bytes[1]) - kExponentBias;
      UInt128 digits = 0;
      for (size_t i = 2; i < 18; ++i) digits = (digits << 8) | bytes[i];
      if (digits == 0 || digits >= static_cast<UInt128>(decimal::PowerOfTen(decimal::kMaxDigits))) {
        return false;
      }
      while (digits % 10 == 0) digits /= 10;
      int scale = DecimalDigits(digits) - 1 - exponent;
      if (scale > decimal::kMaxScale) return false;
      auto unscaled = static_cast<Int128>(digits);
      if (scale < 0) {
        if (-scale >= decimal::kMaxDigits) return false;
        unscaled *= decimal::PowerOfTen(-scale);
        scale = 0;
      }
      *value = {key_class == kNegativeKey ? -unscaled : unscaled, scale, Decimal::Kind::kFinite};
      break;
    }
    default:
      return false;
  }
  // numeric(p, s) values all have the type's scale; give it back.
  if (type.HasTypmod() && type.scale > value->scale) {
    int missing = type.scale - value->scale;
    if (missing > decimal::kMaxDigits) return false;
    Int128 scaled = 0;
    if (__builtin_mul_overflow(value->unscaled, decimal::PowerOfTen(missing), &scaled)) {
      return false;
    }
    value->unscaled = scaled;
    value->scale = type.scale;
  }
  return true;
}

}  // namespace

void EncodeKeyDecimal(const Decimal& value, std::string* out) {
  switch (value.kind) {
    case Decimal::Kind::kNegativeInfinity:
      out->push_back(static_cast<char>(kNegativeInfinityKey));
      return;
    case Decimal::Kind::kInfinity:
      out->push_back(static_cast<char>(kInfinityKey));
      return;
    case Decimal::Kind::kNaN:
      out->push_back(static_cast<char>(kNaNKey));
      return;
    case Decimal::Kind::kFinite:
      break;
  }
  if (value.unscaled == 0) {
    out->push_back(static_cast<char>(kZeroKey));
    return;
  }
  bool negative = value.unscaled < 0;
  UInt128 magnitude =
      negative ? -static_cast<UInt128>(value.unscaled) : static_cast<UInt128>(value.unscaled);
  int digits = DecimalDigits(magnitude);
  // Left-aligned digits: equal values with other scales (1.10, 1.1) meet here.
  UInt128 aligned =
      magnitude * static_cast<UInt128>(decimal::PowerOfTen(decimal::kMaxDigits - digits));
  auto exponent = static_cast<uint16_t>(digits - 1 - value.scale + kExponentBias);
  uint8_t flip = negative ? 0xFF : 0x00;
  out->push_back(static_cast<char>(negative ? kNegativeKey : kPositiveKey));
  out->push_back(static_cast<char>((exponent >> 8) ^ flip));
  out->push_back(static_cast<char>((exponent & 0xFF) ^ flip));
  for (int shift = 120; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>(static_cast<uint8_t>(aligned >> shift) ^ flip));
  }
}

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
    case PhysicalType::kDecimal:
      EncodeKeyDecimal(value.decimal_value(), out);
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
    case PhysicalType::kDecimal: {
      Decimal decimal;
      if (!DecodeKeyDecimal(in, type, &decimal)) return false;
      *value = Value::Numeric(decimal);
      return true;
    }
  }
  return false;
}

}  // namespace stave::storage
