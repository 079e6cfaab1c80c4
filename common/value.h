#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "common/data_type.h"
#include "common/decimal.h"

namespace stave {

/// One datum, without its logical type (the schema carries that). NULL is its own state.
/// Used where rows are handled one at a time: literals, state rows, query results. Bulk data
/// moves in `executor::Chunk` columns instead.
class Value {
 public:
  Value() = default;
  static Value Null() { return Value(); }
  static Value Int(int64_t v) { return Value(std::in_place_type<int64_t>, v); }
  static Value Double(double v) { return Value(std::in_place_type<double>, v); }
  static Value String(std::string v) {
    return Value(std::in_place_type<std::string>, std::move(v));
  }
  static Value Boolean(bool v) { return Int(v ? 1 : 0); }
  static Value Numeric(const Decimal& v) { return Value(std::in_place_type<Decimal>, v); }

  bool is_null() const { return std::holds_alternative<std::monostate>(data_); }
  /// REQUIRES: holds an integer (integer, boolean or temporal types).
  int64_t int_value() const { return std::get<int64_t>(data_); }
  /// REQUIRES: holds a double.
  double double_value() const { return std::get<double>(data_); }
  /// REQUIRES: holds a string. The view lives as long as this Value.
  const std::string& string_value() const { return std::get<std::string>(data_); }
  /// REQUIRES: holds a numeric.
  const Decimal& decimal_value() const { return std::get<Decimal>(data_); }

  bool operator==(const Value& other) const = default;

  /// PostgreSQL's text output format for a value of `type` (what DataRow carries and psql
  /// prints). REQUIRES: not null.
  std::string ToText(DataType type) const;

 private:
  // A Decimal is 32 bytes held in place, so ordinary numerics never allocate (decimal.h).
  using Storage = std::variant<std::monostate, int64_t, double, std::string, Decimal>;
  // Each factory builds its alternative in place (no variant is built and then moved).
  template <typename T, typename Argument>
  Value(std::in_place_type_t<T> type, Argument&& argument)
      : data_(type, std::forward<Argument>(argument)) {}
  Storage data_;
  friend int CompareValues(const Value& left, const Value& right);
};

/// PostgreSQL's float8 output: shortest round-trip digits, fixed notation for decimal
/// exponents in [-4, 15), otherwise exponent notation ("1e+20"); "Infinity", "NaN".
std::string FormatDouble(double value);
/// The same for float4, rounded to single precision first.
std::string FormatFloat(float value);

/// Three-way comparison of two non-null values of the same physical type (numerics by
/// value: 1.10 equals 1.1).
int CompareValues(const Value& left, const Value& right);

}  // namespace stave
