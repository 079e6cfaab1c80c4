#include "storage/key_codec.h"

#include <bit>
#include <cstring>
#include <vector>

#include "common/sql_error.h"

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

// The exponent of a value's first digit, biased to stay positive in 3 bytes: numerics reach
// from 10^-16383 to 10^131071.
constexpr int kExponentBias = 1 << 23;
// Digits are written in groups of 38, each a 16-byte big-endian integer followed by a byte
// saying whether another group follows (so that 1.2 sorts before 1.23, whose encoding is
// longer, whatever key column comes next).
constexpr int kGroupDigits = decimal::kNarrowDigits;
constexpr size_t kGroupBytes = 16;
constexpr char kLastGroup = 0x00;
constexpr char kMoreGroups = 0x01;

int DecimalDigits(UInt128 magnitude) {
  int digits = 1;
  while (digits < kGroupDigits && magnitude >= static_cast<UInt128>(decimal::PowerOfTen(digits))) {
    ++digits;
  }
  return digits;
}

void AppendGroup(UInt128 group, bool last, uint8_t flip, std::string* out) {
  for (int shift = 120; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>(static_cast<uint8_t>(group >> shift) ^ flip));
  }
  out->push_back(static_cast<char>((last ? kLastGroup : kMoreGroups) ^ flip));
}

// The 38 decimal digits of a group, with its leading zeros.
void AppendGroupDigits(UInt128 group, std::string* out) {
  char digits[kGroupDigits];
  for (int i = kGroupDigits - 1; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + static_cast<int>(group % 10));
    group /= 10;
  }
  out->append(digits, kGroupDigits);
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
      const uint8_t flip = key_class == kNegativeKey ? 0xFF : 0x00;
      auto byte = [&](size_t i) {
        return static_cast<uint8_t>(static_cast<uint8_t>((*in)[i]) ^ flip);
      };
      if (in->size() < 3) return false;
      int exponent = ((byte(0) << 16) | (byte(1) << 8) | byte(2)) - kExponentBias;
      in->remove_prefix(3);
      std::vector<UInt128> groups;
      bool last = false;
      while (!last) {
        if (in->size() < kGroupBytes + 1) return false;
        UInt128 group = 0;
        for (size_t i = 0; i < kGroupBytes; ++i) group = (group << 8) | byte(i);
        if (group >= static_cast<UInt128>(decimal::PowerOfTen(kGroupDigits))) return false;
        uint8_t marker = byte(kGroupBytes);
        if (marker != kLastGroup && marker != kMoreGroups) return false;
        last = marker == kLastGroup;
        groups.push_back(group);
        in->remove_prefix(kGroupBytes + 1);
      }
      if (groups.front() == 0) return false;
      bool negative = key_class == kNegativeKey;
      if (groups.size() == 1) {
        // The usual case: at most 38 significant digits, and a narrow value.
        UInt128 digits = groups.front();
        while (digits % 10 == 0) digits /= 10;
        int digit_count = DecimalDigits(digits);
        int scale = digit_count - 1 - exponent;
        auto unscaled = static_cast<Int128>(digits);
        if (scale < 0 && digit_count - scale <= kGroupDigits) {
          unscaled *= decimal::PowerOfTen(-scale);
          scale = 0;
        }
        if (scale >= 0) {
          if (scale > decimal::kMaxScale) return false;
          *value = decimal::FromInt128(negative ? -unscaled : unscaled, scale);
          break;
        }
      }
      std::string digits;
      for (UInt128 group : groups) AppendGroupDigits(group, &digits);
      while (digits.back() == '0') digits.pop_back();
      int64_t scale = static_cast<int64_t>(digits.size()) - 1 - exponent;
      if (scale < 0) {
        if (-scale > decimal::kMaxIntegerDigits) return false;
        digits.append(static_cast<size_t>(-scale), '0');
        scale = 0;
      }
      if (scale > decimal::kMaxScale) return false;
      try {
        *value = decimal::FromUnscaledDigits(negative, digits, static_cast<int>(scale));
      } catch (const SqlError&) {
        return false;  // beyond numeric's limits: not a key this codec wrote
      }
      break;
    }
    default:
      return false;
  }
  // numeric(p, s) values all have the type's scale; give it back.
  if (type.HasTypmod() && type.scale > value->scale) *value = decimal::Rescale(*value, type.scale);
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
  int sign = decimal::SignOf(value);
  if (sign == 0) {
    out->push_back(static_cast<char>(kZeroKey));
    return;
  }
  const uint8_t flip = sign < 0 ? 0xFF : 0x00;
  out->push_back(static_cast<char>(sign < 0 ? kNegativeKey : kPositiveKey));
  auto append_exponent = [&](int64_t exponent) {
    auto biased = static_cast<uint32_t>(exponent + kExponentBias);
    for (int shift = 16; shift >= 0; shift -= 8) {
      out->push_back(static_cast<char>(static_cast<uint8_t>(biased >> shift) ^ flip));
    }
  };
  if (!value.is_wide()) {
    UInt128 magnitude =
        sign < 0 ? -static_cast<UInt128>(value.unscaled) : static_cast<UInt128>(value.unscaled);
    int digits = DecimalDigits(magnitude);
    append_exponent(digits - 1 - value.scale);
    // Left-aligned digits: equal values with other scales (1.10, 1.1) meet here.
    AppendGroup(magnitude * static_cast<UInt128>(decimal::PowerOfTen(kGroupDigits - digits)), true,
                flip, out);
    return;
  }
  std::string digits = decimal::UnscaledDigits(value);
  append_exponent(static_cast<int64_t>(digits.size()) - 1 - value.scale);
  while (digits.back() == '0') digits.pop_back();
  for (size_t start = 0; start < digits.size(); start += kGroupDigits) {
    UInt128 group = 0;
    for (size_t i = start; i < start + kGroupDigits; ++i) {
      group = group * 10 + static_cast<UInt128>(i < digits.size() ? digits[i] - '0' : 0);
    }
    AppendGroup(group, start + kGroupDigits >= digits.size(), flip, out);
  }
}

