#include "common/value_cast.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "common/array_value.h"
#include "common/bytea.h"
#include "common/decimal.h"
#include "common/jsonb.h"
#include "common/sql_error.h"
#include "common/temporal.h"
#include "common/utf8.h"

namespace stave {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

[[noreturn]] void ThrowBadText(std::string_view text, DataType to) {
  throw SqlError(sqlstate::kInvalidTextRepresentation,
                 "invalid input syntax for type " + to.Name() + ": \"" + std::string(text) + "\"");
}

[[noreturn]] void ThrowOutOfRange(DataType to) {
  throw SqlError(sqlstate::kNumericValueOutOfRange, to.Name() + " out of range");
}

// A numeric value as a value of `to`: rounded and checked against numeric(p, s).
Decimal FitNumeric(const Decimal& value, DataType to) {
  if (!to.HasTypmod()) return value;
  return decimal::ApplyTypmod(value, to.precision, to.scale);
}

Value ParseText(const std::string& original, DataType to) {
  std::string_view text = Trim(original);
  switch (to.id) {
    case TypeId::kBoolean: {
      // PostgreSQL's boolin: any prefix of true, yes, false, no; on, off (at least "of");
      // 1 and 0; in any case.
      std::string lower;
      for (char c : text)
        lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      auto prefix_of = [&](std::string_view word, size_t shortest) {
        return lower.size() >= shortest && std::string_view(word).starts_with(lower);
      };
      if (prefix_of("true", 1) || prefix_of("yes", 1) || lower == "on" || lower == "1") {
        return Value::Boolean(true);
      }
      if (prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || lower == "0") {
        return Value::Boolean(false);
      }
      ThrowBadText(original, to);
    }
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64: {
      std::string_view digits = text;
      if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
      int64_t value = 0;
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (digits.empty() || end != digits.data() + digits.size()) ThrowBadText(original, to);
      if (error == std::errc::result_out_of_range) {
        throw SqlError(sqlstate::kNumericValueOutOfRange,
                       "value \"" + original + "\" is out of range for type " + to.Name());
      }
      CheckIntegerRange(value, to);
      return Value::Int(value);
    }
    case TypeId::kFloat32:
    case TypeId::kFloat64: {
      std::string lower;
      for (char c : text)
        lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      if (lower == "nan") return Value::Double(std::nan(""));
      if (lower == "infinity" || lower == "inf" || lower == "+infinity") {
        return Value::Double(std::numeric_limits<double>::infinity());
      }
      if (lower == "-infinity" || lower == "-inf") {
        return Value::Double(-std::numeric_limits<double>::infinity());
      }
      std::string copy(text);
      if (copy.empty()) ThrowBadText(original, to);
      char* end = nullptr;
      errno = 0;
      double value = std::strtod(copy.c_str(), &end);
      if (end != copy.c_str() + copy.size()) ThrowBadText(original, to);
      if (errno == ERANGE && std::isinf(value)) {
        throw SqlError(sqlstate::kNumericValueOutOfRange,
                       "\"" + original + "\" is out of range for type " + to.Name());
      }
      if (to.id == TypeId::kFloat32) {
        auto single = static_cast<float>(value);
        if ((std::isinf(single) && !std::isinf(value)) || (single == 0 && value != 0)) {
          throw SqlError(sqlstate::kNumericValueOutOfRange,
                         "\"" + original + "\" is out of range for type real");
        }
        value = single;
      }
      return Value::Double(value);
    }
    case TypeId::kVarchar:
    case TypeId::kUnknown:
      return Value::String(original);
    case TypeId::kDate:
      return Value::Int(temporal::ParseDate(original));
    case TypeId::kTime:
      return Value::Int(temporal::ParseTime(original));
    case TypeId::kTimestamp:
      return Value::Int(temporal::ParseTimestamp(original, false));
    case TypeId::kTimestampTz:
      return Value::Int(temporal::ParseTimestamp(original, true));
    case TypeId::kInterval:
      return Value::String(temporal::EncodeInterval(temporal::ParseInterval(original)));
    case TypeId::kNumeric:
      return Value::Numeric(FitNumeric(decimal::Parse(original), to));
    case TypeId::kBytea:
      return Value::String(bytea::Parse(original));
    case TypeId::kJsonb:
      return Value::String(jsonb::Normalize(original));
    case TypeId::kArray:
      return Value::String(array::ParseText(original, to.ElementType()));
  }
  ThrowBadText(original, to);
}

}  // namespace

