#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/smart_ptr/intrusive_ptr.hpp>

namespace stave {

/// 128-bit integers, a GCC and Clang extension (`__extension__` keeps -Wpedantic quiet).
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

struct WideUnscaled;
/// Reference counting of the shared, immutable heap form of a wide value (decimal.cc).
void intrusive_ptr_add_ref(const WideUnscaled* wide);
void intrusive_ptr_release(const WideUnscaled* wide);

/// An exact decimal number with PostgreSQL's `numeric` semantics: a finite value is
/// `unscaled × 10^-scale`, where `scale` is also the display scale (1.50 has unscaled 150
/// and scale 2 and prints as 1.50, as in PostgreSQL). Every value whose unscaled integer
/// has fewer than 39 digits — all ordinary amounts, prices and measurements — is held in
/// place in a 128-bit integer, without heap allocation, and its arithmetic runs on native
/// integers. A wider one (up to PostgreSQL's limits: 131072 digits before the point, 16383
/// after) keeps its unscaled integer in `wide`, on the heap, shared by copies and never
/// changed; `unscaled` is then 0. Which form a value takes depends only on its unscaled
/// integer, so one value at one scale has one representation. Besides finite values there
/// are NaN, Infinity and -Infinity, as in PostgreSQL 14 and later.
struct Decimal {
  enum class Kind : uint8_t { kFinite = 0, kNaN = 1, kInfinity = 2, kNegativeInfinity = 3 };

  Int128 unscaled = 0;  ///< The unscaled integer of a narrow finite value.
  int32_t scale = 0;    ///< Digits after the point, 0 to decimal::kMaxScale.
  Kind kind = Kind::kFinite;
  /// The unscaled integer of a wide value (38 digits or more); null for every other value.
  boost::intrusive_ptr<const WideUnscaled> wide;

  static Decimal NaN() { return {0, 0, Kind::kNaN, nullptr}; }
  static Decimal Infinity(bool negative) {
    return {0, 0, negative ? Kind::kNegativeInfinity : Kind::kInfinity, nullptr};
  }
  bool is_finite() const { return kind == Kind::kFinite; }
  bool is_nan() const { return kind == Kind::kNaN; }
  bool is_wide() const { return wide != nullptr; }

