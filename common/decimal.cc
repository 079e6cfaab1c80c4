#include "common/decimal.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "common/sql_error.h"

namespace stave::decimal {
namespace {

using Kind = Decimal::Kind;

constexpr std::array<Int128, kMaxDigits + 1> MakePowersOfTen() {
  std::array<Int128, kMaxDigits + 1> powers{};
  Int128 power = 1;
  for (int i = 0; i <= kMaxDigits; ++i) {
    powers[i] = power;
    if (i < kMaxDigits) power *= 10;
  }
  return powers;
}

constexpr std::array<Int128, kMaxDigits + 1> kPowersOfTen = MakePowersOfTen();
// The first magnitude that no longer fits: 10^38.
constexpr Int128 kLimit = kPowersOfTen[kMaxDigits];

[[noreturn]] void ThrowOverflow() {
  throw SqlError(sqlstate::kNumericValueOutOfRange, "value overflows numeric format")
      .WithDetail(
          "A numeric value in Stave holds at most 38 digits, counting the zeros of its "
          "scale.");
}

[[noreturn]] void ThrowBadText(std::string_view text) {
  throw SqlError(sqlstate::kInvalidTextRepresentation,
                 "invalid input syntax for type numeric: \"" + std::string(text) + "\"");
}

[[noreturn]] void ThrowDivisionByZero() {
  throw SqlError(sqlstate::kDivisionByZero, "division by zero");
}

UInt128 Magnitude(Int128 value) {
  return value < 0 ? -static_cast<UInt128>(value) : static_cast<UInt128>(value);
}

int SignOf(Int128 value) { return value < 0 ? -1 : (value > 0 ? 1 : 0); }

// Digits of a magnitude below 10^38 (1 for zero).
int CountDigits(UInt128 magnitude) {
  int digits = 1;
  while (digits < kMaxDigits && magnitude >= static_cast<UInt128>(kPowersOfTen[digits])) ++digits;
  return digits;
}

Decimal Finite(Int128 unscaled, int scale) {
  if (unscaled >= kLimit || unscaled <= -kLimit) ThrowOverflow();
  return {unscaled, scale, Kind::kFinite};
}

// unscaled × 10^digits, or nullopt-like false when that leaves 38 digits.
bool ScaleUp(Int128 unscaled, int digits, Int128* out) {
  if (unscaled == 0) {
    *out = 0;
    return true;
  }
  if (digits > kMaxDigits) return false;
  Int128 scaled = 0;
  if (__builtin_mul_overflow(unscaled, kPowersOfTen[digits], &scaled)) return false;
  if (scaled >= kLimit || scaled <= -kLimit) return false;
  *out = scaled;
  return true;
}

Int128 ScaleUpOrThrow(Int128 unscaled, int digits) {
  Int128 scaled = 0;
  if (!ScaleUp(unscaled, digits, &scaled)) ThrowOverflow();
  return scaled;
}

// unscaled / 10^digits, rounded half away from zero (`round`) or toward zero.
Int128 ScaleDown(Int128 unscaled, int digits, bool round) {
  if (digits <= 0) return unscaled;
  if (digits > kMaxDigits) return 0;  // |unscaled| < 10^38 ≤ half of 10^digits.
  Int128 divisor = kPowersOfTen[digits];
  Int128 quotient = unscaled / divisor;
  Int128 remainder = unscaled % divisor;
  if (round && Magnitude(remainder) * 2 >= static_cast<UInt128>(divisor)) {
    quotient += SignOf(unscaled);
  }
  return quotient;
}

// The value at `scale` digits after the point (rounding when fewer), for a finite value.
Int128 AtScale(const Decimal& value, int scale, bool round) {
  if (scale >= value.scale) return ScaleUpOrThrow(value.unscaled, scale - value.scale);
  return ScaleDown(value.unscaled, value.scale - scale, round);
}

int ClassRank(Kind kind) {
  switch (kind) {
    case Kind::kNegativeInfinity:
      return 0;
    case Kind::kFinite:
      return 1;
    case Kind::kInfinity:
      return 2;
    case Kind::kNaN:
      return 3;
  }
  return 3;
}

int SpecialSign(const Decimal& value) {
  if (value.kind == Kind::kInfinity) return 1;
  if (value.kind == Kind::kNegativeInfinity) return -1;
  return SignOf(value.unscaled);
}

Decimal InfinityWithSign(int sign) { return Decimal::Infinity(sign < 0); }

// PostgreSQL's division result scale (numeric.c select_div_scale), computed from the
// weights and first digits of the operands in PostgreSQL's base-10000 representation.
void Base10000Lead(const Decimal& value, int* weight, int* first_digit) {
  if (value.unscaled == 0) {
    *weight = 0;
    *first_digit = 0;
    return;
  }
  UInt128 magnitude = Magnitude(value.unscaled);
  int leading_exponent = CountDigits(magnitude) - 1 - value.scale;  // 10^e of the first digit
  int base_weight = leading_exponent >= 0 ? leading_exponent / 4 : -((-leading_exponent + 3) / 4);
  int shift = value.scale + 4 * base_weight;  // the first base-10000 digit is |v| / 10^(4w)
  if (shift >= 0) {
    *first_digit = static_cast<int>(magnitude / static_cast<UInt128>(kPowersOfTen[shift]));
  } else {
    *first_digit = static_cast<int>(magnitude * static_cast<UInt128>(kPowersOfTen[-shift]));
  }
  *weight = base_weight;
}

int DivisionScale(const Decimal& left, const Decimal& right) {
  constexpr int kMinSignificantDigits = 16;
  int weight1 = 0, first1 = 0, weight2 = 0, first2 = 0;
  Base10000Lead(left, &weight1, &first1);
  Base10000Lead(right, &weight2, &first2);
  int quotient_weight = weight1 - weight2;
  if (first1 <= first2) --quotient_weight;
  int scale = kMinSignificantDigits - quotient_weight * 4;
  scale = std::max({scale, left.scale, right.scale, 0});
  return std::min(scale, kMaxScale);
}

// 10 × remainder = digit × divisor + new remainder, for remainder < divisor < 10^38, where
// 10 × remainder may not fit 128 bits.
int NextDigit(UInt128* remainder, UInt128 divisor) {
  UInt128 accumulated = 0;
  int digit = 0;
  for (int i = 0; i < 10; ++i) {
    if (accumulated >= divisor - *remainder) {
      accumulated -= divisor - *remainder;
      ++digit;
    } else {
      accumulated += *remainder;
    }
  }
  *remainder = accumulated;
  return digit;
}

// round(dividend × 10^extra / divisor), half away from zero, by long division: whole
// chunks of digits while the remainder times the chunk fits 128 bits.
UInt128 DivideMagnitudes(UInt128 dividend, UInt128 divisor, int extra) {
  UInt128 quotient = dividend / divisor;
  UInt128 remainder = dividend % divisor;
  const UInt128 limit = static_cast<UInt128>(kLimit);
  if (quotient >= limit) ThrowOverflow();
  int chunk = kMaxDigits - CountDigits(divisor);  // divisor × 10^chunk < 10^38
  while (extra > 0) {
    int step = std::min(chunk, extra);
    UInt128 digits = 0;
    if (step == 0) {
      step = 1;
      digits = static_cast<UInt128>(NextDigit(&remainder, divisor));
    } else {
      UInt128 scaled = remainder * static_cast<UInt128>(kPowersOfTen[step]);
      digits = scaled / divisor;
      remainder = scaled % divisor;
    }
    // quotient × 10^step + digits must stay below 10^38.
    if (quotient != 0 && quotient >= static_cast<UInt128>(kPowersOfTen[kMaxDigits - step])) {
      ThrowOverflow();
    }
    quotient = quotient * static_cast<UInt128>(kPowersOfTen[step]) + digits;
    if (quotient >= limit) ThrowOverflow();
    extra -= step;
  }
  if (remainder >= divisor - remainder) ++quotient;
  if (quotient >= limit) ThrowOverflow();
  return quotient;
}

std::string Lower(std::string_view text) {
  std::string lower;
  for (char c : text)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return lower;
}

}  // namespace

Int128 PowerOfTen(int exponent) { return kPowersOfTen[exponent]; }

Decimal Parse(std::string_view original) {
  std::string_view text = original;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  std::string lower = Lower(text);
  if (lower == "nan") return Decimal::NaN();
  if (lower == "infinity" || lower == "+infinity" || lower == "inf" || lower == "+inf") {
    return Decimal::Infinity(false);
  }
  if (lower == "-infinity" || lower == "-inf") return Decimal::Infinity(true);

  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  Int128 unscaled = 0;
  int significant = 0;  // digits in `unscaled`, leading zeros not counted
  int fraction_digits = 0;
  bool any_digit = false, point = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    any_digit = true;
    if (point) ++fraction_digits;
    if (significant == 0 && c == '0') continue;
    if (++significant > kMaxDigits) ThrowOverflow();
    unscaled = unscaled * 10 + (c - '0');
  }
  if (!any_digit) ThrowBadText(original);
  int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exponent_negative = text[i++] == '-';
    if (i == text.size()) ThrowBadText(original);
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      exponent = exponent * 10 + (text[i] - '0');
      // PostgreSQL refuses exponents beyond its precision limit as bad syntax.
      if (exponent > kMaxPrecision) ThrowBadText(original);
    }
    if (exponent_negative) exponent = -exponent;
  }
  if (i != text.size()) ThrowBadText(original);
  int64_t scale = fraction_digits - exponent;
  if (scale < 0) {
    unscaled = ScaleUpOrThrow(unscaled, static_cast<int>(-scale));
    scale = 0;
  }
  if (scale > kMaxScale) {
    // More digits after the point than any display scale: PostgreSQL rounds them away.
    unscaled = ScaleDown(unscaled, static_cast<int>(scale - kMaxScale), true);
    scale = kMaxScale;
  }
  return Finite(negative ? -unscaled : unscaled, static_cast<int>(scale));
}

