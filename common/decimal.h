#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stave {

/// 128-bit integers, a GCC and Clang extension (`__extension__` keeps -Wpedantic quiet).
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

/// An exact decimal number with PostgreSQL's `numeric` semantics, held without heap
/// allocation: a finite value is `unscaled × 10^-scale`, where `scale` is also the display
/// scale (1.50 has unscaled 150 and scale 2 and prints as 1.50, as in PostgreSQL) and
/// |unscaled| < 10^38, so that every value of up to 38 digits fits one 128-bit integer and
/// the arithmetic runs on native integers. PostgreSQL's `numeric` goes much further (131072
/// digits before the point); a result beyond 38 digits (counting the zeros its scale keeps)
/// is refused with 22003 instead. Besides finite values there are NaN, Infinity and
/// -Infinity, as in PostgreSQL 14 and later.
struct Decimal {
  enum class Kind : uint8_t { kFinite = 0, kNaN = 1, kInfinity = 2, kNegativeInfinity = 3 };

  Int128 unscaled = 0;
  int32_t scale = 0;  ///< Digits after the point, 0 to kMaxScale.
  Kind kind = Kind::kFinite;

  static Decimal NaN() { return {0, 0, Kind::kNaN}; }
  static Decimal Infinity(bool negative) {
    return {0, 0, negative ? Kind::kNegativeInfinity : Kind::kInfinity};
  }
  bool is_finite() const { return kind == Kind::kFinite; }
  bool is_nan() const { return kind == Kind::kNaN; }

  /// Identity of the representation (1.10 and 1.1 differ); SQL equality is decimal::Compare.
  bool operator==(const Decimal& other) const = default;
};

namespace decimal {

/// Digits a finite value may hold in all: 10^38 - 1 is the largest that fits 127 bits.
inline constexpr int kMaxDigits = 38;
/// PostgreSQL's limits on a display scale and on a type's precision.
inline constexpr int kMaxScale = 1000;
inline constexpr int kMaxPrecision = 1000;

/// 10^exponent. REQUIRES: 0 <= exponent <= 38.
Int128 PowerOfTen(int exponent);

/// PostgreSQL's numeric input: optional sign, digits with an optional point, an optional
/// exponent, surrounding spaces; `NaN`, `Infinity`, `inf` with any case and sign. The scale
/// is the number of digits after the point less the exponent (never negative): "1.50" has
/// scale 2, "1.5e3" scale 0. Throws 22P02 for bad text, 22003 beyond 38 digits.
Decimal Parse(std::string_view text);

/// PostgreSQL's numeric output: every digit of the scale, no exponent; "NaN", "Infinity".
std::string Format(const Decimal& value);

/// Three-way comparison by value (1.10 equals 1.1): -Infinity < finite < Infinity < NaN,
/// NaN equal to itself, as PostgreSQL orders numerics.
int Compare(const Decimal& left, const Decimal& right);

/// The same value with trailing fraction zeros removed (1.10 → 1.1, 2.000 → 2); the form
/// keys and hashes use so that equal values meet.
Decimal Normalize(const Decimal& value);

Decimal FromInteger(int64_t value);
Decimal FromInt128(Int128 value, int scale = 0);  ///< Throws 22003 beyond 38 digits.
/// PostgreSQL's float8 → numeric: the value printed with `digits` significant digits (15
/// for double precision, 6 for real), then parsed, so 0.1::float8::numeric is 0.1.
Decimal FromDouble(double value, int digits);
/// The nearest double (PostgreSQL converts through the decimal text, as strtod does).
double ToDouble(const Decimal& value);
/// Rounds half away from zero to an integer. Throws 22003 `<type_name> out of range` when
/// it does not fit 64 bits, 0A000 for NaN and infinities (as PostgreSQL).
int64_t ToInt64(const Decimal& value, std::string_view type_name);

/// PostgreSQL's numeric operators. Result scales: the larger of the operands' for + - and %,
/// their sum for *, and for / PostgreSQL's select_div_scale (at least 16 significant digits,
/// never less than either operand's scale), rounded half away from zero. Throw 22012 for a
/// zero divisor and 22003 for results beyond 38 digits.
Decimal Add(const Decimal& left, const Decimal& right);
Decimal Subtract(const Decimal& left, const Decimal& right);
Decimal Multiply(const Decimal& left, const Decimal& right);
Decimal Divide(const Decimal& left, const Decimal& right);
Decimal Modulo(const Decimal& left, const Decimal& right);
Decimal Negate(const Decimal& value);
Decimal Abs(const Decimal& value);
/// -1, 0 or 1 (scale 0); NaN for NaN.
Decimal Sign(const Decimal& value);

/// round(x, s) and trunc(x, s): to `scale` digits after the point (before it when
/// negative), half away from zero for round; the result's scale is `scale` (0 if negative).
Decimal Round(const Decimal& value, int64_t scale);
Decimal Trunc(const Decimal& value, int64_t scale);
/// The nearest integers below and above (scale 0).
Decimal Floor(const Decimal& value);
Decimal Ceil(const Decimal& value);

/// PostgreSQL's sqrt(numeric): at least 16 significant digits and never fewer fraction
/// digits than the argument (numeric.c numeric_sqrt's result scale), rounded half away from
/// zero; sqrt(Infinity) is Infinity, NaN stays NaN. REQUIRES: the value is not negative (the
/// caller raises PostgreSQL's 2201F). Throws 22003 when the result needs 38 digits or more.
Decimal Sqrt(const Decimal& value);

/// Fits a value to `numeric(precision, scale)`: rounds to the scale (half away from zero),
/// then throws 22003 "numeric field overflow" if |value| reaches 10^(precision - scale).
/// NaN passes; infinities do not fit any precision.
Decimal ApplyTypmod(const Decimal& value, int precision, int scale);

}  // namespace decimal
}  // namespace stave
