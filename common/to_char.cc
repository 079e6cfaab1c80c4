#include "common/to_char.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "common/sql_error.h"

namespace stave::to_char {
namespace {

namespace t = temporal;

// The date/time fields, each with every spelling PostgreSQL accepts (the case of a name's
// spelling is the case of its output: MONTH, Month, month).
enum class Field {
  kAd,         // AD, BC
  kAdDots,     // A.D., B.C.
  kAm,         // AM, PM
  kAmDots,     // A.M., P.M.
  kCentury,    // CC
  kDayName,    // DAY
  kDayAbbrev,  // DY
  kDayOfYear,  // DDD
  kDayOfMonth,
  kDayOfWeek,     // D: Sunday 1
  kIsoDayOfWeek,  // ID: Monday 1
  kIsoDayOfYear,  // IDDD
  kFraction,      // FF1 to FF6
  kFixedFormat,   // FX: for parsing only; prints nothing.
  kHour12,
  kHour24,
  kIsoWeek,
  kIsoYear4,
  kIsoYear3,
  kIsoYear2,
  kIsoYear1,
  kJulianDay,
  kMinute,
  kMonth,  // MM
  kMonthName,
  kMonthAbbrev,
  kMillisecond,
  kOffset,  // OF
  kQuarter,
  kRomanMonth,
  kSecondsOfDay,  // SSSS, SSSSS
  kSecond,
  kTimeZone,
  kTimeZoneHours,
  kTimeZoneMinutes,
  kMicrosecond,
  kWeekOfYear,   // WW
  kWeekOfMonth,  // W
  kYearComma,    // Y,YYY
  kYear4,
  kYear3,
  kYear2,
  kYear1,
};

enum class Case { kUpper, kCapitalized, kLower };

struct Keyword {
  std::string_view text;
  Field field;
  Case letter_case = Case::kUpper;
  int digits = 0;  // FF1–FF6.
};

// Longest first, so that the first prefix match is the right one (HH24 before HH).
constexpr Keyword kKeywords[] = {
    {"SSSSS", Field::kSecondsOfDay},
    {"sssss", Field::kSecondsOfDay},
    {"Y,YYY", Field::kYearComma},
    {"y,yyy", Field::kYearComma},
    {"MONTH", Field::kMonthName, Case::kUpper},
    {"Month", Field::kMonthName, Case::kCapitalized},
    {"month", Field::kMonthName, Case::kLower},
    {"A.D.", Field::kAdDots, Case::kUpper},
    {"a.d.", Field::kAdDots, Case::kLower},
    {"B.C.", Field::kAdDots, Case::kUpper},
    {"b.c.", Field::kAdDots, Case::kLower},
    {"A.M.", Field::kAmDots, Case::kUpper},
    {"a.m.", Field::kAmDots, Case::kLower},
    {"P.M.", Field::kAmDots, Case::kUpper},
    {"p.m.", Field::kAmDots, Case::kLower},
    {"HH24", Field::kHour24},
    {"hh24", Field::kHour24},
    {"HH12", Field::kHour12},
    {"hh12", Field::kHour12},
    {"IDDD", Field::kIsoDayOfYear},
    {"iddd", Field::kIsoDayOfYear},
    {"IYYY", Field::kIsoYear4},
    {"iyyy", Field::kIsoYear4},
    {"SSSS", Field::kSecondsOfDay},
    {"ssss", Field::kSecondsOfDay},
    {"YYYY", Field::kYear4},
    {"yyyy", Field::kYear4},
    {"DAY", Field::kDayName, Case::kUpper},
    {"Day", Field::kDayName, Case::kCapitalized},
    {"day", Field::kDayName, Case::kLower},
    {"DDD", Field::kDayOfYear},
    {"ddd", Field::kDayOfYear},
    {"FF1", Field::kFraction, Case::kUpper, 1},
    {"FF2", Field::kFraction, Case::kUpper, 2},
    {"FF3", Field::kFraction, Case::kUpper, 3},
    {"FF4", Field::kFraction, Case::kUpper, 4},
    {"FF5", Field::kFraction, Case::kUpper, 5},
    {"FF6", Field::kFraction, Case::kUpper, 6},
    {"ff1", Field::kFraction, Case::kUpper, 1},
    {"ff2", Field::kFraction, Case::kUpper, 2},
    {"ff3", Field::kFraction, Case::kUpper, 3},
    {"ff4", Field::kFraction, Case::kUpper, 4},
    {"ff5", Field::kFraction, Case::kUpper, 5},
    {"ff6", Field::kFraction, Case::kUpper, 6},
    {"IYY", Field::kIsoYear3},
    {"iyy", Field::kIsoYear3},
    {"MON", Field::kMonthAbbrev, Case::kUpper},
    {"Mon", Field::kMonthAbbrev, Case::kCapitalized},
    {"mon", Field::kMonthAbbrev, Case::kLower},
    {"TZH", Field::kTimeZoneHours},
    {"tzh", Field::kTimeZoneHours},
    {"TZM", Field::kTimeZoneMinutes},
    {"tzm", Field::kTimeZoneMinutes},
    {"YYY", Field::kYear3},
    {"yyy", Field::kYear3},
    {"AD", Field::kAd, Case::kUpper},
    {"ad", Field::kAd, Case::kLower},
    {"BC", Field::kAd, Case::kUpper},
    {"bc", Field::kAd, Case::kLower},
    {"AM", Field::kAm, Case::kUpper},
    {"am", Field::kAm, Case::kLower},
    {"PM", Field::kAm, Case::kUpper},
    {"pm", Field::kAm, Case::kLower},
    {"CC", Field::kCentury},
    {"cc", Field::kCentury},
    {"DD", Field::kDayOfMonth},
    {"dd", Field::kDayOfMonth},
    {"DY", Field::kDayAbbrev, Case::kUpper},
    {"Dy", Field::kDayAbbrev, Case::kCapitalized},
    {"dy", Field::kDayAbbrev, Case::kLower},
    {"FX", Field::kFixedFormat},
    {"fx", Field::kFixedFormat},
    {"HH", Field::kHour12},
    {"hh", Field::kHour12},
    {"ID", Field::kIsoDayOfWeek},
    {"id", Field::kIsoDayOfWeek},
    {"IW", Field::kIsoWeek},
    {"iw", Field::kIsoWeek},
    {"IY", Field::kIsoYear2},
    {"iy", Field::kIsoYear2},
    {"MI", Field::kMinute},
    {"mi", Field::kMinute},
    {"MM", Field::kMonth},
    {"mm", Field::kMonth},
    {"MS", Field::kMillisecond},
    {"ms", Field::kMillisecond},
    {"OF", Field::kOffset},
    {"of", Field::kOffset},
    {"RM", Field::kRomanMonth, Case::kUpper},
    {"rm", Field::kRomanMonth, Case::kLower},
    {"SS", Field::kSecond},
    {"ss", Field::kSecond},
    {"TZ", Field::kTimeZone, Case::kUpper},
    {"tz", Field::kTimeZone, Case::kLower},
    {"US", Field::kMicrosecond},
    {"us", Field::kMicrosecond},
    {"WW", Field::kWeekOfYear},
    {"ww", Field::kWeekOfYear},
    {"YY", Field::kYear2},
    {"yy", Field::kYear2},
    {"D", Field::kDayOfWeek},
    {"d", Field::kDayOfWeek},
    {"I", Field::kIsoYear1},
    {"i", Field::kIsoYear1},
    {"J", Field::kJulianDay},
    {"j", Field::kJulianDay},
    {"Q", Field::kQuarter},
    {"q", Field::kQuarter},
    {"W", Field::kWeekOfMonth},
    {"w", Field::kWeekOfMonth},
    {"Y", Field::kYear1},
    {"y", Field::kYear1},
};

constexpr std::array<std::string_view, 12> kMonthNames = {
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};
constexpr std::array<std::string_view, 7> kDayNames = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                       "Thursday", "Friday", "Saturday"};
constexpr std::array<std::string_view, 12> kRomanMonths = {"I",   "II",   "III", "IV", "V",  "VI",
                                                           "VII", "VIII", "IX",  "X",  "XI", "XII"};

std::string WithCase(std::string_view text, Case letter_case) {
  std::string out(text);
  for (size_t i = 0; i < out.size(); ++i) {
    bool upper = letter_case == Case::kUpper || (letter_case == Case::kCapitalized && i == 0);
    out[i] = static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(out[i]))
                                     : std::tolower(static_cast<unsigned char>(out[i])));
  }
  return out;
}