void CheckIntegerRange(int64_t value, DataType type) {
  switch (type.id) {
    case TypeId::kInt16:
      if (value < std::numeric_limits<int16_t>::min() ||
          value > std::numeric_limits<int16_t>::max()) {
        throw SqlError(sqlstate::kNumericValueOutOfRange, "smallint out of range");
      }
      return;
    case TypeId::kInt32:
      if (value < std::numeric_limits<int32_t>::min() ||
          value > std::numeric_limits<int32_t>::max()) {
        throw SqlError(sqlstate::kNumericValueOutOfRange, "integer out of range");
      }
      return;
    default:
      return;
  }
}

namespace {

// The casts PostgreSQL has between temporal types. The session time zone is UTC, so
// timestamp and timestamptz convert without an offset.
std::optional<Value> CastTemporal(const Value& value, DataType from, DataType to) {
  int64_t v = from.physical() == PhysicalType::kInt64 ? value.int_value() : 0;
  switch (from.id) {
    case TypeId::kDate:
      if (to.IsTimestamp()) return Value::Int(temporal::DateToTimestamp(v));
      break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      if (to.IsTimestamp()) return Value::Int(v);
      if (to.id == TypeId::kDate) return Value::Int(temporal::TimestampToDate(v));
      if (to.id == TypeId::kTime) return Value::Int(temporal::TimestampToTime(v));
      break;
    case TypeId::kTime:
      // time → interval is PostgreSQL's too: the time of day as a span.
      if (to.id == TypeId::kInterval) {
        return Value::String(temporal::EncodeInterval({0, 0, v}));
      }
      break;
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace

bool IsImplicitTemporalCast(DataType from, DataType to) {
  switch (from.id) {
    case TypeId::kDate:
      return to.IsTimestamp();
    case TypeId::kTimestamp:
      return to.id == TypeId::kTimestampTz;
    case TypeId::kTime:
      return to.id == TypeId::kInterval;
    default:
      return false;
  }
}

bool IsAssignmentTemporalCast(DataType from, DataType to) {
  if (IsImplicitTemporalCast(from, to)) return true;
  return from.IsTimestamp() &&
         (to.IsTimestamp() || to.id == TypeId::kDate || to.id == TypeId::kTime);
}

bool CanCast(DataType from, DataType to) {
  if (from == to || from.id == TypeId::kUnknown || from.IsString() || to.IsString()) return true;
  if (IsAssignmentTemporalCast(from, to)) return true;
  if (from.IsNumeric() && to.IsNumeric()) return true;
  // PostgreSQL casts between boolean and integer (int4) only.
  if (from.id == TypeId::kBoolean && to.id == TypeId::kInt32) return true;
  if (from.id == TypeId::kInt32 && to.id == TypeId::kBoolean) return true;
  // An array casts to another array type when its elements do.
  if (from.IsArray() && to.IsArray()) return CanCast(from.ElementType(), to.ElementType());
  return false;
}

Value CutToLength(const Value& value, DataType to) {
  if (value.is_null() || to.length <= 0) return value;
  std::string_view text = value.string_value();
  std::string_view kept = Utf8Prefix(text, static_cast<size_t>(to.length));
  return kept.size() == text.size() ? value : Value::String(std::string(kept));
}

Value FitLength(const Value& value, DataType to) {
  if (value.is_null() || to.length <= 0) return value;
  std::string_view text = value.string_value();
  std::string_view kept = Utf8Prefix(text, static_cast<size_t>(to.length));
  if (kept.size() == text.size()) return value;
  if (text.find_first_not_of(' ', kept.size()) != std::string_view::npos) {
    throw SqlError("22001", "value too long for type " + to.NameWithTypmod());
  }
  return Value::String(std::string(kept));
}

Value CastValue(const Value& value, DataType from, DataType to) {
  if (value.is_null() || from == to) return value;
  if (from.IsString() || from.id == TypeId::kUnknown) return ParseText(value.string_value(), to);
  if (to.IsString()) {
    // A boolean reads "true" or "false" as text (boolean's output is "t" or "f").
    if (from.id == TypeId::kBoolean)
      return Value::String(value.int_value() != 0 ? "true" : "false");
    return Value::String(value.ToText(from));
  }
  if (from.IsTemporal()) {
    if (std::optional<Value> cast = CastTemporal(value, from, to)) return *cast;
  }
  if (from.IsInteger() && to.IsInteger()) {
    CheckIntegerRange(value.int_value(), to);
    return value;
  }
  if (to.IsDecimal()) {
    if (from.IsDecimal()) return Value::Numeric(FitNumeric(value.decimal_value(), to));
    if (from.IsInteger()) {
      return Value::Numeric(FitNumeric(decimal::FromInteger(value.int_value()), to));
    }
    if (from.IsFloat()) {
      // PostgreSQL converts through the float's text with its type's digits (DBL_DIG 15,
      // FLT_DIG 6), so 0.1::float8::numeric is exactly 0.1.
      int digits = from.id == TypeId::kFloat32 ? 6 : 15;
      return Value::Numeric(FitNumeric(decimal::FromDouble(value.double_value(), digits), to));
    }
  }
  if (from.IsDecimal() && to.IsInteger()) {
    int64_t integer = decimal::ToInt64(value.decimal_value(), to.Name());
    CheckIntegerRange(integer, to);
    return Value::Int(integer);
  }
  if (from.IsDecimal() && to.IsFloat()) {
    double d = decimal::ToDouble(value.decimal_value());
    if (to.id != TypeId::kFloat32) return Value::Double(d);
    auto single = static_cast<float>(d);
    // As PostgreSQL's float4in of the numeric's text: beyond real's range either way.
    if ((std::isinf(single) && !std::isinf(d)) || (single == 0 && d != 0)) {
      throw SqlError(
          sqlstate::kNumericValueOutOfRange,
          "\"" + decimal::Format(value.decimal_value()) + "\" is out of range for type real");
    }
    return Value::Double(single);
  }
  if (from.IsInteger() && to.IsFloat()) {
    double d = static_cast<double>(value.int_value());
    return Value::Double(to.id == TypeId::kFloat32 ? static_cast<float>(d) : d);
  }
  if (from.IsFloat() && to.IsFloat()) {
    double d = value.double_value();
    if (to.id != TypeId::kFloat32) return Value::Double(d);
    auto single = static_cast<float>(d);
    if (std::isinf(single) && !std::isinf(d)) {
      throw SqlError(sqlstate::kNumericValueOutOfRange, "value out of range: overflow");
    }
    if (single == 0 && d != 0) {
      throw SqlError(sqlstate::kNumericValueOutOfRange, "value out of range: underflow");
    }
    return Value::Double(single);
  }
  if (from.IsFloat() && to.IsInteger()) {
    double d = std::nearbyint(value.double_value());  // Round half to even, as PostgreSQL.
    if (std::isnan(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
      ThrowOutOfRange(to);
    }
    int64_t i = static_cast<int64_t>(d);
    CheckIntegerRange(i, to);
    return Value::Int(i);
  }
  if (from.id == TypeId::kBoolean && to.IsInteger()) return Value::Int(value.int_value());
  if (from.IsInteger() && to.id == TypeId::kBoolean) return Value::Boolean(value.int_value() != 0);
  if (from.IsArray() && to.IsArray() && CanCast(from.ElementType(), to.ElementType())) {
    std::vector<Value> elements = array::Decode(value.string_value(), from.ElementType());
    for (Value& element : elements) {
      element = CastValue(element, from.ElementType(), to.ElementType());
    }
    return Value::String(array::Encode(elements, to.ElementType()));
  }
  throw SqlError("42846", "cannot cast type " + from.Name() + " to " + to.Name());
}

}  // namespace stave
