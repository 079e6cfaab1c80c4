// exp, ln, log and power over numeric, as PostgreSQL's numeric.c defines them: the same
// special values, errors and result scales (which numeric.c picks from rough estimates of
// the result's size, reproduced here step by step). The values themselves come from MPFR,
// computed with 20 or more guard digits beyond the result scale and then rounded half away
// from zero, so they are the correctly rounded results that numeric.c's own guard digits
// also give.

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "common/decimal.h"
#include "common/decimal_internal.h"
#include "common/sql_error.h"

namespace stave::decimal {
namespace {

using internal::Base10000;
using internal::Base10000Digits;
using internal::ThrowOverflow;

// numeric.c's constants.
constexpr int kMinSignificantDigits = 16;  // NUMERIC_MIN_SIG_DIGITS
constexpr int kMaxResultScale = 2000;      // NUMERIC_MAX_RESULT_SCALE
constexpr int kGuardDigits = 20;           // beyond what the result shows
constexpr double kLog10OfE = 0.434294481903252;

[[noreturn]] void ThrowLogOfZero() {
  throw SqlError(sqlstate::kInvalidArgumentForLog, "cannot take logarithm of zero");
}

[[noreturn]] void ThrowLogOfNegative() {
  throw SqlError(sqlstate::kInvalidArgumentForLog, "cannot take logarithm of a negative number");
}

int ClampScale(int64_t scale) {
  return static_cast<int>(std::clamp<int64_t>(scale, 0, kMaxDisplayScale));
}

Decimal ZeroAtScale(int scale) { return Round(FromInteger(0), scale); }

// numericvar_to_double_no_overflow: the nearest double, ±infinity or 0 beyond its range.
double ToDoubleNoOverflow(const Decimal& value) {
  try {
    return ToDouble(value);
  } catch (const SqlError&) {
    return UnscaledDigits(value).size() > static_cast<size_t>(value.scale)
               ? SignOf(value) * std::numeric_limits<double>::infinity()
               : 0.0;
  }
}

// MPFR caches constants (log 2 and others) per thread, at the highest precision asked so far.
// They are freed when the thread ends, not at every call, which would compute them again.
void FreeMpfrCacheAtThreadExit() {
  struct CacheRelease {
    ~CacheRelease() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }
  };
  thread_local CacheRelease release;
}

// An MPFR number with enough bits for `digits` significant decimal digits, freed with it.
class Real {
 public:
  explicit Real(int64_t digits) {
    FreeMpfrCacheAtThreadExit();
    mpfr_init2(value_, static_cast<mpfr_prec_t>(static_cast<double>(digits) * 3.33) + 64);
  }
  Real(int64_t digits, const Decimal& value) : Real(digits) {
    mpfr_set_str(value_, Format(value).c_str(), 10, MPFR_RNDN);
  }
  ~Real() { mpfr_clear(value_); }
  Real(const Real&) = delete;
  Real& operator=(const Real&) = delete;

  mpfr_ptr get() { return value_; }

  // Rounded half away from zero to `scale` digits after the point, by way of a decimal
  // expansion that keeps kGuardDigits more.
  Decimal ToDecimal(int scale) {
    if (mpfr_zero_p(value_)) return ZeroAtScale(scale);
    // |value| < 2^exponent, so it has at most exponent × log10(2) + 1 digits before the point.
    const auto integer_digits =
        static_cast<int64_t>(static_cast<double>(mpfr_get_exp(value_)) * 0.30102999566398) + 1;
    const int64_t digits = integer_digits + scale + kGuardDigits;
    if (digits < kGuardDigits / 2) return ZeroAtScale(scale);  // far below 10^-scale
    mpfr_exp_t point = 0;                                      // value = 0.DIGITS × 10^point
    char* text = mpfr_get_str(nullptr, &point, 10, static_cast<size_t>(digits), value_, MPFR_RNDN);
    std::string expansion(text);
    mpfr_free_str(text);
    bool negative = expansion.front() == '-';
    if (negative) expansion.erase(0, 1);
    int64_t expansion_scale = static_cast<int64_t>(expansion.size()) - point;
    if (expansion_scale < 0) {
      expansion.append(static_cast<size_t>(-expansion_scale), '0');
      expansion_scale = 0;
    }
    return Round(FromUnscaledDigits(negative, expansion, static_cast<int>(expansion_scale)), scale);
  }