// 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st …
std::string_view OrdinalSuffix(int64_t number, bool upper) {
  int64_t last_two = std::llabs(number) % 100;
  int64_t last = last_two % 10;
  if (last_two >= 11 && last_two <= 13) last = 0;
  switch (last) {
    case 1:
      return upper ? "ST" : "st";
    case 2:
      return upper ? "ND" : "nd";
    case 3:
      return upper ? "RD" : "rd";
    default:
      return upper ? "TH" : "th";
  }
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The broken-down value to_char prints: a timestamp's calendar fields, or an interval's
// (years, months, days, and hours that may exceed 23).
struct Fields {
  bool interval = false;
  bool with_time_zone = false;
  int64_t year = 0;
  int64_t month = 0;  // 1–12 (0–11 for an interval's leftover months).
  int64_t day = 0;
  int64_t hour = 0;
  int64_t minute = 0;
  int64_t second = 0;
  int64_t micros = 0;  // Within the second.
  int64_t days = 0;    // Days since 2000-01-01 (timestamps).
};

[[noreturn]] void ThrowInvalidForInterval() {
  throw SqlError("22007", "invalid format specification for an interval value")
      .WithHint("Intervals are not tied to specific calendar dates.");
}

// A zero-padded number: `width` characters at least (0 under FM), one more for a minus sign
// if `sign_widens`.
std::string Padded(int64_t value, int width, bool fill_mode, bool sign_widens = true) {
  if (fill_mode) width = 0;
  if (value < 0 && sign_widens) ++width;
  return fmt::format("{:0{}d}", value, width);
}

// A name padded with blanks to `width` (9 for month and day names), unless FM.
std::string PaddedName(std::string text, size_t width, bool fill_mode) {
  if (!fill_mode && text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

int64_t DayOfWeek(int64_t days) { return ((days % 7) + 7 + 6) % 7; }  // 2000-01-01: Saturday.

// ISO 8601: the year and week of the week's Thursday.
void IsoWeek(int64_t days, int64_t* iso_year, int64_t* week, int64_t* iso_day_of_week) {
  int64_t dow = DayOfWeek(days);
  int64_t iso_dow = dow == 0 ? 7 : dow;
  int64_t thursday = days - (iso_dow - 4);
  t::CivilDate date = t::CivilFromDays(thursday);
  *iso_year = date.year;
  *week = (thursday - t::DaysFromCivil(date.year, 1, 1)) / 7 + 1;
  *iso_day_of_week = iso_dow;
}

std::string FormatField(const Keyword& keyword, const DateTimeFormat::Node& node, const Fields& f) {
  bool fm = node.fill_mode;
  bool unpadded_names = fm || node.translation_mode;
  bool interval = f.interval;
  // `sign_widens`: a negative value (of an interval) gets one more position for its sign.
  auto number = [&](int64_t value, int width, bool sign_widens = true) {
    std::string text = Padded(value, width, fm, sign_widens);
    if (node.ordinal) text += OrdinalSuffix(value, node.ordinal_upper);
    return text;
  };
  auto calendar_only = [&] {
    if (interval) ThrowInvalidForInterval();
  };
  // Fields an interval has in PostgreSQL too, but which Stave computes for timestamps only.
  auto timestamp_only = [&] {
    if (interval) {
      throw SqlError(
          sqlstate::kFeatureNotSupported,
          fmt::format("to_char of an interval does not support the pattern \"{}\"", keyword.text));
    }
  };
  int64_t day_of_year = 0;
  if (!interval) day_of_year = f.days - t::DaysFromCivil(f.year, 1, 1) + 1;
  bool pm = f.hour >= 12;
  switch (keyword.field) {
    case Field::kAd:
      calendar_only();
      return WithCase("AD", keyword.letter_case);
    case Field::kAdDots:
      calendar_only();
      return WithCase("A.D.", keyword.letter_case);
    case Field::kAm:  // Of an interval too, by its hours: 15 hours is PM.
      return WithCase(pm ? "PM" : "AM", keyword.letter_case);
    case Field::kAmDots:
      return WithCase(pm ? "P.M." : "A.M.", keyword.letter_case);
    case Field::kCentury:
      timestamp_only();
      return number(f.year > 0 ? (f.year + 99) / 100 : f.year / 100 - 1, 2);
    case Field::kDayName:
      calendar_only();
      return PaddedName(WithCase(kDayNames[DayOfWeek(f.days)], keyword.letter_case), 9,
                        unpadded_names);
    case Field::kDayAbbrev:
      calendar_only();
      return WithCase(kDayNames[DayOfWeek(f.days)].substr(0, 3), keyword.letter_case);
    case Field::kDayOfYear:
      timestamp_only();
      return number(day_of_year, 3);
    case Field::kDayOfMonth:
      return number(f.day, 2, false);  // As PostgreSQL: -3 days print as -3.
    case Field::kDayOfWeek:
      calendar_only();
      return number(DayOfWeek(f.days) + 1, 0);
    case Field::kIsoDayOfWeek: {
      calendar_only();
      int64_t iso_year, week, iso_dow;
      IsoWeek(f.days, &iso_year, &week, &iso_dow);
      return number(iso_dow, 0);
    }
    case Field::kIsoDayOfYear: {
      timestamp_only();
      int64_t iso_year, week, iso_dow;
      IsoWeek(f.days, &iso_year, &week, &iso_dow);
      return number((week - 1) * 7 + iso_dow, 3);
    }
    case Field::kFraction: {
      int64_t divisor = 1;
      for (int i = keyword.digits; i < 6; ++i) divisor *= 10;
      return Padded(f.micros / divisor, keyword.digits, false);
    }
    case Field::kFixedFormat:
      return "";
    case Field::kHour12:
      return number(f.hour % 12 == 0 ? 12 : f.hour % 12, 2);
    case Field::kHour24:
      return number(f.hour, 2);
    case Field::kIsoWeek:
    case Field::kIsoYear4:
    case Field::kIsoYear3:
    case Field::kIsoYear2:
    case Field::kIsoYear1: {
      timestamp_only();
      int64_t iso_year, week, iso_dow;
      IsoWeek(f.days, &iso_year, &week, &iso_dow);
      switch (keyword.field) {
        case Field::kIsoWeek:
          return number(week, 2);
        case Field::kIsoYear4:
          return number(iso_year, 4);
        case Field::kIsoYear3:
          return number(iso_year % 1000, 3);
        case Field::kIsoYear2:
          return number(iso_year % 100, 2);
        default:
          return number(iso_year % 10, 1);
      }
    }
    case Field::kJulianDay:
      timestamp_only();
      return number(f.days + 2451545, 0);
    case Field::kMinute:
      return number(f.minute, 2);
    case Field::kMonth:
      return number(f.month, 2);
    case Field::kMonthName:
      calendar_only();
      return PaddedName(WithCase(kMonthNames[f.month - 1], keyword.letter_case), 9, unpadded_names);
    case Field::kMonthAbbrev:
      calendar_only();
      return WithCase(kMonthNames[f.month - 1].substr(0, 3), keyword.letter_case);
    case Field::kMillisecond:
      return number(f.micros / 1000, 3);
    case Field::kOffset:
      calendar_only();
      return fm ? "+0" : "+00";
    case Field::kQuarter:
      timestamp_only();
      return number((f.month - 1) / 3 + 1, 0);
    case Field::kRomanMonth:
      timestamp_only();
      return PaddedName(WithCase(kRomanMonths[f.month - 1], keyword.letter_case), 4, fm);
    case Field::kSecondsOfDay:
      return number((f.hour * 60 + f.minute) * 60 + f.second, 0);
    case Field::kSecond:
      return number(f.second, 2);
    case Field::kTimeZone:
      calendar_only();
      return f.with_time_zone ? WithCase("UTC", keyword.letter_case) : "";
    case Field::kTimeZoneHours:
      calendar_only();
      return "+00";
    case Field::kTimeZoneMinutes:
      calendar_only();
      return "00";
    case Field::kMicrosecond:
      return number(f.micros, 6);
    case Field::kWeekOfYear:
      timestamp_only();
      return number((day_of_year - 1) / 7 + 1, 2);
    case Field::kWeekOfMonth:
      timestamp_only();
      return number((f.day - 1) / 7 + 1, 0);
    case Field::kYearComma: {
      std::string text = fmt::format("{},{:03d}", f.year / 1000, std::llabs(f.year % 1000));
      if (node.ordinal) text += OrdinalSuffix(f.year, node.ordinal_upper);
      return text;
    }
    case Field::kYear4:
      return number(f.year, 4);
    case Field::kYear3:
      return number(f.year % 1000, 3);
    case Field::kYear2:
      return number(f.year % 100, 2);
    case Field::kYear1:
      return number(f.year % 10, 1);
  }
  return "";
}

bool StartsWith(std::string_view text, size_t at, std::string_view prefix) {
  return text.compare(at, prefix.size(), prefix) == 0;
}

}  // namespace

DateTimeFormat::DateTimeFormat(std::string_view pattern) {
  auto literal = [&](char c) {
    if (nodes_.empty() || nodes_.back().field >= 0) nodes_.push_back(Node{});
    nodes_.back().text += c;
  };
  size_t i = 0;
  while (i < pattern.size()) {
    if (pattern[i] == '"') {
      // Quoted text, printed as is; a backslash escapes the next character.
      ++i;
      while (i < pattern.size() && pattern[i] != '"') {
        if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
        literal(pattern[i++]);
      }
      ++i;  // The closing quote.
      continue;
    }
    if (pattern[i] == '\\' && i + 1 < pattern.size() && pattern[i + 1] == '"') {
      literal('"');
      i += 2;
      continue;
    }
    Node node;
    size_t at = i;
    // Prefixes: FM (no padding); TM (translation mode: the C locale's names, unpadded).
    for (bool more = true; more;) {
      more = false;
      for (std::string_view prefix : {"FM", "fm", "TM", "tm"}) {
        if (StartsWith(pattern, at, prefix)) {
          if (prefix[0] == 'F' || prefix[0] == 'f') {
            node.fill_mode = true;
          } else {
            node.translation_mode = true;
          }
          at += 2;
          more = true;
        }
      }
    }
    int found = -1;
    for (size_t k = 0; k < std::size(kKeywords); ++k) {
      if (StartsWith(pattern, at, kKeywords[k].text)) {
        found = static_cast<int>(k);
        break;
      }
    }
    if (found < 0) {
      // A prefix without a field after it, or a plain character: printed as is.
      literal(pattern[i++]);
      continue;
    }
    node.field = found;
    at += kKeywords[found].text.size();
    if (StartsWith(pattern, at, "TH") || StartsWith(pattern, at, "th")) {
      node.ordinal = true;
      node.ordinal_upper = pattern[at] == 'T';
      at += 2;
    }
    nodes_.push_back(std::move(node));
    i = at;
  }
}

std::string DateTimeFormat::FormatTimestamp(int64_t micros, bool with_time_zone) const {
  Fields f;
  f.with_time_zone = with_time_zone;
  f.days = FloorDiv(micros, t::kMicrosPerDay);
  int64_t time_of_day = micros - f.days * t::kMicrosPerDay;
  t::CivilDate date = t::CivilFromDays(f.days);
  f.year = date.year;
  f.month = date.month;
  f.day = date.day;
  f.hour = time_of_day / t::kMicrosPerHour;
  f.minute = time_of_day / t::kMicrosPerMinute % 60;
  f.second = time_of_day / t::kMicrosPerSecond % 60;
  f.micros = time_of_day % t::kMicrosPerSecond;
  std::string out;
  for (const Node& node : nodes_) {
    out += node.field < 0 ? node.text : FormatField(kKeywords[node.field], node, f);
  }
  return out;
}

std::string DateTimeFormat::FormatInterval(const t::Interval& interval) const {
  Fields f;
  f.interval = true;
  f.year = interval.months / 12;
  f.month = interval.months % 12;
  f.day = interval.days;
  f.hour = interval.micros / t::kMicrosPerHour;
  f.minute = interval.micros / t::kMicrosPerMinute % 60;
  f.second = interval.micros / t::kMicrosPerSecond % 60;
  f.micros = interval.micros % t::kMicrosPerSecond;
  std::string out;
  for (const Node& node : nodes_) {
    out += node.field < 0 ? node.text : FormatField(kKeywords[node.field], node, f);
  }
  return out;
}

namespace {

struct NumberKeyword {
  std::string_view text;
  NumberFormat::Element::Kind kind;
  bool supported = true;
  bool fill_mode = false;
};

using ElementKind = NumberFormat::Element::Kind;

// Longest first. The unsupported ones are matched so that they are refused, not printed.
constexpr NumberKeyword kNumberKeywords[] = {
    {"EEEE", ElementKind::kLiteral, false},
    {"eeee", ElementKind::kLiteral, false},
    {"FM", ElementKind::kLiteral, true, true},
    {"fm", ElementKind::kLiteral, true, true},
    {"MI", ElementKind::kMinus},
    {"mi", ElementKind::kMinus},
    {"PL", ElementKind::kPlus},
    {"pl", ElementKind::kPlus},
    {"PR", ElementKind::kBracket},
    {"pr", ElementKind::kBracket},
    {"RN", ElementKind::kLiteral, false},
    {"rn", ElementKind::kLiteral, false},
    {"SG", ElementKind::kPlusMinus},
    {"sg", ElementKind::kPlusMinus},
    {"SP", ElementKind::kLiteral, false},
    {"sp", ElementKind::kLiteral, false},
    {"TH", ElementKind::kLiteral, false},
    {"th", ElementKind::kLiteral, false},
    {",", ElementKind::kGroupSeparator},
    {".", ElementKind::kDecimalPoint},
    {"0", ElementKind::kDigit0},
    {"9", ElementKind::kDigit9},
    {"B", ElementKind::kLiteral, false},
    {"b", ElementKind::kLiteral, false},
    {"C", ElementKind::kLiteral, false},
    {"c", ElementKind::kLiteral, false},
    {"D", ElementKind::kDecimalPoint},
    {"d", ElementKind::kDecimalPoint},
    {"G", ElementKind::kGroupSeparator},
    {"g", ElementKind::kGroupSeparator},
    {"L", ElementKind::kLiteral, false},
    {"l", ElementKind::kLiteral, false},
    {"S", ElementKind::kSign},
    {"s", ElementKind::kSign},
    {"V", ElementKind::kLiteral, false},
    {"v", ElementKind::kLiteral, false},
};

[[noreturn]] void ThrowTemplateError(const std::string& message) {
  throw SqlError(sqlstate::kSyntaxError, message);
}

}  // namespace

NumberFormat::NumberFormat(std::string_view pattern) {
  auto literal = [&](char c) {
    if (elements_.empty() || elements_.back().kind != ElementKind::kLiteral) {
      elements_.push_back(Element{});
    }
    elements_.back().text += c;
  };
  size_t sign_pre_digits = 0;  // 9s and 0s before S.
  size_t i = 0;
  while (i < pattern.size()) {
    if (pattern[i] == '"') {
      ++i;
      while (i < pattern.size() && pattern[i] != '"') {
        if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
        literal(pattern[i++]);
      }
      ++i;
      continue;
    }
    const NumberKeyword* keyword = nullptr;
    for (const NumberKeyword& candidate : kNumberKeywords) {
      if (StartsWith(pattern, i, candidate.text)) {
        keyword = &candidate;
        break;
      }
    }
    if (keyword == nullptr) {
      literal(pattern[i++]);
      continue;
    }
    i += keyword->text.size();
    if (!keyword->supported) {
      throw SqlError(
          sqlstate::kFeatureNotSupported,
          fmt::format("the number pattern \"{}\" of to_char is not supported", keyword->text));
    }
    if (keyword->fill_mode) {
      fill_mode_ = true;
      continue;
    }
    // PostgreSQL's checks of the template, with its messages.
    switch (keyword->kind) {
      case ElementKind::kDigit9:
      case ElementKind::kDigit0: {
        bool zero = keyword->kind == ElementKind::kDigit0;
        if (bracket_)
          ThrowTemplateError(fmt::format("\"{}\" must be ahead of \"PR\"", zero ? 0 : 9));
        if (zero && !has_zero_ && !decimal_) {
          has_zero_ = true;
          zero_start_ = pre_;
        }
        (decimal_ ? post_ : pre_)++;
        if (zero) zero_end_ = pre_ + post_;
        break;
      }
      case ElementKind::kDecimalPoint:
        if (decimal_) ThrowTemplateError("multiple decimal points");
        decimal_ = true;
        break;
      case ElementKind::kSign:
        if (sign_) ThrowTemplateError("cannot use \"S\" twice");
        if (plus_ || minus_ || bracket_) {
          ThrowTemplateError("cannot use \"S\" and \"PL\"/\"MI\"/\"SG\"/\"PR\" together");
        }
        sign_ = true;
        sign_after_ = decimal_;
        sign_pre_digits = pre_;
        break;
      case ElementKind::kMinus:
      case ElementKind::kPlus:
      case ElementKind::kPlusMinus:
        if (sign_) {
          ThrowTemplateError(fmt::format("cannot use \"S\" and \"{}\" together", keyword->text));
        }
        if (keyword->kind != ElementKind::kPlus) minus_ = true;
        if (keyword->kind != ElementKind::kMinus) plus_ = true;
        break;
      case ElementKind::kBracket:
        if (sign_ || plus_ || minus_) {
          ThrowTemplateError("cannot use \"PR\" and \"S\"/\"PL\"/\"MI\"/\"SG\" together");
        }
        bracket_ = true;
        break;
      default:
        break;
    }
    elements_.push_back(Element{keyword->kind, ""});
  }
  // S right after the integer digits (and no decimal point) follows the number.
  if (sign_ && !sign_after_ && static_cast<size_t>(pre_) == sign_pre_digits) sign_after_ = true;
}

// PostgreSQL's NUM_processor for to_char, element by element: the digits of `number` fill
// the 9s and 0s from the left, after blanks (9) or zeros (0) where the template has more
// integer positions than the number; the sign goes right before the first digit written.
std::string NumberFormat::Format(std::string_view number) const {
  char sign = '+';
  if (!number.empty() && number[0] == '-') {
    sign = '-';
    number.remove_prefix(1);
  }
  std::string digits(number);
  size_t point = digits.find('.');
  int integer_length = static_cast<int>(point == std::string::npos ? digits.size() : point);
  int pre_spaces = 0;
  if (integer_length < pre_) {
    pre_spaces = pre_ - integer_length;
  } else if (integer_length > pre_) {
    digits.assign(pre_ + post_ + 1, '#');  // Does not fit: #s, with the point where it goes.
    digits[pre_] = '.';
  }
  bool bracket = bracket_ && !(sign != '-' && fill_mode_);
  bool sign_written;
  if (plus_ || minus_) {
    sign_written = !(plus_ && !minus_);  // PL alone still wants the sign in the number.
  } else {
    sign_written = sign == '+' && fill_mode_ && !sign_;
  }
  // Under FM, fraction digits after the last one that is not zero are left out, except
  // those the template writes as 0.
  int last_relevant = -1;
  if (fill_mode_ && decimal_ && point != std::string::npos && digits[0] != '#') {
    last_relevant = static_cast<int>(point);
    for (size_t k = point + 1; k < digits.size(); ++k) {
      if (digits[k] != '0') last_relevant = static_cast<int>(k);
    }
    if (zero_end_ > pre_spaces) {
      int last_zero = std::min<int>(zero_end_ - pre_spaces, static_cast<int>(digits.size()) - 1);
      last_relevant = std::max(last_relevant, last_zero);
    }
  }
  bool point_relevant = last_relevant >= 0 && digits[last_relevant] == '.';
  int number_elements = pre_ + post_ + (decimal_ ? 1 : 0);
  size_t at = 0;    // Next character of `digits`.
  int current = 0;  // Number elements (9, 0, point) done.
  bool digit_written = false;
  std::string out;
  auto number_element = [&](ElementKind kind) {
    // "0.5" under 9.9 is " .5": the integer zero is no digit to write.
    bool zero_before_point =
        !has_zero_ && at == 0 && !digits.empty() && digits[0] == '0' && post_ != 0;
    if (!sign_written && (current >= pre_spaces || (has_zero_ && zero_start_ == current)) &&
        (!zero_before_point || point_relevant)) {
      if (sign_) {
        if (!sign_after_) {
          out += sign == '-' ? '-' : '+';
          sign_written = true;
        }
      } else if (bracket) {
        out += sign == '+' ? ' ' : '<';
        sign_written = true;
      } else {
        if (sign == '-' || !fill_mode_) out += sign == '-' ? '-' : ' ';
        sign_written = true;
      }
    }
    bool end_reached = false;
    if (current < pre_spaces && (zero_start_ > current || !has_zero_)) {
      if (!fill_mode_) out += ' ';
    } else if (has_zero_ && current < pre_spaces && zero_start_ <= current) {
      out += '0';
      digit_written = true;
    } else {
      char c = at < digits.size() ? digits[at] : '\0';
      if (c == '.') {
        out += '.';
      } else if (last_relevant >= 0 && static_cast<int>(at) > last_relevant &&
                 kind != ElementKind::kDigit0) {
        // A trailing zero FM leaves out.
      } else if (zero_before_point) {
        if (!fill_mode_) {
          out += ' ';
        } else if (point_relevant) {
          out += '0';  // Zero under FM9.9 is "0.".
        }
      } else if (c == '\0') {
        end_reached = true;  // More positions than digits: PostgreSQL's text ends here.
      } else {
        out += c;
        digit_written = true;
      }
      if (at < digits.size()) ++at;
    }
    if (current + 1 == number_elements) {
      if (sign_written && bracket) {
        out += sign == '+' ? ' ' : '>';
      } else if (sign_ && sign_after_) {
        out += sign == '-' ? '-' : '+';
      }
    }
    ++current;
    return !end_reached;
  };
  for (const Element& element : elements_) {
    switch (element.kind) {
      case ElementKind::kDigit9:
      case ElementKind::kDigit0:
      case ElementKind::kDecimalPoint:
        if (!number_element(element.kind)) return out;
        break;
      case ElementKind::kGroupSeparator:
        if (digit_written) {
          out += ',';
        } else if (!fill_mode_) {
          out += ' ';
        }
        break;
      case ElementKind::kMinus:
        if (sign == '-') {
          out += '-';
        } else if (!fill_mode_) {
          out += ' ';
        }
        break;
      case ElementKind::kPlus:
        if (sign == '+') {
          out += '+';
        } else if (!fill_mode_) {
          out += ' ';
        }
        break;
      case ElementKind::kPlusMinus:
        out += sign;
        break;
      case ElementKind::kLiteral:
        out += element.text;
        break;
      case ElementKind::kSign:
      case ElementKind::kBracket:
        break;
    }
  }
  return out;
}

std::string FormatInteger(const NumberFormat& format, int64_t value) {
  std::string number = std::to_string(value);
  if (format.post_digits() > 0) number += "." + std::string(format.post_digits(), '0');
  return format.Format(number);
}

std::string FormatNumeric(const NumberFormat& format, const Decimal& value) {
  if (!value.is_finite()) {
    // PostgreSQL prints NaN and the infinities as #s, or NaN in the number's place.
    return format.Format(decimal::Format(value));
  }
  return format.Format(decimal::Format(decimal::Round(value, format.post_digits())));
}

std::string FormatFloat(const NumberFormat& format, double value, int float_digits) {
  if (std::isnan(value) || std::isinf(value))
    return format.Format(std::isnan(value)     ? "NaN"
                         : std::signbit(value) ? "-Infinity"
                                               : "Infinity");
  // As PostgreSQL: no more digits than the type holds (15 for double precision, 6 for real).
  int integer_digits = static_cast<int>(fmt::format("{:.0f}", std::fabs(value)).size());
  int post = format.post_digits();
  if (integer_digits >= float_digits) {
    post = 0;
  } else if (integer_digits + post > float_digits) {
    post = float_digits - integer_digits;
  }
  return format.Format(fmt::format("{:.{}f}", value, post));
}

}  // namespace stave::to_char