std::string Format(const Decimal& value) {
  switch (value.kind) {
    case Kind::kNaN:
      return "NaN";
    case Kind::kInfinity:
      return "Infinity";
    case Kind::kNegativeInfinity:
      return "-Infinity";
    case Kind::kFinite:
      break;
  }
  // Digits from the last one up, into a buffer large enough for the widest scale.
  char buffer[kMaxScale + kMaxDigits + 4];
  char* end = buffer + sizeof(buffer);
  char* p = end;
  UInt128 magnitude = Magnitude(value.unscaled);
  int written = 0;
  while (magnitude != 0 || written <= value.scale) {
    if (written == value.scale && value.scale > 0) *--p = '.';
    *--p = static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
    ++written;
  }
  if (value.unscaled < 0) *--p = '-';
  return std::string(p, end);
}

int Compare(const Decimal& left, const Decimal& right) {
  int left_rank = ClassRank(left.kind), right_rank = ClassRank(right.kind);
  if (left_rank != right_rank) return left_rank < right_rank ? -1 : 1;
  if (!left.is_finite()) return 0;
  int left_sign = SignOf(left.unscaled), right_sign = SignOf(right.unscaled);
  if (left_sign != right_sign) return left_sign < right_sign ? -1 : 1;
  if (left_sign == 0) return 0;
  Int128 a = left.unscaled, b = right.unscaled;
  if (left.scale < right.scale) {
    // A left side that leaves 38 digits when aligned is larger in magnitude than any value.
    if (!ScaleUp(a, right.scale - left.scale, &a)) return left_sign;
  } else if (right.scale < left.scale) {
    if (!ScaleUp(b, left.scale - right.scale, &b)) return -left_sign;
  }
  return a < b ? -1 : (a > b ? 1 : 0);
}