// Fixed-width integers are appended in one piece: a byte at a time, each push_back checked
// the capacity again, and keys are encoded per row.
void AppendBigEndian64(uint64_t value, std::string* out) {
  if constexpr (std::endian::native == std::endian::little) value = __builtin_bswap64(value);
  char bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  out->append(bytes, sizeof bytes);
}

void AppendBigEndian32(uint32_t value, std::string* out) {
  if constexpr (std::endian::native == std::endian::little) value = __builtin_bswap32(value);
  char bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  out->append(bytes, sizeof bytes);
}

void AppendBigEndian16(uint16_t value, std::string* out) {
  out->push_back(static_cast<char>(value >> 8));
  out->push_back(static_cast<char>(value));
}

uint64_t ReadBigEndian64(std::string_view bytes) {
  uint64_t value = 0;
  std::memcpy(&value, bytes.data(), sizeof value);
  if constexpr (std::endian::native == std::endian::little) value = __builtin_bswap64(value);
  return value;
}

uint32_t ReadBigEndian32(std::string_view bytes) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

void AppendKeyNull(std::string* out) { out->push_back(kNullMarker); }

void AppendKeyInt(int64_t value, std::string* out) {
  out->push_back(kValueMarker);
  AppendBigEndian64(static_cast<uint64_t>(value) ^ (uint64_t{1} << 63), out);
}

void AppendKeyDouble(double value, std::string* out) {
  out->push_back(kValueMarker);
  AppendBigEndian64(DoubleToOrderedBits(value), out);
}

void AppendKeyString(std::string_view text, std::string* out) {
  out->push_back(kValueMarker);
  // Each NUL becomes NUL 0xFF, so that NUL NUL ends the value and keys keep their order.
  while (true) {
    size_t nul = text.find('\0');
    out->append(text.data(), nul == std::string_view::npos ? text.size() : nul);
    if (nul == std::string_view::npos) break;
    out->push_back('\0');
    out->push_back(static_cast<char>(0xFF));
    text.remove_prefix(nul + 1);
  }
  out->append(2, '\0');
}

void AppendKeyNumeric(const Decimal& value, std::string* out) {
  out->push_back(kValueMarker);
  EncodeKeyDecimal(value, out);
}

void EncodeKeyValue(const Value& value, DataType type, std::string* out) {
  if (value.is_null()) return AppendKeyNull(out);
  switch (type.physical()) {
    case PhysicalType::kInt64:
      return AppendKeyInt(value.int_value(), out);
    case PhysicalType::kFloat64:
      return AppendKeyDouble(value.double_value(), out);
    case PhysicalType::kString:
      return AppendKeyString(value.string_value(), out);
    case PhysicalType::kDecimal:
      return AppendKeyNumeric(value.decimal_value(), out);
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
