#include "server/pgwire/value_formats.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>

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
    default:
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("parameters of the type with OID {} are not supported", oid))
          .WithHint(
              "Stave has boolean, smallint, integer, bigint, real, double precision, text, "
              "date, time, timestamp, timestamptz and interval.");
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
    case TypeId::kUnknown:
    case TypeId::kVarchar:
      return value.ToText(type);
  }
  return value.ToText(type);
}

}  // namespace stave::server::pgwire