Decimal Normalize(const Decimal& value) {
  if (!value.is_finite()) return value;
  if (value.unscaled == 0) return {0, 0, Kind::kFinite};
  Decimal normal = value;
  while (normal.scale > 0 && normal.unscaled % 10 == 0) {
    normal.unscaled /= 10;
    --normal.scale;
  }
  return normal;
}

Decimal FromInteger(int64_t value) { return {value, 0, Kind::kFinite}; }

Decimal FromInt128(Int128 value, int scale) { return Finite(value, scale); }

Decimal FromDouble(double value, int digits) {
  if (std::isnan(value)) return Decimal::NaN();
  if (std::isinf(value)) return Decimal::Infinity(value < 0);
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", digits, value);
  return Parse(buffer);
}

double ToDouble(const Decimal& value) {
  switch (value.kind) {
    case Kind::kNaN:
      return std::numeric_limits<double>::quiet_NaN();
    case Kind::kInfinity:
      return std::numeric_limits<double>::infinity();
    case Kind::kNegativeInfinity:
      return -std::numeric_limits<double>::infinity();
    case Kind::kFinite:
      break;
  }
  // Both operands exact in a double: one correctly rounded division.
  static constexpr double kExactPowers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                            1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                            1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  if (Magnitude(value.unscaled) <= (UInt128{1} << 53) && value.scale <= 22) {
    return static_cast<double>(value.unscaled) / kExactPowers[value.scale];
  }
  std::string text = Format(value);
  return std::strtod(text.c_str(), nullptr);
}