 private:
  mpfr_t value_;
};

// numeric.c's estimate_ln_dweight: about the decimal weight of ln(value), for value > 0.
int EstimateLnWeight(const Decimal& value) {
  if (Compare(value, Parse("0.9")) >= 0 && Compare(value, Parse("1.1")) <= 0) {
    // ln(value) is about value - 1 here.
    Decimal x = Subtract(value, FromInteger(1));
    if (SignOf(x) == 0) return 0;  // ln(1) = 0 exactly
    Base10000 lead = Base10000Digits(x);
    return lead.weight * 4 + static_cast<int>(std::log10(lead.digits[0]));
  }
  Base10000 lead = Base10000Digits(value);
  double digits = lead.digits[0];
  double weight = lead.weight * 4.0;
  if (lead.count > 1) {
    digits = digits * 10000 + lead.digits[1];
    weight -= 4;
  }
  double ln = std::log(digits) + weight * 2.302585092994046;
  return static_cast<int>(std::log10(std::fabs(ln)));
}

// ln(value) rounded to `scale` digits after the point, for value > 0.
Decimal LnAtScale(const Decimal& value, int scale) {
  // |ln| is below 10^6 for any numeric; the input needs as many digits as the output.
  const int64_t digits = int64_t{scale} + 6 + kGuardDigits;
  Real x(digits, value), result(digits);
  mpfr_log(result.get(), x.get(), MPFR_RNDN);
  return result.ToDecimal(scale);
}

bool IsIntegral(const Decimal& value) {
  return value.is_finite() && Compare(Trunc(value, 0), value) == 0;
}

// numeric.c's power_var_int: an integral exponent that fits 32 bits.
Decimal PowerOfInteger(const Decimal& base, int64_t exponent) {
  const int scale = ClampScale(std::max(kMinSignificantDigits, base.scale));
  if (exponent == 0) return Round(FromInteger(1), scale);
  if (SignOf(base) == 0) return ZeroAtScale(scale);
  // log10 of the result from the first four base-10000 digits, as numeric.c estimates it.
  Base10000 lead = Base10000Digits(base);
  double leading = lead.digits[0];
  int64_t power = int64_t{lead.weight} * 4;
  for (int64_t i = 1; i < lead.count && i < 4; ++i) {
    leading = leading * 10000 + lead.digits[i];
    power -= 4;
  }
  const double magnitude = static_cast<double>(exponent) * (std::log10(leading) + power);
  if (magnitude > 3.0 * 32767 * 4 || magnitude > kMaxIntegerDigits + 1) ThrowOverflow();
  if (magnitude + 1 < -scale) return ZeroAtScale(scale);
  const int64_t digits = static_cast<int64_t>(std::max(magnitude, 0.0)) + scale + kGuardDigits +
                         static_cast<int64_t>(std::log10(std::fabs(exponent))) + 1;
  Real x(digits, base), result(digits);
  mpfr_pow_si(result.get(), x.get(), static_cast<long>(exponent), MPFR_RNDN);
  return result.ToDecimal(scale);
}

}  // namespace

Decimal Exp(const Decimal& value) {
  if (value.is_nan()) return value;
  if (value.kind == Decimal::Kind::kInfinity) return value;
  if (value.kind == Decimal::Kind::kNegativeInfinity) return FromInteger(0);
  const double x = ToDoubleNoOverflow(value);
  const double weight = std::clamp(x * kLog10OfE, -1.0 * kMaxResultScale, 1.0 * kMaxResultScale);
  const int scale =
      ClampScale(std::max<int64_t>(kMinSignificantDigits - static_cast<int>(weight), value.scale));
  if (std::fabs(x) >= kMaxResultScale * 3) {
    if (x > 0) ThrowOverflow();
    return ZeroAtScale(scale);
  }
  const int64_t digits =
      static_cast<int64_t>(std::max(x * kLog10OfE, 0.0)) + 1 + scale + kGuardDigits;
  Real argument(digits + 4, value), result(digits);
  mpfr_exp(result.get(), argument.get(), MPFR_RNDN);
  return result.ToDecimal(scale);
}

Decimal Ln(const Decimal& value) {
  if (value.is_nan() || value.kind == Decimal::Kind::kInfinity) return value;
  if (SignOf(value) < 0) ThrowLogOfNegative();
  if (SignOf(value) == 0) ThrowLogOfZero();
  const int scale =
      ClampScale(std::max<int64_t>(kMinSignificantDigits - EstimateLnWeight(value), value.scale));
  return LnAtScale(value, scale);
}

Decimal Log(const Decimal& base, const Decimal& value) {
  if (base.is_nan() || value.is_nan()) return Decimal::NaN();
  if (base.is_finite() && value.is_finite()) {
    for (const Decimal* argument : {&base, &value}) {  // ln(base) first, as numeric.c
      if (SignOf(*argument) < 0) ThrowLogOfNegative();
      if (SignOf(*argument) == 0) ThrowLogOfZero();
    }
  }
  if (SignOf(base) < 0 || SignOf(value) < 0) ThrowLogOfNegative();
  if (SignOf(base) == 0 || SignOf(value) == 0) ThrowLogOfZero();
  if (base.kind == Decimal::Kind::kInfinity) {
    // log(Inf, Inf) is Inf / Inf; log(Inf, x) is 0.
    return value.kind == Decimal::Kind::kInfinity ? Decimal::NaN() : FromInteger(0);
  }
  if (value.kind == Decimal::Kind::kInfinity) return value;
  if (Compare(base, FromInteger(1)) == 0) {
    throw SqlError(sqlstate::kDivisionByZero, "division by zero");
  }
  const int base_weight = EstimateLnWeight(base);
  const int value_weight = EstimateLnWeight(value);
  const int result_weight = value_weight - base_weight;
  const int scale = ClampScale(
      std::max<int64_t>({kMinSignificantDigits - result_weight, base.scale, value.scale}));
  // ln(base) near 0 magnifies the error of ln(value): carry its leading zeros too.
  const int64_t digits =
      int64_t{scale} + std::max(result_weight, 0) + std::max(-base_weight, 0) + 6 + kGuardDigits;
  Real b(digits, base), x(digits, value), ln_base(digits), result(digits);
  mpfr_log(ln_base.get(), b.get(), MPFR_RNDN);
  mpfr_log(result.get(), x.get(), MPFR_RNDN);
  mpfr_div(result.get(), result.get(), ln_base.get(), MPFR_RNDN);
  return result.ToDecimal(scale);
}