  /// Identity of the representation (1.10 and 1.1 differ); SQL equality is decimal::Compare.
  bool operator==(const Decimal& other) const;
};
static_assert(sizeof(Decimal) == 32, "a narrow Decimal stays 32 bytes, held in place");

namespace decimal {

/// Digits an unscaled integer may have and stay narrow: 10^38 - 1 is the largest that fits
/// 127 bits.
inline constexpr int kNarrowDigits = 38;
/// PostgreSQL's limits: digits before the point (|value| < 10^131072), digits after it (a
/// scale), the scale of results PostgreSQL chooses itself (division, sqrt), and a type's
/// precision and scale (`numeric(p, s)`).
inline constexpr int kMaxIntegerDigits = 131072;
inline constexpr int kMaxScale = 16383;
inline constexpr int kMaxDisplayScale = 1000;
inline constexpr int kMaxPrecision = 1000;
inline constexpr int kMaxTypmodScale = 1000;

/// 10^exponent. REQUIRES: 0 <= exponent <= 38.
Int128 PowerOfTen(int exponent);

/// PostgreSQL's numeric input: optional sign, digits with an optional point, an optional
/// exponent, surrounding spaces; `NaN`, `Infinity`, `inf` with any case and sign. The scale
/// is the number of digits after the point less the exponent (never negative): "1.50" has
/// scale 2, "1.5e3" scale 0. Throws 22P02 for bad text, 22003 beyond numeric's limits.
Decimal Parse(std::string_view text);

/// PostgreSQL's numeric output: every digit of the scale, no exponent; "NaN", "Infinity".
std::string Format(const Decimal& value);

/// The digits of a finite value's |unscaled|, most significant first ("0" for zero), and
/// back: the finite value ±digits × 10^-scale. For codecs; FromUnscaledDigits throws 22003
/// beyond numeric's limits and REQUIRES digits to be decimal digits only.
std::string UnscaledDigits(const Decimal& value);
Decimal FromUnscaledDigits(bool negative, std::string_view digits, int scale);

/// Three-way comparison by value (1.10 equals 1.1): -Infinity < finite < Infinity < NaN,
/// NaN equal to itself, as PostgreSQL orders numerics.
int Compare(const Decimal& left, const Decimal& right);
/// -1, 0 or 1: the sign of a finite value or an infinity; 0 for NaN.
int SignOf(const Decimal& value);

/// The same value with trailing fraction zeros removed (1.10 → 1.1, 2.000 → 2); the form
/// keys and hashes use so that equal values meet.
Decimal Normalize(const Decimal& value);
/// The same finite value written with `scale` digits after the point (1.1 → 1.100).
/// REQUIRES: scale >= value.scale.
Decimal Rescale(const Decimal& value, int scale);

Decimal FromInteger(int64_t value);
Decimal FromInt128(Int128 value, int scale = 0);
/// PostgreSQL's float8 → numeric: the value printed with `digits` significant digits (15
/// for double precision, 6 for real), then parsed, so 0.1::float8::numeric is 0.1.
Decimal FromDouble(double value, int digits);
/// The nearest double (PostgreSQL converts through the decimal text, as strtod does).
/// Throws 22003 when a finite value is beyond a double's range (as PostgreSQL's float8in).
double ToDouble(const Decimal& value);
/// Rounds half away from zero to an integer. Throws 22003 `<type_name> out of range` when
/// it does not fit 64 bits, 0A000 for NaN and infinities (as PostgreSQL).
int64_t ToInt64(const Decimal& value, std::string_view type_name);

/// PostgreSQL's numeric operators. Result scales: the larger of the operands' for + - and %,
/// their sum for * (rounded to 16383 beyond), and for / PostgreSQL's select_div_scale (at
/// least 16 significant digits, never less than either operand's scale, at most 1000),
/// rounded half away from zero. Throw 22012 for a zero divisor and 22003 for results
/// beyond numeric's limits.
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
/// negative), half away from zero for round; the result's scale is `scale` (0 if negative),
/// which is first clamped to what a numeric can hold, as PostgreSQL does.
Decimal Round(const Decimal& value, int64_t scale);
Decimal Trunc(const Decimal& value, int64_t scale);
/// The nearest integers below and above (scale 0).
Decimal Floor(const Decimal& value);
Decimal Ceil(const Decimal& value);

/// PostgreSQL's sqrt(numeric): at least 16 significant digits and never fewer fraction
/// digits than the argument (numeric.c numeric_sqrt's result scale, at most 1000), rounded
/// half away from zero; sqrt(Infinity) is Infinity, NaN stays NaN. REQUIRES: the value is
/// not negative (the caller raises PostgreSQL's 2201F).
Decimal Sqrt(const Decimal& value);

/// PostgreSQL's exp(numeric), ln(numeric), log(base, numeric) and power(numeric, numeric)
/// (`^`), in common/decimal_math.cc: numeric.c's result scales (at least 16 significant
/// digits, never fewer fraction digits than the arguments, at most 1000; for an integral
/// exponent at least 16 and the base's), its special values and its errors (2201E for the
/// logarithm of zero or of a negative number, 2201F for 0 to a negative power and a negative
/// base to a fractional one, 22012 for log base 1, 22003 beyond numeric's range), the value
/// correctly rounded to that scale.
Decimal Exp(const Decimal& value);
Decimal Ln(const Decimal& value);
Decimal Log(const Decimal& base, const Decimal& value);
Decimal Power(const Decimal& base, const Decimal& exponent);

/// Fits a value to `numeric(precision, scale)`: rounds to the scale (half away from zero),
/// then throws 22003 "numeric field overflow" if |value| reaches 10^(precision - scale).
/// NaN passes; infinities do not fit any precision.
Decimal ApplyTypmod(const Decimal& value, int precision, int scale);

}  // namespace decimal
}  // namespace stave