int64_t ToInt64(const Decimal& value, std::string_view type_name) {
  if (value.is_nan()) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "cannot convert NaN to " + std::string(type_name));
  }
  if (!value.is_finite()) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "cannot convert infinity to " + std::string(type_name));
  }
  Int128 integer = ScaleDown(value.unscaled, value.scale, true);
  if (integer > std::numeric_limits<int64_t>::max() ||
      integer < std::numeric_limits<int64_t>::min()) {
    throw SqlError(sqlstate::kNumericValueOutOfRange, std::string(type_name) + " out of range");
  }
  return static_cast<int64_t>(integer);
}

Decimal Add(const Decimal& left, const Decimal& right) {
  if (left.is_nan() || right.is_nan()) return Decimal::NaN();
  if (!left.is_finite() || !right.is_finite()) {
    if (!left.is_finite() && !right.is_finite() && left.kind != right.kind) return Decimal::NaN();
    return left.is_finite() ? right : left;
  }
  int scale = std::max(left.scale, right.scale);
  Int128 a = AtScale(left, scale, false), b = AtScale(right, scale, false);
  Int128 sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) ThrowOverflow();
  return Finite(sum, scale);
}

Decimal Subtract(const Decimal& left, const Decimal& right) { return Add(left, Negate(right)); }

Decimal Multiply(const Decimal& left, const Decimal& right) {
  if (left.is_nan() || right.is_nan()) return Decimal::NaN();
  if (!left.is_finite() || !right.is_finite()) {
    int sign = SpecialSign(left) * SpecialSign(right);
    return sign == 0 ? Decimal::NaN() : InfinityWithSign(sign);  // infinity × 0 is NaN
  }
  Int128 product = 0;
  if (__builtin_mul_overflow(left.unscaled, right.unscaled, &product)) ThrowOverflow();
  int scale = left.scale + right.scale;
  if (scale > kMaxScale) {
    product = ScaleDown(product, scale - kMaxScale, true);
    scale = kMaxScale;
  }
  return Finite(product, scale);
}