Decimal Power(const Decimal& base, const Decimal& exponent) {
  const Decimal one = FromInteger(1);
  if (base.is_nan()) {
    // POSIX pow(3), as PostgreSQL follows it: NaN ^ 0 = 1 and 1 ^ NaN = 1.
    return exponent.is_finite() && SignOf(exponent) == 0 ? one : Decimal::NaN();
  }
  if (exponent.is_nan()) return base.is_finite() && Compare(base, one) == 0 ? one : Decimal::NaN();
  const int base_sign = SignOf(base), exponent_sign = SignOf(exponent);
  if (base_sign == 0 && exponent_sign < 0) {
    throw SqlError(sqlstate::kInvalidArgumentForPower,
                   "zero raised to a negative power is undefined");
  }
  if (base_sign < 0 && exponent.is_finite() && !IsIntegral(exponent)) {
    throw SqlError(sqlstate::kInvalidArgumentForPower,
                   "a negative number raised to a non-integer power yields a complex result");
  }
  if (!base.is_finite() || !exponent.is_finite()) {
    // The rest of pow(3)'s rules for infinite inputs.
    if (base.is_finite() && Compare(base, one) == 0) return one;
    if (exponent_sign == 0) return one;
    if (base_sign == 0 && exponent_sign > 0) return FromInteger(0);
    if (!exponent.is_finite()) {
      if (base.is_finite() && Compare(base, Negate(one)) == 0) return one;
      bool above_one = !base.is_finite() || Compare(Abs(base), one) > 0;
      return above_one == (exponent_sign > 0) ? Decimal::Infinity(false) : FromInteger(0);
    }
    if (base.kind == Decimal::Kind::kInfinity) {
      return exponent_sign > 0 ? Decimal::Infinity(false) : FromInteger(0);
    }
    // -Infinity: 0 for a negative power; ±Infinity by the parity of an integral one.
    if (exponent_sign < 0) return FromInteger(0);
    bool odd = IsIntegral(exponent) && SignOf(Modulo(exponent, FromInteger(2))) != 0;
    return Decimal::Infinity(odd);
  }
  if (IsIntegral(exponent) && Compare(Abs(exponent), FromInteger(INT32_MAX)) <= 0) {
    return PowerOfInteger(base, ToInt64(exponent, "integer"));
  }
  if (base_sign == 0) return ZeroAtScale(kMinSignificantDigits);
  if (base_sign < 0) ThrowLogOfNegative();  // an integral exponent beyond 32 bits
  // numeric.c's power_var: the result's size from ln(base) × exponent at about 8 digits.
  const int ln_weight = EstimateLnWeight(base);
  const int rough_scale = std::max(8 - ln_weight, 0);
  const Decimal rough = Round(Multiply(LnAtScale(base, rough_scale), exponent), rough_scale);
  double weight = ToDoubleNoOverflow(rough);
  if (std::fabs(weight) > kMaxResultScale * 3.01) {
    if (weight > 0) ThrowOverflow();
    return ZeroAtScale(kMaxDisplayScale);
  }
  weight *= kLog10OfE;
  const int scale = ClampScale(std::max<int64_t>(
      {kMinSignificantDigits - static_cast<int>(weight), base.scale, exponent.scale}));
  const int64_t digits = static_cast<int64_t>(std::max(weight, 0.0)) + 1 + scale +
                         std::max(-ln_weight, 0) +
                         static_cast<int64_t>(UnscaledDigits(exponent).size()) + kGuardDigits;
  Real b(digits, base), e(digits, exponent), ln(digits), result(digits);
  // exp_var's own bound on exponent × ln(base).
  mpfr_log(ln.get(), b.get(), MPFR_RNDN);
  mpfr_mul(ln.get(), ln.get(), e.get(), MPFR_RNDN);
  const double product = mpfr_get_d(ln.get(), MPFR_RNDN);
  if (std::fabs(product) >= kMaxResultScale * 3) {
    if (product > 0) ThrowOverflow();
    return ZeroAtScale(scale);
  }
  mpfr_pow(result.get(), b.get(), e.get(), MPFR_RNDN);
  return result.ToDecimal(scale);
}

}  // namespace stave::decimal
