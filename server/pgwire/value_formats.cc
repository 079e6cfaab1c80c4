#include "server/pgwire/value_formats.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <vector>

#include "common/array_value.h"
#include "common/decimal.h"
#include "common/jsonb.h"
#include "common/sql_error.h"
#include "common/temporal.h"
#include "common/utf8.h"
#include "common/value_cast.h"

namespace stave::server::pgwire {
namespace {

constexpr std::string_view kInvalidBinaryRepresentation = "22P03";

// The big-endian integer of `size` bytes at `bytes`, sign-extended.
int64_t DecodeSigned(std::string_view bytes) {
  uint64_t value = 0;
  for (char byte : bytes) value = (value << 8) | static_cast<unsigned char>(byte);
  int shift = static_cast<int>(64 - 8 * bytes.size());
  return shift == 0 ? static_cast<int64_t>(value) : static_cast<int64_t>(value << shift) >> shift;
}

void AppendBigEndian(std::string* out, uint64_t value, int size) {
  for (int i = size - 1; i >= 0; --i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

[[noreturn]] void ThrowBadBinary(int number) {
  throw SqlError(kInvalidBinaryRepresentation,
                 fmt::format("incorrect binary data format in bind parameter {}", number));
}

// PostgreSQL's binary numeric: int16 ndigits, int16 weight, uint16 sign, int16 dscale, then
// ndigits base-10000 digits, the first worth 10000^weight. Both directions go through the
// decimal text, which keeps them short and exact.
constexpr uint16_t kNumericPositive = 0x0000;
constexpr uint16_t kNumericNegative = 0x4000;
constexpr uint16_t kNumericNaN = 0xC000;
constexpr uint16_t kNumericInfinity = 0xD000;
constexpr uint16_t kNumericNegativeInfinity = 0xF000;

Value DecodeBinaryNumeric(std::string_view bytes, int number) {
  if (bytes.size() < 8) ThrowBadBinary(number);
  auto field = [&](size_t index) {
    return static_cast<uint16_t>((static_cast<unsigned char>(bytes[2 * index]) << 8) |
                                 static_cast<unsigned char>(bytes[2 * index + 1]));
  };
  int ndigits = static_cast<int16_t>(field(0));
  int weight = static_cast<int16_t>(field(1));
  uint16_t sign = field(2);
  int dscale = static_cast<int16_t>(field(3));
  if (ndigits < 0 || dscale < 0 || bytes.size() != 8 + 2 * static_cast<size_t>(ndigits)) {
    ThrowBadBinary(number);
  }
  if (sign == kNumericNaN) return Value::Numeric(Decimal::NaN());
  if (sign == kNumericInfinity || sign == kNumericNegativeInfinity) {
    return Value::Numeric(Decimal::Infinity(sign == kNumericNegativeInfinity));
  }
  if (sign != kNumericPositive && sign != kNumericNegative) ThrowBadBinary(number);
  std::string whole;     // Digits before the point.
  std::string fraction;  // Digits after it.
  for (int i = 0; i < ndigits; ++i) {
    uint16_t digit = field(4 + static_cast<size_t>(i));
    if (digit >= 10000) ThrowBadBinary(number);
    int position = weight - i;  // This group is worth 10000^position.
    std::string group = fmt::format("{:04d}", digit);
    if (position >= 0) {
      whole += group;
    } else {
      if (fraction.empty()) fraction.assign(4 * static_cast<size_t>(-position - 1), '0');
      fraction += group;
    }
  }
  if (ndigits > 0 && weight >= ndigits)
    whole.append(4 * static_cast<size_t>(weight - ndigits + 1), '0');
  fraction.resize(static_cast<size_t>(dscale), '0');  // Exactly the display scale.
  std::string text = (sign == kNumericNegative ? "-" : "") + (whole.empty() ? "0" : whole);
  if (!fraction.empty()) text += "." + fraction;
  return Value::Numeric(decimal::Parse(text));
}

std::string EncodeBinaryNumeric(const Decimal& value) {
  std::string out;
  auto add = [&](int value16) { AppendBigEndian(&out, static_cast<uint16_t>(value16), 2); };
  if (!value.is_finite()) {
    add(0);
    add(0);
    add(value.is_nan() ? kNumericNaN
                       : (value.kind == Decimal::Kind::kInfinity ? kNumericInfinity
                                                                 : kNumericNegativeInfinity));
    add(0);
    return out;
  }
  std::string text = decimal::Format(value);
  bool negative = !text.empty() && text[0] == '-';
  if (negative) text.erase(0, 1);
  size_t point = text.find('.');
  std::string whole = text.substr(0, point);
  std::string fraction = point == std::string::npos ? "" : text.substr(point + 1);
  whole.insert(0, (4 - whole.size() % 4) % 4, '0');
  fraction.append((4 - fraction.size() % 4) % 4, '0');
  std::vector<int> groups;
  for (size_t i = 0; i < whole.size(); i += 4) groups.push_back(std::stoi(whole.substr(i, 4)));
  for (size_t i = 0; i < fraction.size(); i += 4) {
    groups.push_back(std::stoi(fraction.substr(i, 4)));
  }
  int weight = static_cast<int>(whole.size() / 4) - 1;
  size_t first = 0;
  while (first < groups.size() && groups[first] == 0) {
    ++first;
    --weight;
  }
  size_t last = groups.size();
  while (last > first && groups[last - 1] == 0) --last;
  if (first == last) weight = 0;
  add(static_cast<int>(last - first));
  add(weight);
  add(negative && first != last ? kNumericNegative : kNumericPositive);
  add(value.scale);
  for (size_t i = first; i < last; ++i) add(groups[i]);
  return out;
}

Value DecodeBinary(std::string_view bytes, DataType type, int number) {
  auto expect_size = [&](size_t size) {
    if (bytes.size() != size) ThrowBadBinary(number);
  };
  switch (type.id) {
    case TypeId::kBoolean:
      expect_size(1);
      return Value::Boolean(bytes[0] != 0);
    case TypeId::kInt16:
      expect_size(2);
      return Value::Int(DecodeSigned(bytes));
    case TypeId::kInt32:
      expect_size(4);
      return Value::Int(DecodeSigned(bytes));
    case TypeId::kInt64:
      expect_size(8);
      return Value::Int(DecodeSigned(bytes));
    case TypeId::kFloat32:
      expect_size(4);
      return Value::Double(std::bit_cast<float>(static_cast<uint32_t>(DecodeSigned(bytes))));
    case TypeId::kFloat64:
      expect_size(8);
      return Value::Double(std::bit_cast<double>(DecodeSigned(bytes)));
    case TypeId::kUnknown:
    case TypeId::kVarchar:
      CheckUtf8(bytes);
      return Value::String(std::string(bytes));
    case TypeId::kDate: {
      expect_size(4);
      int64_t days = DecodeSigned(bytes);
      temporal::CheckDate(days);
      return Value::Int(days);
    }
    case TypeId::kTime: {
      expect_size(8);
      int64_t micros = DecodeSigned(bytes);
      if (micros < 0 || micros > temporal::kMicrosPerDay) {
        throw SqlError("22008", "time out of range");
      }
      return Value::Int(micros);
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: {
      expect_size(8);
      int64_t micros = DecodeSigned(bytes);
      temporal::CheckTimestamp(micros);
      return Value::Int(micros);
    }
    case TypeId::kInterval: {
      expect_size(16);
      temporal::Interval interval;
      interval.micros = DecodeSigned(bytes.substr(0, 8));
      interval.days = static_cast<int32_t>(DecodeSigned(bytes.substr(8, 4)));
      interval.months = static_cast<int32_t>(DecodeSigned(bytes.substr(12, 4)));
      return Value::String(temporal::EncodeInterval(interval));
    }
    case TypeId::kNumeric:
      return CastValue(DecodeBinaryNumeric(bytes, number), TypeId::kNumeric, type);
    case TypeId::kBytea:
      return Value::String(std::string(bytes));
    case TypeId::kJsonb:  // A version byte (1), then the text.
      if (bytes.empty() || bytes[0] != 1) ThrowBadBinary(number);
      CheckUtf8(bytes.substr(1));
      return Value::String(jsonb::Normalize(bytes.substr(1)));
    case TypeId::kArray:
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("array parameters in binary format are not supported (parameter "
                                 "{}); send them as text",
                                 number));
  }
  ThrowBadBinary(number);
}

}  // namespace

std::optional<DataType> DataTypeFromOid(int32_t oid) {
  switch (oid) {
    case 0:
    case 705:  // unknown
      return std::nullopt;
    case 16:
      return TypeId::kBoolean;
    case 21:
      return TypeId::kInt16;
    case 23:
      return TypeId::kInt32;
    case 20:
      return TypeId::kInt64;
    case 700:
      return TypeId::kFloat32;
    case 701:
      return TypeId::kFloat64;
    case 25:    // text
    case 1043:  // varchar
    case 1042:  // bpchar
    case 19:    // name
      return TypeId::kVarchar;
    case 1082:
      return TypeId::kDate;
    case 1083:
      return TypeId::kTime;
    case 1114:
      return TypeId::kTimestamp;
    case 1184:
      return TypeId::kTimestampTz;
    case 1186:
      return TypeId::kInterval;
    case 1700:
      return TypeId::kNumeric;
    case 17:
      return TypeId::kBytea;
    case 3802:
      return TypeId::kJsonb;
    default:
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("parameters of the type with OID {} are not supported", oid))
          .WithHint(
              "Stave has boolean, smallint, integer, bigint, real, double precision, text, "
              "numeric, date, time, timestamp, timestamptz, interval, bytea and jsonb.");
  }
}

Value DecodeParameter(std::string_view bytes, int16_t format, DataType type, int number) {
  if (format == kBinaryFormat) return DecodeBinary(bytes, type, number);
  CheckUtf8(bytes);
  if (type.id == TypeId::kUnknown || type.IsString()) return Value::String(std::string(bytes));
  return CastValue(Value::String(std::string(bytes)), TypeId::kVarchar, type);
}

std::string EncodeBinaryValue(const Value& value, DataType type) {
  std::string out;
  switch (type.id) {
    case TypeId::kBoolean:
      out.push_back(value.int_value() != 0 ? 1 : 0);
      return out;
    case TypeId::kInt16:
      AppendBigEndian(&out, static_cast<uint64_t>(value.int_value()), 2);
      return out;
    case TypeId::kInt32:
    case TypeId::kDate:
      AppendBigEndian(&out, static_cast<uint64_t>(value.int_value()), 4);
      return out;
    case TypeId::kInt64:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      AppendBigEndian(&out, static_cast<uint64_t>(value.int_value()), 8);
      return out;
    case TypeId::kFloat32:
      AppendBigEndian(&out, std::bit_cast<uint32_t>(static_cast<float>(value.double_value())), 4);
      return out;
    case TypeId::kFloat64:
      AppendBigEndian(&out, std::bit_cast<uint64_t>(value.double_value()), 8);
      return out;
    case TypeId::kInterval: {
      temporal::Interval interval = temporal::DecodeInterval(value.string_value());
      AppendBigEndian(&out, static_cast<uint64_t>(interval.micros), 8);
      AppendBigEndian(&out, static_cast<uint32_t>(interval.days), 4);
      AppendBigEndian(&out, static_cast<uint32_t>(interval.months), 4);
      return out;
    }
    case TypeId::kNumeric:
      return EncodeBinaryNumeric(value.decimal_value());
    case TypeId::kBytea:
      return value.string_value();
    case TypeId::kJsonb:
      return "\x01" + value.string_value();
    case TypeId::kArray: {
      // PostgreSQL's array_send: dimensions, a has-NULLs flag, the element OID, each
      // dimension's length and lower bound (1), then each element's length (-1: NULL) and
      // binary value.
      DataType element = type.ElementType();
      std::vector<Value> elements = array::Decode(value.string_value(), element);
      bool has_null = false;
      for (const Value& item : elements) has_null = has_null || item.is_null();
      AppendBigEndian(&out, elements.empty() ? 0 : 1, 4);
      AppendBigEndian(&out, has_null ? 1 : 0, 4);
      AppendBigEndian(&out, static_cast<uint32_t>(element.Oid()), 4);
      if (!elements.empty()) {
        AppendBigEndian(&out, elements.size(), 4);
        AppendBigEndian(&out, 1, 4);
      }
      for (const Value& item : elements) {
        if (item.is_null()) {
          AppendBigEndian(&out, 0xFFFFFFFFu, 4);
          continue;
        }
        std::string bytes = EncodeBinaryValue(item, element);
        AppendBigEndian(&out, bytes.size(), 4);
        out += bytes;
      }
      return out;
    }
    case TypeId::kUnknown:
    case TypeId::kVarchar:
      return value.ToText(type);
  }
  return value.ToText(type);
}

}  // namespace stave::server::pgwire