Decimal Divide(const Decimal& left, const Decimal& right) {
  if (left.is_nan() || right.is_nan()) return Decimal::NaN();
  if (!left.is_finite()) {
    if (!right.is_finite()) return Decimal::NaN();
    if (right.unscaled == 0) ThrowDivisionByZero();
    return InfinityWithSign(SpecialSign(left) * SpecialSign(right));
  }
  if (!right.is_finite()) return FromInteger(0);  // finite / infinity
  if (right.unscaled == 0) ThrowDivisionByZero();
  int scale = DivisionScale(left, right);
  // left / right at `scale`: |left.unscaled| × 10^(scale + right.scale - left.scale) / |right|.
  int extra = scale + right.scale - left.scale;  // never negative: scale >= left.scale
  UInt128 quotient = DivideMagnitudes(Magnitude(left.unscaled), Magnitude(right.unscaled), extra);
  Int128 signed_quotient = static_cast<Int128>(quotient);
  if (SignOf(left.unscaled) * SignOf(right.unscaled) < 0) signed_quotient = -signed_quotient;
  return Finite(signed_quotient, scale);
}

Decimal Modulo(const Decimal& left, const Decimal& right) {
  if (left.is_nan() || right.is_nan()) return Decimal::NaN();
  if (!left.is_finite()) {
    if (right.is_finite() && right.unscaled == 0) ThrowDivisionByZero();
    return Decimal::NaN();
  }
  if (!right.is_finite()) return left;  // x mod infinity is x
  if (right.unscaled == 0) ThrowDivisionByZero();
  int scale = std::max(left.scale, right.scale);
  Int128 a = AtScale(left, scale, false), b = AtScale(right, scale, false);
  return Finite(a % b, scale);  // truncated division: the sign of the dividend
}

Decimal Negate(const Decimal& value) {
  switch (value.kind) {
    case Kind::kInfinity:
      return Decimal::Infinity(true);
    case Kind::kNegativeInfinity:
      return Decimal::Infinity(false);
    case Kind::kNaN:
      return value;
    case Kind::kFinite:
      break;
  }
  return {-value.unscaled, value.scale, Kind::kFinite};
}

Decimal Abs(const Decimal& value) {
  if (value.kind == Kind::kNegativeInfinity) return Decimal::Infinity(false);
  if (!value.is_finite() || value.unscaled >= 0) return value;
  return Negate(value);
}

Decimal Sign(const Decimal& value) {
  if (value.is_nan()) return value;
  return FromInteger(SpecialSign(value));
}

namespace {

// A value at a negative scale (a multiple of 10^-scale) as an integer of scale 0.
Decimal FromUnitsAtScale(Int128 units, int scale) {
  if (scale >= 0) return Finite(units, scale);
  return Finite(units == 0 ? 0 : ScaleUpOrThrow(units, -scale), 0);
}

Decimal RoundOrTruncate(const Decimal& value, int64_t requested, bool round) {
  if (!value.is_finite()) return value;
  int scale = static_cast<int>(std::clamp<int64_t>(requested, -2 * kMaxScale, kMaxScale));
  return FromUnitsAtScale(AtScale(value, scale, round), scale);
}

// Floor (direction -1) or ceiling (+1): the integer part, moved by one when a fraction in
// that direction is cut off.
Decimal ToInteger(const Decimal& value, int direction) {
  if (!value.is_finite()) return value;
  Int128 integer = ScaleDown(value.unscaled, value.scale, false);
  bool has_fraction = value.scale > kMaxDigits ? value.unscaled != 0
                                               : value.unscaled % kPowersOfTen[value.scale] != 0;
  if (has_fraction && SignOf(value.unscaled) == direction) integer += direction;
  return Finite(integer, 0);
}

}  // namespace

Decimal Round(const Decimal& value, int64_t scale) { return RoundOrTruncate(value, scale, true); }

Decimal Trunc(const Decimal& value, int64_t scale) { return RoundOrTruncate(value, scale, false); }

Decimal Floor(const Decimal& value) { return ToInteger(value, -1); }

