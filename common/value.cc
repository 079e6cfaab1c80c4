#include "common/value.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "common/array_value.h"
#include "common/bytea.h"
#include "common/temporal.h"

namespace stave {
namespace {

// Formats shortest round-trip `digits`/`exponent` (from std::to_chars scientific output) the
// way PostgreSQL's float output does: in exponent notation from 10^`exponent_from` up (the
// type's decimal digits: 15 for double precision, 6 for real) and below 10^-4.
std::string FormatShortest(const char* begin, const char* end, int exponent_from) {
  std::string scientific(begin, end);
  bool negative = !scientific.empty() && scientific[0] == '-';
  if (negative) scientific.erase(0, 1);
  size_t e_pos = scientific.find('e');
  std::string mantissa = scientific.substr(0, e_pos);
  int exponent = std::atoi(scientific.c_str() + e_pos + 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits.push_back(c);
  }
  // Built with append() only: GCC 12 at -O3 reports a false -Wrestrict for
  // `"literal" + std::string`.
  std::string out;
  if (negative) out.push_back('-');
  if (exponent < -4 || exponent >= exponent_from) {
    out.push_back(digits[0]);
    if (digits.size() > 1) {
      out.push_back('.');
      out.append(digits, 1, std::string::npos);
    }
    out.append(exponent < 0 ? "e-" : "e+");
    std::string exp_digits = std::to_string(std::abs(exponent));
    if (exp_digits.size() < 2) out.push_back('0');
    out.append(exp_digits);
    return out;
  }
  if (exponent < 0) {
    out.append("0.");
    out.append(static_cast<size_t>(-exponent - 1), '0');
    out.append(digits);
    return out;
  }
  size_t integer_digits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= integer_digits) {
    out.append(digits);
    out.append(integer_digits - digits.size(), '0');
    return out;
  }
  out.append(digits, 0, integer_digits);
  out.push_back('.');
  out.append(digits, integer_digits, std::string::npos);
  return out;
}

template <typename Float>
std::string FormatFloating(Float value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  char buffer[64];
  auto result =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  return FormatShortest(buffer, result.ptr, std::numeric_limits<Float>::digits10);
}

}  // namespace

std::string FormatDouble(double value) { return FormatFloating(value); }
std::string FormatFloat(float value) { return FormatFloating(value); }

std::string Value::ToText(DataType type) const {
  switch (type.id) {
    case TypeId::kBoolean:
      return int_value() != 0 ? "t" : "f";
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
      return std::to_string(int_value());
    case TypeId::kFloat32:
      return FormatFloat(static_cast<float>(double_value()));
    case TypeId::kFloat64:
      return FormatDouble(double_value());
    case TypeId::kVarchar:
    case TypeId::kUnknown:
      return string_value();
    case TypeId::kDate:
      return temporal::FormatDate(int_value());
    case TypeId::kTime:
      return temporal::FormatTime(int_value());
    case TypeId::kTimestamp:
      return temporal::FormatTimestamp(int_value(), false);
    case TypeId::kTimestampTz:
      return temporal::FormatTimestamp(int_value(), true);
    case TypeId::kInterval:
      return temporal::FormatInterval(temporal::DecodeInterval(string_value()));
    case TypeId::kNumeric:
      return decimal::Format(decimal_value());
    case TypeId::kBytea:
      return bytea::Format(string_value());
    case TypeId::kJsonb:
      return string_value();
    case TypeId::kArray:
      return array::FormatText(string_value(), type.ElementType());
  }
  return string_value();
}

int CompareValues(const Value& left, const Value& right) {
  if (std::holds_alternative<int64_t>(left.data_)) {
    int64_t a = left.int_value(), b = right.int_value();
    return a < b ? -1 : (a > b ? 1 : 0);
  }
  if (std::holds_alternative<double>(left.data_)) {
    // PostgreSQL orders NaN above every other value and equal to itself.
    double a = left.double_value(), b = right.double_value();
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? (std::isnan(b) ? 0 : 1) : -1;
    return a < b ? -1 : (a > b ? 1 : 0);
  }
  if (std::holds_alternative<Decimal>(left.data_)) {
    return decimal::Compare(left.decimal_value(), right.decimal_value());
  }
  int c = left.string_value().compare(right.string_value());
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace stave
