#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/decimal.h"
#include "common/temporal.h"

// PostgreSQL's to_char: a date/time or a number formatted by a template pattern.
//
// Date/time patterns: HH, HH12, HH24, MI, SS, MS, US, FF1–FF6, SSSS, SSSSS, AM, PM, A.M.,
// P.M. (and lower case), Y,YYY, YYYY, YYY, YY, Y, IYYY, IYY, IY, I, BC, AD, B.C., A.D.,
// MONTH, Month, month, MON, Mon, mon, MM, DAY, Day, day, DY, Dy, dy, DDD, IDDD, DD, D, ID,
// W, WW, IW, CC, J, Q, RM, rm, TZ, tz, TZH, TZM, OF; the prefixes FM (no padding) and FX,
// TM (names in the C locale's English, unpadded), the suffixes TH and th (ordinal);
// "quoted text" (a backslash escapes inside it), and any other character as itself.
// Stave's session time zone is UTC, so TZ is "UTC" and OF "+00" for a timestamptz.
// Errors are SqlErrors with PostgreSQL's SQLSTATEs: 22007 for a pattern an interval does
// not have (AD, month and day names, D, ID, time zones); 0A000 for the calendar patterns
// Stave does not compute for intervals (CC, DDD, IDDD, J, Q, W, WW, IW, IYYY, RM).

namespace stave::to_char {

/// A date/time template, parsed once (any text is a template).
class DateTimeFormat {
 public:
  /// One piece of the template: a field (`field` >= 0, an index into the .cc's keyword
  /// table, with its FM and TH modifiers) or literal text (`field` < 0).
  struct Node {
    int field = -1;
    bool fill_mode = false;
    bool translation_mode = false;  ///< TM: names are not padded.
    bool ordinal = false;           ///< TH or th.
    bool ordinal_upper = false;     ///< TH.
    std::string text;
  };

  explicit DateTimeFormat(std::string_view pattern);

  /// A timestamp (microseconds since 2000-01-01) or timestamptz in UTC.
  std::string FormatTimestamp(int64_t micros, bool with_time_zone) const;
  /// Throws 22007 for fields an interval does not have (AD, month and day names, TZ).
  std::string FormatInterval(const temporal::Interval& interval) const;

 private:
  std::vector<Node> nodes_;
};

/// A number template, parsed once: 9 (a digit, blank where a leading zero would be), 0 (a
/// digit, zero-padded), . and D (the decimal point), , and G (the group separator, blank
/// before the first digit), S (the sign, anchored to the number), PR (angle brackets around a
/// negative number), MI, PL, SG (minus, plus, either, at their position), FM (no padding, no
/// trailing zeros for 9s), "quoted text" and other characters as themselves. D and G are '.'
/// and ',' (the C locale). Without S, PR, MI or SG, a sign position ('-' or blank) precedes
/// the number. A number whose integer part has more digits than the template prints as #s.
/// Throws 42601 for templates PostgreSQL refuses (two decimal points, S twice, S with PR) and
/// 0A000 for the patterns Stave lacks (L, V, EEEE, RN, TH, B, C, SP).
class NumberFormat {
 public:
  /// An element of the template: a pattern or literal text.
  struct Element {
    enum class Kind {
      kDigit9,
      kDigit0,
      kDecimalPoint,
      kGroupSeparator,
      kSign,  // S
      kBracket,
      kMinus,
      kPlus,
      kPlusMinus,  // SG
      kLiteral,
    };
    Kind kind = Kind::kLiteral;
    std::string text;  ///< kLiteral.
  };

  explicit NumberFormat(std::string_view pattern);

  /// The number as PostgreSQL's numeric_out would print it (`-12.50`, `NaN`), and the number
  /// of fraction digits the template rounds it to (`post_digits()`), already applied.
  std::string Format(std::string_view number) const;
  /// 9s and 0s after the decimal point: the digits to round to.
  int post_digits() const { return post_; }
  /// 9s and 0s before it.
  int pre_digits() const { return pre_; }

 private:
  std::vector<Element> elements_;
  int pre_ = 0;
  int post_ = 0;
  bool decimal_ = false;
  bool fill_mode_ = false;
  bool has_zero_ = false;
  int zero_start_ = 0;       ///< Index among the digit elements of the first 0 before the point.
  int zero_end_ = 0;         ///< Digit elements up to the last 0.
  bool sign_ = false;        ///< S.
  bool sign_after_ = false;  ///< S follows the digits.
  bool bracket_ = false;
  bool minus_ = false;  ///< MI or SG.
  bool plus_ = false;   ///< PL or SG.
};

/// to_char of an integer, a numeric or a double precision (`float_digits` 15) or real (6)
/// value: the digits as PostgreSQL computes them for each type, then NumberFormat::Format.
std::string FormatInteger(const NumberFormat& format, int64_t value);
std::string FormatNumeric(const NumberFormat& format, const Decimal& value);
std::string FormatFloat(const NumberFormat& format, double value, int float_digits);

}  // namespace stave::to_char