Decimal Ceil(const Decimal& value) { return ToInteger(value, 1); }

Decimal Sqrt(const Decimal& value) {
  if (!value.is_finite()) return value;
  constexpr int kMinSignificantDigits = 16;
  int weight = 0, first_digit = 0;
  Base10000Lead(value, &weight, &first_digit);
  int root_weight = (weight + 1) * 4 / 2 - 1;  // 10^root_weight: about the root's first digit
  int scale = std::clamp(std::max(kMinSignificantDigits - root_weight, value.scale), 0, kMaxScale);
  // floor(sqrt(N)) for N = floor(value × 10^(2 × scale + 2)), one digit more than the result
  // keeps, by the schoolbook method on pairs of N's digits: N's digits are the value's
  // unscaled digits followed by zeros (or with the last ones cut off).
  UInt128 magnitude = Magnitude(value.unscaled);
  int unscaled_digits = CountDigits(magnitude);
  int shift = 2 * scale + 2 - value.scale;  // N = magnitude × 10^shift
  int digits = unscaled_digits + shift;
  if (magnitude == 0 || digits <= 0) return Finite(0, scale);
  if ((digits + 1) / 2 > kMaxDigits) ThrowOverflow();
  auto digit_at = [&](int i) -> unsigned {  // N's i-th digit from the left
    if (i < 0 || i >= unscaled_digits) return 0;
    return static_cast<unsigned>(magnitude /
                                 static_cast<UInt128>(kPowersOfTen[unscaled_digits - 1 - i]) % 10);
  };
  UInt128 root = 0, remainder = 0;
  for (int i = digits % 2 == 0 ? 0 : -1; i < digits; i += 2) {
    // remainder × 100 + the next two digits; then the largest x with (20 root + x) x <= it.
    UInt128 next = digit_at(i) * 10 + digit_at(i + 1);
    if (__builtin_mul_overflow(remainder, static_cast<UInt128>(100), &remainder) ||
        __builtin_add_overflow(remainder, next, &remainder)) {
      ThrowOverflow();
    }
    auto take = [&](unsigned x) {  // subtracts (20 root + x) x if it fits the remainder
      UInt128 trial = 0;
      if (__builtin_mul_overflow(root, static_cast<UInt128>(20), &trial) ||
          __builtin_add_overflow(trial, static_cast<UInt128>(x), &trial) ||
          __builtin_mul_overflow(trial, static_cast<UInt128>(x), &trial) || trial > remainder) {
        return false;
      }
      remainder -= trial;
      return true;
    };
    unsigned x = 9;
    while (!take(x)) --x;  // x = 0 always fits
    root = root * 10 + x;
  }
  UInt128 rounded = root / 10 + (root % 10 >= 5 ? 1 : 0);
  return Finite(static_cast<Int128>(rounded), scale);
}

Decimal ApplyTypmod(const Decimal& value, int precision, int scale) {
  if (value.is_nan()) return value;
  if (!value.is_finite()) {
    throw SqlError(sqlstate::kNumericValueOutOfRange, "numeric field overflow")
        .WithDetail("A field with precision " + std::to_string(precision) + ", scale " +
                    std::to_string(scale) + " cannot hold an infinite value.");
  }
  // At the type's scale the value must have fewer than `precision` digits.
  Int128 units = AtScale(value, scale, true);
  if (precision < kMaxDigits && Magnitude(units) >= static_cast<UInt128>(kPowersOfTen[precision])) {
    int integer_digits = precision - scale;
    std::string bound = integer_digits != 0 ? "10^" + std::to_string(integer_digits) : "1";
    throw SqlError(sqlstate::kNumericValueOutOfRange, "numeric field overflow")
        .WithDetail("A field with precision " + std::to_string(precision) + ", scale " +
                    std::to_string(scale) + " must round to an absolute value less than " + bound +
                    ".");
  }
  return FromUnitsAtScale(units, scale);
}

}  // namespace stave::decimal
