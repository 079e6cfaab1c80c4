#include "common/decimal.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

#include <boost/multiprecision/cpp_int.hpp>

#include "common/decimal_internal.h"
#include "common/sql_error.h"

namespace stave {

/// Arbitrary-precision integers for wide values (Boost.Multiprecision, header-only).
using BigInt = boost::multiprecision::cpp_int;

/// The unscaled integer of a wide value: never changed once made, so copies of a Decimal
/// share it across threads; freed with its last reference.
struct WideUnscaled {
  explicit WideUnscaled(BigInt unscaled) : value(std::move(unscaled)) {}
  const BigInt value;
  mutable std::atomic<int32_t> references{0};
};

void intrusive_ptr_add_ref(const WideUnscaled* wide) {
  wide->references.fetch_add(1, std::memory_order_relaxed);
}

void intrusive_ptr_release(const WideUnscaled* wide) {
  if (wide->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete wide;
}

bool Decimal::operator==(const Decimal& other) const {
  if (kind != other.kind || scale != other.scale || unscaled != other.unscaled) return false;
  if (wide == other.wide) return true;
  return wide != nullptr && other.wide != nullptr && wide->value == other.wide->value;
}

namespace decimal {
namespace {

using Kind = Decimal::Kind;

constexpr std::array<Int128, kNarrowDigits + 1> MakePowersOfTen() {
  std::array<Int128, kNarrowDigits + 1> powers{};
  Int128 power = 1;
  for (int i = 0; i <= kNarrowDigits; ++i) {
    powers[i] = power;
    if (i < kNarrowDigits) power *= 10;
  }
  return powers;
}

constexpr std::array<Int128, kNarrowDigits + 1> kPowersOfTen = MakePowersOfTen();
// The first magnitude that is no longer narrow: 10^38.
constexpr Int128 kLimit = kPowersOfTen[kNarrowDigits];

using internal::ThrowOverflow;

[[noreturn]] void ThrowBadText(std::string_view text) {
  throw SqlError(sqlstate::kInvalidTextRepresentation,
                 "invalid input syntax for type numeric: \"" + std::string(text) + "\"");
}

[[noreturn]] void ThrowDivisionByZero() {
  throw SqlError(sqlstate::kDivisionByZero, "division by zero");
}

// ---- Narrow values: native 128-bit arithmetic ------------------------------------------

UInt128 Magnitude(Int128 value) {
  return value < 0 ? -static_cast<UInt128>(value) : static_cast<UInt128>(value);
}

int SignOfInteger(Int128 value) { return value < 0 ? -1 : (value > 0 ? 1 : 0); }

// Digits of a magnitude below 10^38 (1 for zero).
int CountDigits(UInt128 magnitude) {
  int digits = 1;
  while (digits < kNarrowDigits && magnitude >= static_cast<UInt128>(kPowersOfTen[digits])) {
    ++digits;
  }
  return digits;
}

Decimal BigFinite(BigInt unscaled, int scale);

[[gnu::noinline]] Decimal FiniteBeyondNarrow(Int128 unscaled, int scale) {
  return BigFinite(BigInt(unscaled), scale);
}

// A finite value from an unscaled integer that may have reached 10^38 (up to 2^127).
inline Decimal Finite(Int128 unscaled, int scale) {
  if (unscaled < kLimit && unscaled > -kLimit && scale <= kMaxScale) {
    return {unscaled, scale, Kind::kFinite, nullptr};
  }
  return FiniteBeyondNarrow(unscaled, scale);
}

// unscaled × 10^digits; false when that is no longer narrow.
bool ScaleUp(Int128 unscaled, int digits, Int128* out) {
  if (unscaled == 0) {
    *out = 0;
    return true;
  }
  if (digits > kNarrowDigits) return false;
  Int128 scaled = 0;
  if (__builtin_mul_overflow(unscaled, kPowersOfTen[digits], &scaled)) return false;
  if (scaled >= kLimit || scaled <= -kLimit) return false;
  *out = scaled;
  return true;
}

// unscaled / 10^digits, rounded half away from zero (`round`) or toward zero.
Int128 ScaleDown(Int128 unscaled, int digits, bool round) {
  if (digits <= 0) return unscaled;
  if (digits > kNarrowDigits) return 0;  // |unscaled| < 10^38 ≤ half of 10^digits.
  Int128 divisor = kPowersOfTen[digits];
  Int128 quotient = unscaled / divisor;
  Int128 remainder = unscaled % divisor;
  if (round && Magnitude(remainder) * 2 >= static_cast<UInt128>(divisor)) {
    quotient += SignOfInteger(unscaled);
  }
  return quotient;
}

// A narrow value at `scale` digits after the point (rounding when fewer); false when that
// is no longer narrow.
inline bool NarrowAtScale(const Decimal& value, int scale, bool round, Int128* out) {
  if (scale == value.scale) {
    *out = value.unscaled;
    return true;
  }
  if (scale > value.scale) return ScaleUp(value.unscaled, scale - value.scale, out);
  *out = ScaleDown(value.unscaled, value.scale - scale, round);
  return true;
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
// chunks of digits while the remainder times the chunk fits 128 bits. False when the
// quotient is not narrow.
bool DivideMagnitudes(UInt128 dividend, UInt128 divisor, int extra, UInt128* out) {
  UInt128 quotient = dividend / divisor;
  UInt128 remainder = dividend % divisor;
  const auto limit = static_cast<UInt128>(kLimit);
  if (quotient >= limit) return false;
  int chunk = kNarrowDigits - CountDigits(divisor);  // divisor × 10^chunk < 10^38
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
    if (quotient != 0 && quotient >= static_cast<UInt128>(kPowersOfTen[kNarrowDigits - step])) {
      return false;
    }
    quotient = quotient * static_cast<UInt128>(kPowersOfTen[step]) + digits;
    if (quotient >= limit) return false;
    extra -= step;
  }
  if (remainder >= divisor - remainder) ++quotient;
  if (quotient >= limit) return false;
  *out = quotient;
  return true;
}

// ---- Wide values: arbitrary precision -------------------------------------------------

BigInt BigPowerOfTen(int exponent) {
  if (exponent <= kNarrowDigits) return BigInt(kPowersOfTen[exponent]);
  return boost::multiprecision::pow(BigInt(10), static_cast<unsigned>(exponent));
}

const BigInt& BigLimit() {
  static const BigInt limit(kLimit);
  return limit;
}

BigInt BigUnscaled(const Decimal& value) {
  return value.wide ? value.wide->value : BigInt(value.unscaled);
}

// Whether |unscaled| × 10^-scale is below 10^131072, PostgreSQL's largest magnitude. The
// bit length settles all but the values next to the limit.
bool WithinIntegerDigits(const BigInt& unscaled, int scale) {
  if (unscaled == 0) return true;
  const int64_t allowed_digits = int64_t{kMaxIntegerDigits} + scale;
  const auto bits = static_cast<double>(boost::multiprecision::msb(abs(unscaled)) + 1);
  if (bits + 1 < static_cast<double>(allowed_digits) * 3.321928094887362) return true;
  return abs(unscaled) < BigPowerOfTen(static_cast<int>(allowed_digits));
}

// A finite value from its unscaled integer: narrow when it fits, wide otherwise.
Decimal BigFinite(BigInt unscaled, int scale) {
  if (scale > kMaxScale) ThrowOverflow();
  if (abs(unscaled) < BigLimit()) {
    return {static_cast<Int128>(unscaled), scale, Kind::kFinite, nullptr};
  }
  if (!WithinIntegerDigits(unscaled, scale)) ThrowOverflow();
  return {0, scale, Kind::kFinite, new WideUnscaled(std::move(unscaled))};
}

// unscaled / 10^digits, rounded half away from zero (`round`) or toward zero.
BigInt BigScaleDown(const BigInt& unscaled, int digits, bool round) {
  if (digits <= 0) return unscaled;
  BigInt divisor = BigPowerOfTen(digits);
  BigInt quotient;
  BigInt remainder;
  boost::multiprecision::divide_qr(unscaled, divisor, quotient, remainder);
  if (round && abs(remainder) * 2 >= divisor) quotient += unscaled.sign();
  return quotient;
}

// Any finite value at `scale` digits after the point (rounding when fewer).
BigInt BigAtScale(const Decimal& value, int scale, bool round) {
  if (scale >= value.scale) return BigUnscaled(value) * BigPowerOfTen(scale - value.scale);
  return BigScaleDown(BigUnscaled(value), value.scale - scale, round);
}

// Units of 10^-scale as a value; a negative scale gives an integer of scale 0.
Decimal FromUnitsAtScale(BigInt units, int scale) {
  if (scale >= 0) return BigFinite(std::move(units), scale);
  if (units == 0) return Finite(0, 0);
  return BigFinite(units * BigPowerOfTen(-scale), 0);
}

Decimal FromUnitsAtScale(Int128 units, int scale) {
  if (scale >= 0) return Finite(units, scale);
  Int128 scaled = 0;
  if (ScaleUp(units, -scale, &scaled)) return Finite(scaled, 0);
  return FromUnitsAtScale(BigInt(units), scale);
}

// floor(sqrt(n)) for n >= 0: the root of n's upper half (recursively), shifted back, is
// right to about half the digits; one Newton step from there is right to within a few
// units, and the last loops settle them. Each level costs one division of its size, so
// the whole costs about two divisions of n's size (Boost's own integer sqrt works bit by
// bit: 15 times slower on a 131072-digit value).
BigInt IntegerSqrt(const BigInt& n) {
  constexpr unsigned kSmallBits = 100;
  if (n < 2) return n;
  const unsigned bits = boost::multiprecision::msb(n) + 1;
  if (bits <= kSmallBits) return boost::multiprecision::sqrt(n);
  const unsigned k = bits / 4;
  BigInt root = IntegerSqrt(n >> (2 * k)) << k;
  root = (root + n / root) >> 1;
  while (root * root > n) --root;
  while ((root + 1) * (root + 1) <= n) ++root;
  return root;
}

// A positive integer from decimal digits, 19 at a time (each step one multiplication by a
// single 64-bit limb).
BigInt BigFromDigits(std::string_view digits) {
  BigInt value = 0;
  size_t chunk = digits.size() % 19 == 0 ? 19 : digits.size() % 19;
  for (size_t i = 0; i < digits.size(); i += chunk, chunk = 19) {
    uint64_t part = 0;
    uint64_t power = 1;
    for (size_t k = i; k < i + chunk; ++k) {
      part = part * 10 + static_cast<uint64_t>(digits[k] - '0');
      power *= 10;
    }
    value *= power;
    value += part;
  }
  return value;
}

// ---- Shared -------------------------------------------------------------------------

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

Decimal InfinityWithSign(int sign) { return Decimal::Infinity(sign < 0); }

// PostgreSQL's division and square-root result scales (numeric.c select_div_scale and
// numeric_sqrt) start from the weight and first digit of an operand in PostgreSQL's
// base-10000 representation: the first digit is the leading 1 to 4 decimal digits, so that
// the rest of the digits before the point come in whole groups of 4.
void Base10000Lead(const Decimal& value, int* weight, int* first_digit) {
  *weight = 0;
  *first_digit = 0;
  if (SignOf(value) == 0) return;
  if (value.wide) {
    internal::Base10000 lead = internal::Base10000Digits(value);
    *weight = lead.weight;
    *first_digit = lead.digits[0];
    return;
  }
  // A narrow value's, by integer arithmetic alone (every division takes this path).
  UInt128 magnitude = Magnitude(value.unscaled);
  int count = CountDigits(magnitude);
  int leading_exponent = count - 1 - value.scale;  // 10^e of the first digit
  int base_weight = leading_exponent >= 0 ? leading_exponent / 4 : -((-leading_exponent + 3) / 4);
  int lead_digits = leading_exponent - 4 * base_weight + 1;  // 1 to 4
  int shift = count - lead_digits;  // magnitude's digits below the first group
  *first_digit =
      static_cast<int>(shift >= 0 ? magnitude / static_cast<UInt128>(kPowersOfTen[shift])
                                  : magnitude * static_cast<UInt128>(kPowersOfTen[-shift]));
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
  return std::min(scale, kMaxDisplayScale);
}

std::string Lower(std::string_view text) {
  std::string lower;
  for (char c : text) {
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return lower;
}

}  // namespace

namespace internal {

void ThrowOverflow() {
  throw SqlError(sqlstate::kNumericValueOutOfRange, "value overflows numeric format");
}

Base10000 Base10000Digits(const Decimal& value) {
  std::string digits = UnscaledDigits(value);
  const int64_t scale = value.scale;
  const int64_t right_pad = (4 - scale % 4) % 4;
  digits.append(static_cast<size_t>(right_pad), '0');
  digits.insert(0, static_cast<size_t>((4 - digits.size() % 4) % 4), '0');
  const auto groups = static_cast<int64_t>(digits.size() / 4);
  const int64_t fraction_groups = (scale + right_pad) / 4;
  auto group = [&](int64_t i) { return std::stoi(digits.substr(static_cast<size_t>(4 * i), 4)); };
  int64_t first = 0, last = groups - 1;
  while (first < groups && group(first) == 0) ++first;
  while (last > first && group(last) == 0) --last;
  Base10000 result;
  if (first == groups) return result;
  result.weight = static_cast<int>(groups - 1 - first - fraction_groups);
  result.count = last - first + 1;
  for (int64_t i = 0; i < 4 && first + i <= last; ++i) result.digits[i] = group(first + i);
  return result;
}

}  // namespace internal

Int128 PowerOfTen(int exponent) { return kPowersOfTen[exponent]; }

Decimal Parse(std::string_view original) {
  std::string_view text = original;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  if (!text.empty() && std::isalpha(static_cast<unsigned char>(text.back()))) {
    std::string lower = Lower(text);
    if (lower == "nan") return Decimal::NaN();
    if (lower == "infinity" || lower == "+infinity" || lower == "inf" || lower == "+inf") {
      return Decimal::Infinity(false);
    }
    if (lower == "-infinity" || lower == "-inf") return Decimal::Infinity(true);
  }

  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  Int128 unscaled = 0;      // the first 38 significant digits
  int64_t significant = 0;  // digits from the first non-zero one
  size_t first_significant = 0;
  int64_t fraction_digits = 0;
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
    if (significant == 0) {
      if (c == '0') continue;
      first_significant = i;
    }
    if (++significant <= kNarrowDigits) unscaled = unscaled * 10 + (c - '0');
  }
  if (!any_digit) ThrowBadText(original);
  const size_t digits_end = i;
  int64_t exponent = 0;
  bool exponent_overflow = false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exponent_negative = text[i++] == '-';
    if (i == text.size() || text[i] < '0' || text[i] > '9') ThrowBadText(original);
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      exponent = std::min<int64_t>(exponent * 10 + (text[i] - '0'), INT_MAX);
    }
    // PostgreSQL's bound on an exponent, before the value's own limits apply.
    exponent_overflow = exponent >= INT_MAX / 2;
    if (exponent_negative) exponent = -exponent;
  }
  if (i != text.size()) ThrowBadText(original);
  if (exponent_overflow) ThrowOverflow();
  int64_t scale = fraction_digits - exponent;
  if (significant == 0) return Finite(0, static_cast<int>(std::clamp<int64_t>(scale, 0, INT_MAX)));
  // Checked before any digit is written out, so that 1e100000000 costs nothing.
  if (scale > kMaxScale || significant - scale > kMaxIntegerDigits) ThrowOverflow();
  if (significant <= kNarrowDigits) {
    if (scale >= 0) return Finite(negative ? -unscaled : unscaled, static_cast<int>(scale));
    Int128 scaled = 0;
    if (ScaleUp(unscaled, static_cast<int>(-scale), &scaled)) {
      return Finite(negative ? -scaled : scaled, 0);
    }
  }
  std::string digits;
  digits.reserve(static_cast<size_t>(significant + std::max<int64_t>(0, -scale)));
  for (size_t k = first_significant; k < digits_end; ++k) {
    if (text[k] != '.') digits.push_back(text[k]);
  }
  if (scale < 0) {
    digits.append(static_cast<size_t>(-scale), '0');
    scale = 0;
  }
  return FromUnscaledDigits(negative, digits, static_cast<int>(scale));
}

std::string UnscaledDigits(const Decimal& value) {
  if (value.wide) {
    std::string digits = value.wide->value.str();
    if (digits.front() == '-') digits.erase(0, 1);
    return digits;
  }
  char buffer[kNarrowDigits + 1];
  char* end = buffer + sizeof(buffer);
  char* p = end;
  UInt128 magnitude = Magnitude(value.unscaled);
  do {
    *--p = static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  } while (magnitude != 0);
  return std::string(p, end);
}

Decimal FromUnscaledDigits(bool negative, std::string_view digits, int scale) {
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  if (digits.size() <= static_cast<size_t>(kNarrowDigits)) {
    Int128 unscaled = 0;
    for (char c : digits) unscaled = unscaled * 10 + (c - '0');
    return Finite(negative ? -unscaled : unscaled, scale);
  }
  if (static_cast<int64_t>(digits.size()) - scale > kMaxIntegerDigits) ThrowOverflow();
  BigInt unscaled = BigFromDigits(digits);
  if (negative) unscaled = -unscaled;
  return BigFinite(std::move(unscaled), scale);
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
  std::string digits = UnscaledDigits(value);
  const auto scale = static_cast<size_t>(value.scale);
  std::string text;
  text.reserve(digits.size() + scale + 3);
  if (SignOf(value) < 0) text.push_back('-');
  if (digits.size() > scale) {
    text.append(digits, 0, digits.size() - scale);
  } else {
    text.push_back('0');
  }
  if (scale > 0) {
    text.push_back('.');
    if (digits.size() < scale) text.append(scale - digits.size(), '0');
    text.append(digits, digits.size() > scale ? digits.size() - scale : 0);
  }
  return text;
}

int SignOf(const Decimal& value) {
  switch (value.kind) {
    case Kind::kInfinity:
      return 1;
    case Kind::kNegativeInfinity:
      return -1;
    case Kind::kNaN:
      return 0;
    case Kind::kFinite:
      break;
  }
  return value.wide ? value.wide->value.sign() : SignOfInteger(value.unscaled);
}

int Compare(const Decimal& left, const Decimal& right) {
  int left_rank = ClassRank(left.kind), right_rank = ClassRank(right.kind);
  if (left_rank != right_rank) return left_rank < right_rank ? -1 : 1;
  if (!left.is_finite()) return 0;
  if (!left.wide && !right.wide && left.scale == right.scale) {
    return left.unscaled < right.unscaled ? -1 : (left.unscaled > right.unscaled ? 1 : 0);
  }
  int left_sign = SignOf(left), right_sign = SignOf(right);
  if (left_sign != right_sign) return left_sign < right_sign ? -1 : 1;
  if (left_sign == 0) return 0;
  int scale = std::max(left.scale, right.scale);
  if (!left.wide && !right.wide) {
    Int128 a = 0, b = 0;
    // A side no longer narrow once aligned is larger in magnitude than the other.
    if (!NarrowAtScale(left, scale, false, &a)) return left_sign;
    if (!NarrowAtScale(right, scale, false, &b)) return -left_sign;
    return a < b ? -1 : (a > b ? 1 : 0);
  }
  BigInt a = BigAtScale(left, scale, false), b = BigAtScale(right, scale, false);
  return a < b ? -1 : (a > b ? 1 : 0);
}

Decimal Normalize(const Decimal& value) {
  if (!value.is_finite()) return value;
  if (!value.wide) {
    if (value.unscaled == 0) return Finite(0, 0);
    Decimal normal = value;
    while (normal.scale > 0 && normal.unscaled % 10 == 0) {
      normal.unscaled /= 10;
      --normal.scale;
    }
    return normal;
  }
  BigInt unscaled = value.wide->value;
  int scale = value.scale;
  BigInt quotient;
  BigInt remainder;
  for (int step : {19, 1}) {  // whole 19-digit blocks first, then single digits
    BigInt divisor = BigPowerOfTen(step);
    while (scale >= step) {
      boost::multiprecision::divide_qr(unscaled, divisor, quotient, remainder);
      if (remainder != 0) break;
      unscaled.swap(quotient);
      scale -= step;
    }
  }
  return BigFinite(std::move(unscaled), scale);
}

Decimal Rescale(const Decimal& value, int scale) {
  if (!value.is_finite()) return value;
  Int128 scaled = 0;
  if (!value.wide && ScaleUp(value.unscaled, scale - value.scale, &scaled)) {
    return Finite(scaled, scale);
  }
  return BigFinite(BigAtScale(value, scale, false), scale);
}

Decimal FromInteger(int64_t value) { return Finite(value, 0); }

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
  if (!value.wide && Magnitude(value.unscaled) <= (UInt128{1} << 53) && value.scale <= 22) {
    return static_cast<double>(value.unscaled) / kExactPowers[value.scale];
  }
  std::string text = Format(value);
  errno = 0;
  double result = std::strtod(text.c_str(), nullptr);
  if (errno == ERANGE && (result == 0 || std::isinf(result))) {
    throw SqlError(sqlstate::kNumericValueOutOfRange,
                   "\"" + text + "\" is out of range for type double precision");
  }
  return result;
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
  auto out_of_range = [&] {
    return SqlError(sqlstate::kNumericValueOutOfRange, std::string(type_name) + " out of range");
  };
  if (value.wide) {
    BigInt integer = BigScaleDown(value.wide->value, value.scale, true);
    if (integer > std::numeric_limits<int64_t>::max() ||
        integer < std::numeric_limits<int64_t>::min()) {
      throw out_of_range();
    }
    return static_cast<int64_t>(integer);
  }
  Int128 integer = ScaleDown(value.unscaled, value.scale, true);
  if (integer > std::numeric_limits<int64_t>::max() ||
      integer < std::numeric_limits<int64_t>::min()) {
    throw out_of_range();
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
  if (!left.wide && !right.wide) {
    Int128 a = 0, b = 0, sum = 0;
    if (NarrowAtScale(left, scale, false, &a) && NarrowAtScale(right, scale, false, &b) &&
        !__builtin_add_overflow(a, b, &sum)) {
      return Finite(sum, scale);
    }
  }
  return BigFinite(BigAtScale(left, scale, false) + BigAtScale(right, scale, false), scale);
}

Decimal Subtract(const Decimal& left, const Decimal& right) { return Add(left, Negate(right)); }

Decimal Multiply(const Decimal& left, const Decimal& right) {
  if (left.is_nan() || right.is_nan()) return Decimal::NaN();
  if (!left.is_finite() || !right.is_finite()) {
    int sign = SignOf(left) * SignOf(right);
    return sign == 0 ? Decimal::NaN() : InfinityWithSign(sign);  // infinity × 0 is NaN
  }
  int scale = left.scale + right.scale;
  Int128 product = 0;
  if (!left.wide && !right.wide && scale <= kMaxScale &&
      !__builtin_mul_overflow(left.unscaled, right.unscaled, &product)) {
    return Finite(product, scale);
  }
  BigInt exact = BigUnscaled(left) * BigUnscaled(right);
  if (scale > kMaxScale) {
    // More digits after the point than a numeric holds: PostgreSQL rounds them away.
    exact = BigScaleDown(exact, scale - kMaxScale, true);
    scale = kMaxScale;
  }
  return BigFinite(std::move(exact), scale);
}

Decimal Divide(const Decimal& left, const Decimal& right) {
  if (left.is_nan() || right.is_nan()) return Decimal::NaN();
  if (!left.is_finite()) {
    if (!right.is_finite()) return Decimal::NaN();
    if (SignOf(right) == 0) ThrowDivisionByZero();
    return InfinityWithSign(SignOf(left) * SignOf(right));
  }
  if (!right.is_finite()) return FromInteger(0);  // finite / infinity
  if (SignOf(right) == 0) ThrowDivisionByZero();
  int scale = DivisionScale(left, right);
  // left / right at `scale`: |left.unscaled| × 10^(scale + right.scale - left.scale) / |right|.
  int extra = scale + right.scale - left.scale;  // never negative: scale >= left.scale
  bool negative = SignOf(left) * SignOf(right) < 0;
  UInt128 quotient = 0;
  if (!left.wide && !right.wide &&
      DivideMagnitudes(Magnitude(left.unscaled), Magnitude(right.unscaled), extra, &quotient)) {
    auto signed_quotient = static_cast<Int128>(quotient);
    return Finite(negative ? -signed_quotient : signed_quotient, scale);
  }
  BigInt divisor = abs(BigUnscaled(right));
  BigInt exact;
  BigInt remainder;
  boost::multiprecision::divide_qr(abs(BigUnscaled(left)) * BigPowerOfTen(extra), divisor, exact,
                                   remainder);
  if (remainder * 2 >= divisor) ++exact;
  if (negative) exact = -exact;
  return BigFinite(std::move(exact), scale);
}

Decimal Modulo(const Decimal& left, const Decimal& right) {
  if (left.is_nan() || right.is_nan()) return Decimal::NaN();
  if (!left.is_finite()) {
    if (right.is_finite() && SignOf(right) == 0) ThrowDivisionByZero();
    return Decimal::NaN();
  }
  if (!right.is_finite()) return left;  // x mod infinity is x
  if (SignOf(right) == 0) ThrowDivisionByZero();
  int scale = std::max(left.scale, right.scale);
  // Truncated division: the remainder has the sign of the dividend.
  if (!left.wide && !right.wide) {
    Int128 a = 0, b = 0;
    if (NarrowAtScale(left, scale, false, &a) && NarrowAtScale(right, scale, false, &b)) {
      return Finite(a % b, scale);
    }
  }
  return BigFinite(BigAtScale(left, scale, false) % BigAtScale(right, scale, false), scale);
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
  if (value.wide) return BigFinite(-value.wide->value, value.scale);
  return {-value.unscaled, value.scale, Kind::kFinite, nullptr};
}

Decimal Abs(const Decimal& value) {
  if (value.is_nan() || SignOf(value) >= 0) return value;
  return Negate(value);
}

Decimal Sign(const Decimal& value) {
  if (value.is_nan()) return value;
  return FromInteger(SignOf(value));
}

namespace {

Decimal RoundOrTruncate(const Decimal& value, int64_t requested, bool round) {
  if (!value.is_finite()) return value;
  // PostgreSQL's bounds: a numeric's scale, and one digit beyond its largest magnitude.
  int scale = static_cast<int>(std::clamp<int64_t>(requested, -(kMaxIntegerDigits + 1), kMaxScale));
  Int128 units = 0;
  if (!value.wide && NarrowAtScale(value, scale, round, &units)) {
    return FromUnitsAtScale(units, scale);
  }
  return FromUnitsAtScale(BigAtScale(value, scale, round), scale);
}

// Floor (direction -1) or ceiling (+1): the integer part, moved by one when a fraction in
// that direction is cut off.
Decimal ToInteger(const Decimal& value, int direction) {
  if (!value.is_finite()) return value;
  if (!value.wide) {
    Int128 integer = ScaleDown(value.unscaled, value.scale, false);
    bool has_fraction = value.scale > kNarrowDigits
                            ? value.unscaled != 0
                            : value.unscaled % kPowersOfTen[value.scale] != 0;
    if (has_fraction && SignOfInteger(value.unscaled) == direction) integer += direction;
    return Finite(integer, 0);
  }
  BigInt integer;
  BigInt fraction;
  boost::multiprecision::divide_qr(value.wide->value, BigPowerOfTen(value.scale), integer,
                                   fraction);
  if (fraction.sign() == direction) integer += direction;
  return BigFinite(std::move(integer), 0);
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
  int scale =
      std::clamp(std::max(kMinSignificantDigits - root_weight, value.scale), 0, kMaxDisplayScale);
  // floor(sqrt(N)) for N = floor(value × 10^(2 × scale + 2)), one digit more than the result
  // keeps, rounded half away from zero to the last.
  int shift = 2 * scale + 2 - value.scale;
  BigInt magnitude = abs(BigUnscaled(value));
  BigInt n = shift >= 0 ? BigInt(magnitude * BigPowerOfTen(shift))
                        : BigScaleDown(magnitude, -shift, false);
  BigInt root = IntegerSqrt(n);
  BigInt last_digit = root % 10;
  root /= 10;
  if (last_digit >= 5) ++root;
  return BigFinite(std::move(root), scale);
}

Decimal ApplyTypmod(const Decimal& value, int precision, int scale) {
  if (value.is_nan()) return value;
  if (!value.is_finite()) {
    throw SqlError(sqlstate::kNumericValueOutOfRange, "numeric field overflow")
        .WithDetail("A field with precision " + std::to_string(precision) + ", scale " +
                    std::to_string(scale) + " cannot hold an infinite value.");
  }
  auto field_overflow = [&] {
    int integer_digits = precision - scale;
    std::string bound = integer_digits != 0 ? "10^" + std::to_string(integer_digits) : "1";
    return SqlError(sqlstate::kNumericValueOutOfRange, "numeric field overflow")
        .WithDetail("A field with precision " + std::to_string(precision) + ", scale " +
                    std::to_string(scale) + " must round to an absolute value less than " + bound +
                    ".");
  };
  // At the type's scale the value must have fewer than `precision` digits.
  Int128 units = 0;
  if (!value.wide && NarrowAtScale(value, scale, true, &units)) {
    if (precision < kNarrowDigits &&
        Magnitude(units) >= static_cast<UInt128>(kPowersOfTen[precision])) {
      throw field_overflow();
    }
    return FromUnitsAtScale(units, scale);
  }
  BigInt wide_units = BigAtScale(value, scale, true);
  if (abs(wide_units) >= BigPowerOfTen(precision)) throw field_overflow();
  return FromUnitsAtScale(std::move(wide_units), scale);
}

}  // namespace decimal
}  // namespace stave
