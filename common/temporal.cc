#include "common/temporal.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include "common/sql_error.h"

namespace stave::temporal {
namespace {

// GCC's 128-bit integer: an interval's span in microseconds needs more than 64 bits.
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

constexpr std::string_view kInvalidDatetimeFormat = "22007";
constexpr std::string_view kDatetimeFieldOverflow = "22008";
constexpr std::string_view kIntervalFieldOverflow = "22015";

constexpr int64_t kMaxTimestampYear = 294276;
constexpr int64_t kMaxDateYear = 5874897;
const int64_t kMinDate = DaysFromCivil(1, 1, 1);
const int64_t kMaxDate = DaysFromCivil(kMaxDateYear, 12, 31);
const int64_t kMinTimestamp = DaysFromCivil(1, 1, 1) * kMicrosPerDay;
const int64_t kMaxTimestamp = DaysFromCivil(kMaxTimestampYear + 1, 1, 1) * kMicrosPerDay - 1;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

[[noreturn]] void ThrowTimestampOutOfRange() {
  throw SqlError(kDatetimeFieldOverflow, "timestamp out of range");
}

[[noreturn]] void ThrowIntervalOutOfRange() {
  throw SqlError(kDatetimeFieldOverflow, "interval out of range");
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// ---------------------------------------------------------------------------------------
// Units of intervals, date_trunc and extract, by every name PostgreSQL accepts.

enum class Unit {
  kMicrosecond,
  kMillisecond,
  kSecond,
  kMinute,
  kHour,
  kDay,
  kWeek,
  kMonth,
  kQuarter,
  kYear,
  kDecade,
  kCentury,
  kMillennium,
  kEpoch,
  kDow,
  kIsoDow,
  kDoy,
  kIsoYear,
  kTimezone,
  kTimezoneHour,
  kTimezoneMinute,
  kJulian,
};

std::optional<Unit> LookupUnit(std::string_view lower) {
  static constexpr std::array<std::pair<std::string_view, Unit>, 66> kUnits = {{
      {"microsecond", Unit::kMicrosecond},
      {"microseconds", Unit::kMicrosecond},
      {"us", Unit::kMicrosecond},
      {"usec", Unit::kMicrosecond},
      {"usecs", Unit::kMicrosecond},
      {"useconds", Unit::kMicrosecond},
      {"millisecond", Unit::kMillisecond},
      {"milliseconds", Unit::kMillisecond},
      {"ms", Unit::kMillisecond},
      {"msec", Unit::kMillisecond},
      {"msecs", Unit::kMillisecond},
      {"mseconds", Unit::kMillisecond},
      {"second", Unit::kSecond},
      {"seconds", Unit::kSecond},
      {"s", Unit::kSecond},
      {"sec", Unit::kSecond},
      {"secs", Unit::kSecond},
      {"minute", Unit::kMinute},
      {"minutes", Unit::kMinute},
      {"m", Unit::kMinute},
      {"min", Unit::kMinute},
      {"mins", Unit::kMinute},
      {"hour", Unit::kHour},
      {"hours", Unit::kHour},
      {"h", Unit::kHour},
      {"hr", Unit::kHour},
      {"hrs", Unit::kHour},
      {"day", Unit::kDay},
      {"days", Unit::kDay},
      {"d", Unit::kDay},
      {"week", Unit::kWeek},
      {"weeks", Unit::kWeek},
      {"w", Unit::kWeek},
      {"month", Unit::kMonth},
      {"months", Unit::kMonth},
      {"mon", Unit::kMonth},
      {"mons", Unit::kMonth},
      {"quarter", Unit::kQuarter},
      {"qtr", Unit::kQuarter},
      {"year", Unit::kYear},
      {"years", Unit::kYear},
      {"y", Unit::kYear},
      {"yr", Unit::kYear},
      {"yrs", Unit::kYear},
      {"decade", Unit::kDecade},
      {"decades", Unit::kDecade},
      {"dec", Unit::kDecade},
      {"decs", Unit::kDecade},
      {"century", Unit::kCentury},
      {"centuries", Unit::kCentury},
      {"c", Unit::kCentury},
      {"cent", Unit::kCentury},
      {"millennium", Unit::kMillennium},
      {"millennia", Unit::kMillennium},
      {"millenniums", Unit::kMillennium},
      {"mil", Unit::kMillennium},
      {"mils", Unit::kMillennium},
      {"epoch", Unit::kEpoch},
      {"dow", Unit::kDow},
      {"isodow", Unit::kIsoDow},
      {"doy", Unit::kDoy},
      {"isoyear", Unit::kIsoYear},
      {"timezone", Unit::kTimezone},
      {"timezone_h", Unit::kTimezoneHour},
      {"timezone_m", Unit::kTimezoneMinute},
      {"julian", Unit::kJulian},
  }};
  for (const auto& [name, unit] : kUnits) {
    if (name == lower) return unit;
  }
  return std::nullopt;
}

// Units an interval's text may use after a number.
bool IsIntervalInputUnit(Unit unit) { return unit <= Unit::kMillennium && unit != Unit::kQuarter; }

[[noreturn]] void ThrowUnitNotRecognized(std::string_view unit, std::string_view type_name) {
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("unit \"{}\" not recognized for type {}", unit, type_name));
}

[[noreturn]] void ThrowUnitNotSupported(std::string_view unit, std::string_view type_name) {
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("unit \"{}\" not supported for type {}", unit, type_name));
}

Unit ResolveUnit(std::string_view unit, std::string_view type_name) {
  std::string lower = Lower(Trim(unit));
  std::optional<Unit> resolved = LookupUnit(lower);
  if (!resolved) ThrowUnitNotRecognized(lower, type_name);
  return *resolved;
}

// ---------------------------------------------------------------------------------------
// Date and time input.

// What an ISO 8601 date/time text holds.
struct DateTimeFields {
  bool has_date = false;
  int64_t year = 0;
  int month = 0;
  int day = 0;
  bool has_time = false;
  int64_t time = 0;  // Microseconds since midnight, up to 24:00:00 (or 24:00:60).
  bool has_zone = false;
  int64_t zone_seconds = 0;  // East of UTC.
};

class DateTimeParser {
 public:
  DateTimeParser(std::string_view original, std::string_view type_name)
      : original_(original), type_name_(type_name), text_(Trim(original)) {}

  [[noreturn]] void ThrowSyntax() const {
    throw SqlError(kInvalidDatetimeFormat,
                   fmt::format("invalid input syntax for type {}: \"{}\"", type_name_, original_));
  }
  [[noreturn]] void ThrowFieldOverflow() const {
    throw SqlError(kDatetimeFieldOverflow,
                   fmt::format("date/time field value out of range: \"{}\"", original_));
  }

  DateTimeFields Parse() {
    DateTimeFields fields;
    if (LooksLikeDate()) {
      ParseDate(&fields);
      if (AtEnd()) return fields;
      if (Peek() == 'T' || Peek() == 't') {
        ++pos_;
      } else {
        SkipSpaces();
      }
    }
    if (!AtEnd() && IsDigit(Peek())) ParseTime(&fields);
    SkipSpaces();
    if (!AtEnd() && fields.has_time) ParseZone(&fields);
    SkipSpaces();
    if (!AtEnd() && IsAlpha(Peek())) {
      std::string word = Lower(Word());
      if (word == "bc") {
        throw SqlError(
            kDatetimeFieldOverflow,
            fmt::format("dates before year 1 (BC) are not supported: \"{}\"", original_));
      }
      if (word != "ad") ThrowSyntax();
      SkipSpaces();
    }
    if (!AtEnd() || (!fields.has_date && !fields.has_time)) ThrowSyntax();
    return fields;
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  void SkipSpaces() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(Peek()))) ++pos_;
  }
  std::string_view Word() {
    size_t start = pos_;
    while (!AtEnd() && (IsAlpha(Peek()) || Peek() == '_' || Peek() == '/')) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // Digits at the cursor; their count in *count. Throws 22008 for absurdly long runs.
  int64_t Digits(int* count) {
    size_t start = pos_;
    int64_t value = 0;
    while (!AtEnd() && IsDigit(Peek())) {
      if (pos_ - start >= 10) ThrowFieldOverflow();
      value = value * 10 + (Peek() - '0');
      ++pos_;
    }
    *count = static_cast<int>(pos_ - start);
    return value;
  }
  bool LooksLikeDate() const {
    size_t i = pos_;
    while (i < text_.size() && IsDigit(text_[i])) ++i;
    size_t digits = i - pos_;
    if (digits == 8 && (i == text_.size() || !IsDigit(text_[i])) &&
        (i == text_.size() || text_[i] != ':'))
      return true;
    return digits >= 1 && i < text_.size() && text_[i] == '-';
  }
  void ParseDate(DateTimeFields* fields) {
    int count = 0;
    int64_t first = Digits(&count);
    if (count == 8 && (AtEnd() || Peek() != '-')) {  // YYYYMMDD
      fields->year = first / 10000;
      fields->month = static_cast<int>(first / 100 % 100);
      fields->day = static_cast<int>(first % 100);
    } else {
      // Years of fewer than four digits are ambiguous in PostgreSQL's rules; only the ISO
      // form with a full year is accepted.
      if (count < 4 || AtEnd() || Peek() != '-') ThrowSyntax();
      ++pos_;
      int64_t month = Digits(&count);
      if (count < 1 || count > 2 || AtEnd() || Peek() != '-') ThrowSyntax();
      ++pos_;
      int64_t day = Digits(&count);
      if (count < 1 || count > 2) ThrowSyntax();
      fields->year = first;
      fields->month = static_cast<int>(month);
      fields->day = static_cast<int>(day);
    }
    if (fields->year < 1) {
      throw SqlError(kDatetimeFieldOverflow,
                     fmt::format("dates before year 1 (BC) are not supported: \"{}\"", original_));
    }
    if (fields->month < 1 || fields->month > 12 || fields->day < 1 ||
        fields->day > DaysInMonth(fields->year, fields->month)) {
      ThrowFieldOverflow();
    }
    fields->has_date = true;
  }
  void ParseTime(DateTimeFields* fields) {
    int count = 0;
    int64_t hour = Digits(&count);
    if (count < 1 || count > 2 || AtEnd() || Peek() != ':') ThrowSyntax();
    ++pos_;
    int64_t minute = Digits(&count);
    if (count != 2) ThrowSyntax();
    int64_t second = 0, fraction = 0;
    if (!AtEnd() && Peek() == ':') {
      ++pos_;
      second = Digits(&count);
      if (count != 2) ThrowSyntax();
      if (!AtEnd() && Peek() == '.') {
        ++pos_;
        fraction = FractionMicros();
      }
    }
    if (hour > 24 || minute > 59 || second > 60 ||
        (hour == 24 && (minute > 0 || second > 0 || fraction > 0))) {
      ThrowFieldOverflow();
    }
    fields->time =
        hour * kMicrosPerHour + minute * kMicrosPerMinute + second * kMicrosPerSecond + fraction;
    fields->has_time = true;
  }
  // The digits after a decimal point as microseconds, rounded half away from zero.
  int64_t FractionMicros() {
    int64_t micros = 0;
    int digits = 0;
    bool round_up = false;
    size_t start = pos_;
    while (!AtEnd() && IsDigit(Peek())) {
      if (digits < 6) {
        micros = micros * 10 + (Peek() - '0');
      } else if (digits == 6) {
        round_up = Peek() >= '5';
      }
      ++digits;
      ++pos_;
    }
    if (pos_ == start) ThrowSyntax();
    for (int i = digits; i < 6; ++i) micros *= 10;
    return micros + (round_up ? 1 : 0);
  }
  void ParseZone(DateTimeFields* fields) {
    char c = Peek();
    if (c == '+' || c == '-') {
      ++pos_;
      int count = 0;
      int64_t hours = Digits(&count), minutes = 0, seconds = 0;
      if (count == 4) {  // +HHMM
        minutes = hours % 100;
        hours /= 100;
      } else if (count < 1 || count > 2) {
        ThrowSyntax();
      } else if (!AtEnd() && Peek() == ':') {
        ++pos_;
        minutes = Digits(&count);
        if (count != 2) ThrowSyntax();
        if (!AtEnd() && Peek() == ':') {
          ++pos_;
          seconds = Digits(&count);
          if (count != 2) ThrowSyntax();
        }
      }
      if (hours > 15 || minutes > 59 || seconds > 59) {
        throw SqlError(kDatetimeFieldOverflow,
                       fmt::format("time zone displacement out of range: \"{}\"", original_));
      }
      int64_t offset = hours * 3600 + minutes * 60 + seconds;
      fields->zone_seconds = c == '-' ? -offset : offset;
      fields->has_zone = true;
      return;
    }
    if (!IsAlpha(c)) ThrowSyntax();
    size_t start = pos_;
    std::string word = Lower(Word());
    if (word == "z" || word == "utc" || word == "gmt" || word == "zulu" || word == "etc/utc") {
      fields->has_zone = true;
      return;
    }
    if (word == "ad" || word == "bc") {  // An era, not a zone: Parse() handles it.
      pos_ = start;
      return;
    }
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("time zone \"{}\" is not supported: Stave knows UTC and numeric "
                               "offsets such as +02:00",
                               text_.substr(start, pos_ - start)));
  }

  std::string_view original_;
  std::string_view type_name_;
  std::string_view text_;
  size_t pos_ = 0;
};

// The special words PostgreSQL's date and timestamp input take. Returns the value as a
// timestamp (midnight for the day words), or nullopt if `text` is not one of them.
std::optional<int64_t> SpecialWord(std::string_view text) {
  std::string word = Lower(Trim(text));
  if (word == "infinity" || word == "+infinity" || word == "-infinity") {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "infinite dates and timestamps are not supported");
  }
  if (word == "epoch") return kUnixEpochDays * kMicrosPerDay;
  if (word == "now") return CurrentTimestamp();
  int64_t today = FloorDiv(CurrentTimestamp(), kMicrosPerDay) * kMicrosPerDay;
  if (word == "today") return today;
  if (word == "tomorrow") return today + kMicrosPerDay;
  if (word == "yesterday") return today - kMicrosPerDay;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Output.

void AppendFraction(int64_t micros, std::string* out) {
  if (micros == 0) return;
  std::string digits = fmt::format("{:06d}", micros);
  while (digits.back() == '0') digits.pop_back();
  out->push_back('.');
  out->append(digits);
}

void AppendTimeOfDay(int64_t micros, std::string* out) {
  int64_t seconds = micros / kMicrosPerSecond;
  out->append(fmt::format("{:02d}:{:02d}:{:02d}", seconds / 3600, seconds / 60 % 60, seconds % 60));
  AppendFraction(micros % kMicrosPerSecond, out);
}

// ---------------------------------------------------------------------------------------
// Encoding.

void AppendBigEndian(uint64_t value, int bytes, std::string* out) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

uint64_t ReadBigEndian(std::string_view bytes, size_t offset, int count) {
  uint64_t value = 0;
  for (int i = 0; i < count; ++i) {
    value = (value << 8) | static_cast<uint8_t>(bytes[offset + static_cast<size_t>(i)]);
  }
  return value;
}

Int128 Span(const Interval& interval) {
  return (static_cast<Int128>(interval.months) * kDaysPerMonth + interval.days) * kMicrosPerDay +
         interval.micros;
}

int32_t CheckedInt32(Int128 value) {
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max())
    ThrowIntervalOutOfRange();
  return static_cast<int32_t>(value);
}

int64_t CheckedInt64(Int128 value) {
  if (value < std::numeric_limits<int64_t>::min() || value > std::numeric_limits<int64_t>::max())
    ThrowIntervalOutOfRange();
  return static_cast<int64_t>(value);
}

// A double that must fit int64 (the rint'ed fields of interval arithmetic).
bool FitsInt64(double value) {
  return !std::isnan(value) && value >= -9223372036854775808.0 && value < 9223372036854775808.0;
}

int64_t SplitTimestamp(int64_t micros, int64_t* time) {
  int64_t days = FloorDiv(micros, kMicrosPerDay);
  *time = micros - days * kMicrosPerDay;
  return days;
}

// Monday = 1 ... Sunday = 7. 2000-01-01 (day 0) was a Saturday.
int IsoDayOfWeek(int64_t days) { return static_cast<int>(FloorMod(days + 5, 7)) + 1; }

// The ISO 8601 week-numbering year and week of a date.
void IsoWeek(int64_t days, int64_t* iso_year, int* week) {
  int64_t thursday = days - (IsoDayOfWeek(days) - 1) + 3;
  *iso_year = CivilFromDays(thursday).year;
  *week = static_cast<int>((thursday - DaysFromCivil(*iso_year, 1, 1)) / 7 + 1);
}

// The fields of a date that date and timestamp share; nullopt for others.
std::optional<double> DateField(Unit unit, int64_t days) {
  CivilDate date = CivilFromDays(days);
  switch (unit) {
    case Unit::kDay:
      return date.day;
    case Unit::kMonth:
      return date.month;
    case Unit::kYear:
      return static_cast<double>(date.year);
    case Unit::kQuarter:
      return (date.month - 1) / 3 + 1;
    case Unit::kWeek: {
      int64_t iso_year = 0;
      int week = 0;
      IsoWeek(days, &iso_year, &week);
      return week;
    }
    case Unit::kIsoYear: {
      int64_t iso_year = 0;
      int week = 0;
      IsoWeek(days, &iso_year, &week);
      return static_cast<double>(iso_year);
    }
    case Unit::kDow:
      return IsoDayOfWeek(days) % 7;
    case Unit::kIsoDow:
      return IsoDayOfWeek(days);
    case Unit::kDoy:
      return static_cast<double>(days - DaysFromCivil(date.year, 1, 1) + 1);
    case Unit::kDecade:
      return static_cast<double>(date.year / 10);
    case Unit::kCentury:
      return static_cast<double>((date.year + 99) / 100);
    case Unit::kMillennium:
      return static_cast<double>((date.year + 999) / 1000);
    default:
      return std::nullopt;
  }
}

// The fields of a time of day; nullopt for others.
std::optional<double> TimeField(Unit unit, int64_t time) {
  int64_t second_micros = time % kMicrosPerMinute;  // Seconds and fraction within the minute.
  switch (unit) {
    case Unit::kMicrosecond:
      return static_cast<double>(second_micros);
    case Unit::kMillisecond:
      return static_cast<double>(second_micros) / 1000.0;
    case Unit::kSecond:
      return static_cast<double>(second_micros) / 1e6;
    case Unit::kMinute:
      return static_cast<double>(time / kMicrosPerMinute % 60);
    case Unit::kHour:
      return static_cast<double>(time / kMicrosPerHour);
    default:
      return std::nullopt;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Calendar.

bool IsLeapYear(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

// Howard Hinnant's days_from_civil, shifted from 1970-01-01 to 2000-01-01.
int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2;
  int64_t era = FloorDiv(year, 400);
  int64_t yoe = year - era * 400;
  int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468 + kUnixEpochDays;
}

CivilDate CivilFromDays(int64_t days) {
  int64_t z = days - kUnixEpochDays + 719468;
  int64_t era = FloorDiv(z, 146097);
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (month <= 2), month, day};
}

// ---------------------------------------------------------------------------------------
// Interval encoding.

std::string EncodeInterval(const Interval& interval) {
  std::string out;
  out.reserve(32);
  auto span = static_cast<UInt128>(Span(interval)) ^ (static_cast<UInt128>(1) << 127);
  AppendBigEndian(static_cast<uint64_t>(span >> 64), 8, &out);
  AppendBigEndian(static_cast<uint64_t>(span), 8, &out);
  AppendBigEndian(static_cast<uint32_t>(interval.months) ^ 0x80000000u, 4, &out);
  AppendBigEndian(static_cast<uint32_t>(interval.days) ^ 0x80000000u, 4, &out);
  AppendBigEndian(static_cast<uint64_t>(interval.micros) ^ (uint64_t{1} << 63), 8, &out);
  return out;
}

Interval DecodeInterval(std::string_view bytes) {
  Interval interval;
  if (bytes.size() != 32) return interval;
  interval.months =
      static_cast<int32_t>(static_cast<uint32_t>(ReadBigEndian(bytes, 16, 4)) ^ 0x80000000u);
  interval.days =
      static_cast<int32_t>(static_cast<uint32_t>(ReadBigEndian(bytes, 20, 4)) ^ 0x80000000u);
  interval.micros = static_cast<int64_t>(ReadBigEndian(bytes, 24, 8) ^ (uint64_t{1} << 63));
  return interval;
}

// ---------------------------------------------------------------------------------------
// Input.

int64_t ParseDate(std::string_view text) {
  if (std::optional<int64_t> special = SpecialWord(text)) {
    return FloorDiv(*special, kMicrosPerDay);
  }
  DateTimeParser parser(text, "date");
  DateTimeFields fields = parser.Parse();
  if (!fields.has_date) parser.ThrowSyntax();
  if (fields.year > kMaxDateYear) {
    throw SqlError(kDatetimeFieldOverflow, fmt::format("date out of range: \"{}\"", text));
  }
  return DaysFromCivil(fields.year, fields.month, fields.day);
}

int64_t ParseTime(std::string_view text) {
  std::string word = Lower(Trim(text));
  if (word == "allballs") return 0;
  if (word == "now") return TimestampToTime(CurrentTimestamp());
  DateTimeParser parser(text, "time without time zone");
  DateTimeFields fields = parser.Parse();
  if (!fields.has_time) parser.ThrowSyntax();
  return fields.time;
}

int64_t ParseTimestamp(std::string_view text, bool with_time_zone) {
  std::string_view type_name =
      with_time_zone ? "timestamp with time zone" : "timestamp without time zone";
  if (std::optional<int64_t> special = SpecialWord(text)) return *special;
  DateTimeParser parser(text, type_name);
  DateTimeFields fields = parser.Parse();
  if (!fields.has_date) parser.ThrowSyntax();
  if (fields.year > kMaxTimestampYear + 1) {
    throw SqlError(kDatetimeFieldOverflow, fmt::format("timestamp out of range: \"{}\"", text));
  }
  int64_t micros =
      DaysFromCivil(fields.year, fields.month, fields.day) * kMicrosPerDay + fields.time;
  // A timestamp without time zone ignores a written zone, as PostgreSQL does.
  if (with_time_zone && fields.has_zone) micros -= fields.zone_seconds * kMicrosPerSecond;
  if (micros < kMinTimestamp || micros > kMaxTimestamp) {
    throw SqlError(kDatetimeFieldOverflow, fmt::format("timestamp out of range: \"{}\"", text));
  }
  return micros;
}

Interval ParseInterval(std::string_view original, IntervalField field) {
  auto throw_syntax = [&]() {
    throw SqlError(kInvalidDatetimeFormat,
                   fmt::format("invalid input syntax for type interval: \"{}\"", original));
  };
  auto throw_overflow = [&]() {
    throw SqlError(kIntervalFieldOverflow,
                   fmt::format("interval field value out of range: \"{}\"", original));
  };
  std::string text = Lower(Trim(original));
  Int128 months = 0, days = 0, micros = 0;
  bool any = false, ago = false;
  size_t pos = 0;
  auto skip_spaces = [&] {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  };
  auto digits = [&](int64_t* value) {
    size_t start = pos;
    *value = 0;
    while (pos < text.size() && IsDigit(text[pos])) {
      if (pos - start >= 18) throw_overflow();
      *value = *value * 10 + (text[pos] - '0');
      ++pos;
    }
    return pos - start;
  };
  while (true) {
    skip_spaces();
    if (pos >= text.size()) break;
    char c = text[pos];
    if (c == '@') {
      ++pos;
      continue;
    }
    if (IsAlpha(c)) {
      size_t start = pos;
      while (pos < text.size() && IsAlpha(text[pos])) ++pos;
      if (text.substr(start, pos - start) != "ago" || ago) throw_syntax();
      ago = true;
      continue;
    }
    if (ago) throw_syntax();  // "ago" comes last.
    bool negative = false;
    if (c == '+' || c == '-') {
      negative = c == '-';
      ++pos;
    }
    int64_t whole = 0;
    size_t whole_digits = digits(&whole);
    if (pos < text.size() && text[pos] == ':') {
      // [-]H:MM[:SS[.ffffff]]: hours, minutes and seconds of the time part.
      if (whole_digits == 0) throw_syntax();
      ++pos;
      int64_t minutes = 0, seconds = 0;
      if (digits(&minutes) != 2) throw_syntax();
      double fraction = 0;
      if (pos < text.size() && text[pos] == ':') {
        ++pos;
        if (digits(&seconds) != 2) throw_syntax();
        if (pos < text.size() && text[pos] == '.') {
          size_t start = pos;
          ++pos;
          while (pos < text.size() && IsDigit(text[pos])) ++pos;
          fraction = std::strtod(text.substr(start, pos - start).c_str(), nullptr);
        }
      }
      if (minutes > 59 || seconds > 59) throw_overflow();
      Int128 value = static_cast<Int128>(whole) * kMicrosPerHour + minutes * kMicrosPerMinute +
                     seconds * kMicrosPerSecond +
                     static_cast<int64_t>(std::rint(fraction * kMicrosPerSecond));
      micros += negative ? -value : value;
      any = true;
      continue;
    }
    double fraction = 0;
    if (pos < text.size() && text[pos] == '.') {
      size_t start = pos;
      ++pos;
      while (pos < text.size() && IsDigit(text[pos])) ++pos;
      if (whole_digits == 0 && pos == start + 1) throw_syntax();
      fraction = std::strtod(text.substr(start, pos - start).c_str(), nullptr);
    } else if (whole_digits == 0) {
      throw_syntax();
    }
    if (negative) {
      whole = -whole;
      fraction = -fraction;
    }
    skip_spaces();
    size_t unit_start = pos;
    while (pos < text.size() && IsAlpha(text[pos])) ++pos;
    std::string_view unit_name = std::string_view(text).substr(unit_start, pos - unit_start);
    Unit unit = Unit::kSecond;
    if (unit_name.empty() || unit_name == "ago") {
      pos = unit_start;
      switch (field) {
        case IntervalField::kYear:
          unit = Unit::kYear;
          break;
        case IntervalField::kMonth:
          unit = Unit::kMonth;
          break;
        case IntervalField::kDay:
          unit = Unit::kDay;
          break;
        case IntervalField::kHour:
          unit = Unit::kHour;
          break;
        case IntervalField::kMinute:
          unit = Unit::kMinute;
          break;
        default:
          unit = Unit::kSecond;
          break;
      }
    } else {
      std::optional<Unit> found = LookupUnit(unit_name);
      if (!found || !IsIntervalInputUnit(*found)) throw_syntax();
      unit = *found;
    }
    // Whole units add exactly; a fraction spills into the next smaller field, as PostgreSQL's
    // DecodeInterval does (1.5 months is 1 month 15 days, 1.5 days is 1 day 12 hours).
    auto spill_days = [&](double fractional_days) {
      double whole_days = std::trunc(fractional_days);
      days += static_cast<int64_t>(whole_days);
      micros += static_cast<int64_t>(std::rint((fractional_days - whole_days) * kMicrosPerDay));
    };
    auto add_micros = [&](int64_t per_unit) {
      micros += static_cast<Int128>(whole) * per_unit;
      micros += static_cast<int64_t>(std::rint(fraction * static_cast<double>(per_unit)));
    };
    switch (unit) {
      case Unit::kMicrosecond:
        add_micros(1);
        break;
      case Unit::kMillisecond:
        add_micros(kMicrosPerMillisecond);
        break;
      case Unit::kSecond:
        add_micros(kMicrosPerSecond);
        break;
      case Unit::kMinute:
        add_micros(kMicrosPerMinute);
        break;
      case Unit::kHour:
        add_micros(kMicrosPerHour);
        break;
      case Unit::kDay:
        days += whole;
        micros += static_cast<int64_t>(std::rint(fraction * kMicrosPerDay));
        break;
      case Unit::kWeek:
        days += static_cast<Int128>(whole) * 7;
        spill_days(fraction * 7);
        break;
      case Unit::kMonth:
        months += whole;
        spill_days(fraction * kDaysPerMonth);
        break;
      default: {
        int64_t per_year = unit == Unit::kYear      ? 12
                           : unit == Unit::kDecade  ? 120
                           : unit == Unit::kCentury ? 1200
                                                    : 12000;
        months += static_cast<Int128>(whole) * per_year;
        months += static_cast<int64_t>(std::rint(fraction * static_cast<double>(per_year)));
        break;
      }
    }
    if (months > std::numeric_limits<int32_t>::max() ||
        months < std::numeric_limits<int32_t>::min() ||
        days > std::numeric_limits<int32_t>::max() || days < std::numeric_limits<int32_t>::min() ||
        micros > std::numeric_limits<int64_t>::max() ||
        micros < std::numeric_limits<int64_t>::min()) {
      throw_overflow();
    }
    any = true;
  }
  if (!any) throw_syntax();
  if (ago) {
    months = -months;
    days = -days;
    micros = -micros;
  }
  Interval result;
  if (months > std::numeric_limits<int32_t>::max() ||
      months < std::numeric_limits<int32_t>::min() || days > std::numeric_limits<int32_t>::max() ||
      days < std::numeric_limits<int32_t>::min() || micros > std::numeric_limits<int64_t>::max() ||
      micros < std::numeric_limits<int64_t>::min()) {
    throw_overflow();
  }
  result.months = static_cast<int32_t>(months);
  result.days = static_cast<int32_t>(days);
  result.micros = static_cast<int64_t>(micros);
  // The qualifier keeps its field and the more significant ones, as PostgreSQL's typmod.
  switch (field) {
    case IntervalField::kYear:
      result.months = result.months / 12 * 12;
      result.days = 0;
      result.micros = 0;
      break;
    case IntervalField::kMonth:
      result.days = 0;
      result.micros = 0;
      break;
    case IntervalField::kDay:
      result.micros = 0;
      break;
    case IntervalField::kHour:
      result.micros = result.micros / kMicrosPerHour * kMicrosPerHour;
      break;
    case IntervalField::kMinute:
      result.micros = result.micros / kMicrosPerMinute * kMicrosPerMinute;
      break;
    default:
      break;
  }
  return result;
}

// ---------------------------------------------------------------------------------------
// Output.

std::string FormatDate(int64_t days) {
  CivilDate date = CivilFromDays(days);
  return fmt::format("{:04d}-{:02d}-{:02d}", date.year, date.month, date.day);
}

std::string FormatTime(int64_t micros) {
  std::string out;
  AppendTimeOfDay(micros, &out);
  return out;
}

std::string FormatTimestamp(int64_t micros, bool with_time_zone) {
  int64_t time = 0;
  int64_t days = SplitTimestamp(micros, &time);
  std::string out = FormatDate(days);
  out.push_back(' ');
  AppendTimeOfDay(time, &out);
  if (with_time_zone) out.append("+00");
  return out;
}

// PostgreSQL's EncodeInterval in IntervalStyle postgres: "1 year 2 mons -3 days +04:05:06".
std::string FormatInterval(const Interval& interval) {
  std::string out;
  bool is_zero = true, is_before = false;
  auto add_part = [&](int64_t value, std::string_view unit) {
    if (value == 0) return;
    out.append(fmt::format("{}{}{} {}{}", is_zero ? "" : " ", is_before && value > 0 ? "+" : "",
                           value, unit, value != 1 ? "s" : ""));
    is_before = value < 0;
    is_zero = false;
  };
  add_part(interval.months / 12, "year");
  add_part(interval.months % 12, "mon");
  add_part(interval.days, "day");
  int64_t time = interval.micros;
  if (is_zero || time != 0) {
    bool minus = time < 0;
    // |INT64_MIN| does not fit int64: take the magnitude as unsigned.
    uint64_t magnitude = minus ? ~static_cast<uint64_t>(time) + 1 : static_cast<uint64_t>(time);
    uint64_t hours = magnitude / kMicrosPerHour;
    uint64_t rest = magnitude % kMicrosPerHour;
    out.append(fmt::format("{}{}{:02d}:{:02d}:{:02d}", is_zero ? "" : " ",
                           minus ? "-" : (is_before ? "+" : ""), hours, rest / kMicrosPerMinute,
                           rest % kMicrosPerMinute / kMicrosPerSecond));
    AppendFraction(static_cast<int64_t>(rest % kMicrosPerSecond), &out);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Conversions.

void CheckTimestamp(int64_t micros) {
  if (micros < kMinTimestamp || micros > kMaxTimestamp) ThrowTimestampOutOfRange();
}

void CheckDate(int64_t days) {
  if (days < kMinDate || days > kMaxDate) {
    throw SqlError(kDatetimeFieldOverflow, "date out of range");
  }
}

int64_t DateToTimestamp(int64_t days) {
  if (days < kMinDate || days > kMaxTimestamp / kMicrosPerDay) {
    throw SqlError(kDatetimeFieldOverflow, "date out of range for timestamp");
  }
  return days * kMicrosPerDay;
}

int64_t TimestampToDate(int64_t micros) { return FloorDiv(micros, kMicrosPerDay); }

int64_t TimestampToTime(int64_t micros) { return FloorMod(micros, kMicrosPerDay); }

// ---------------------------------------------------------------------------------------
// Arithmetic.

int64_t AddInterval(int64_t timestamp, const Interval& interval) {
  if (interval.months != 0) {
    int64_t time = 0;
    CivilDate date = CivilFromDays(SplitTimestamp(timestamp, &time));
    int64_t total = date.year * 12 + (date.month - 1) + interval.months;
    int64_t year = FloorDiv(total, 12);
    int month = static_cast<int>(FloorMod(total, 12)) + 1;
    if (year < 1 || year > kMaxTimestampYear) ThrowTimestampOutOfRange();
    int day = std::min(date.day, DaysInMonth(year, month));
    timestamp = DaysFromCivil(year, month, day) * kMicrosPerDay + time;
  }
  if (interval.days != 0) {
    // |days| < 2^31 and |timestamp| < 2^54: the sum fits 128 bits, not always 64.
    Int128 moved =
        static_cast<Int128>(timestamp) + static_cast<Int128>(interval.days) * kMicrosPerDay;
    if (moved < kMinTimestamp || moved > kMaxTimestamp) ThrowTimestampOutOfRange();
    timestamp = static_cast<int64_t>(moved);
  }
  if (__builtin_add_overflow(timestamp, interval.micros, &timestamp)) ThrowTimestampOutOfRange();
  CheckTimestamp(timestamp);
  return timestamp;
}

int64_t SubtractInterval(int64_t timestamp, const Interval& interval) {
  return AddInterval(timestamp, NegateInterval(interval));
}

Interval SubtractTimestamps(int64_t left, int64_t right) {
  int64_t difference = 0;
  if (__builtin_sub_overflow(left, right, &difference)) ThrowIntervalOutOfRange();
  Interval result;
  // Both parts truncate toward zero, so they share the sign (justify_hours).
  result.days = static_cast<int32_t>(difference / kMicrosPerDay);
  result.micros = difference % kMicrosPerDay;
  return result;
}

int64_t AddDays(int64_t date, int64_t days) {
  int64_t result = 0;
  if (__builtin_add_overflow(date, days, &result)) {
    throw SqlError(kDatetimeFieldOverflow, "date out of range");
  }
  CheckDate(result);
  return result;
}

int64_t AddIntervalToTime(int64_t time, const Interval& interval) {
  return FloorMod(time + interval.micros % kMicrosPerDay, kMicrosPerDay);
}

Interval AddIntervals(const Interval& left, const Interval& right) {
  return {CheckedInt32(static_cast<Int128>(left.months) + right.months),
          CheckedInt32(static_cast<Int128>(left.days) + right.days),
          CheckedInt64(static_cast<Int128>(left.micros) + right.micros)};
}

Interval SubtractIntervals(const Interval& left, const Interval& right) {
  return {CheckedInt32(static_cast<Int128>(left.months) - right.months),
          CheckedInt32(static_cast<Int128>(left.days) - right.days),
          CheckedInt64(static_cast<Int128>(left.micros) - right.micros)};
}

Interval NegateInterval(const Interval& interval) {
  return {CheckedInt32(-static_cast<Int128>(interval.months)),
          CheckedInt32(-static_cast<Int128>(interval.days)),
          CheckedInt64(-static_cast<Int128>(interval.micros))};
}

namespace {

// PostgreSQL's TSROUND: rounds to whole microseconds of a value in seconds or days.
double RoundToMicros(double value) { return std::rint(value * 1e6) / 1e6; }

// interval_mul and interval_div: months and days scale and truncate; what they lose spills
// into the next field (a month as 30 days, a day as 24 hours).
Interval ScaleInterval(double months, double days, double micros) {
  if (std::isnan(months) || months > std::numeric_limits<int32_t>::max() ||
      months < std::numeric_limits<int32_t>::min() || std::isnan(days) ||
      days > std::numeric_limits<int32_t>::max() || days < std::numeric_limits<int32_t>::min()) {
    ThrowIntervalOutOfRange();
  }
  Interval result;
  result.months = static_cast<int32_t>(months);
  result.days = static_cast<int32_t>(days);
  double month_remainder_days = RoundToMicros((months - result.months) * kDaysPerMonth);
  double second_remainder = RoundToMicros(
      (days - result.days + month_remainder_days - static_cast<int32_t>(month_remainder_days)) *
      86400.0);
  Int128 whole_days = result.days;
  if (std::fabs(second_remainder) >= 86400.0) {
    whole_days += static_cast<int32_t>(second_remainder / 86400.0);
    second_remainder -= static_cast<int32_t>(second_remainder / 86400.0) * 86400.0;
  }
  whole_days += static_cast<int32_t>(month_remainder_days);
  result.days = CheckedInt32(whole_days);
  double time = std::rint(micros + second_remainder * 1e6);
  if (!FitsInt64(time)) ThrowIntervalOutOfRange();
  result.micros = static_cast<int64_t>(time);
  return result;
}

}  // namespace

Interval MultiplyInterval(const Interval& interval, double factor) {
  return ScaleInterval(interval.months * factor, interval.days * factor,
                       static_cast<double>(interval.micros) * factor);
}

Interval DivideInterval(const Interval& interval, double divisor) {
  if (divisor == 0) throw SqlError(sqlstate::kDivisionByZero, "division by zero");
  return ScaleInterval(interval.months / divisor, interval.days / divisor,
                       static_cast<double>(interval.micros) / divisor);
}

// ---------------------------------------------------------------------------------------
// date_trunc.

int64_t TruncateTimestamp(std::string_view unit_text, int64_t micros, std::string_view type_name) {
  Unit unit = ResolveUnit(unit_text, type_name);
  int64_t time = 0;
  int64_t days = SplitTimestamp(micros, &time);
  CivilDate date = CivilFromDays(days);
  auto at_date = [&](int64_t year, int month, int day) {
    if (year < 1) ThrowTimestampOutOfRange();
    return DaysFromCivil(year, month, day) * kMicrosPerDay;
  };
  switch (unit) {
    case Unit::kMicrosecond:
      return micros;
    case Unit::kMillisecond:
      return micros - time % kMicrosPerMillisecond;
    case Unit::kSecond:
      return micros - time % kMicrosPerSecond;
    case Unit::kMinute:
      return micros - time % kMicrosPerMinute;
    case Unit::kHour:
      return micros - time % kMicrosPerHour;
    case Unit::kDay:
      return days * kMicrosPerDay;
    case Unit::kWeek: {
      int64_t monday = days - (IsoDayOfWeek(days) - 1);
      if (monday < kMinDate) ThrowTimestampOutOfRange();
      return monday * kMicrosPerDay;
    }
    case Unit::kMonth:
      return at_date(date.year, date.month, 1);
    case Unit::kQuarter:
      return at_date(date.year, (date.month - 1) / 3 * 3 + 1, 1);
    case Unit::kYear:
      return at_date(date.year, 1, 1);
    case Unit::kDecade:
      return at_date(date.year / 10 * 10, 1, 1);
    case Unit::kCentury:
      return at_date((date.year + 99) / 100 * 100 - 99, 1, 1);
    case Unit::kMillennium:
      return at_date((date.year + 999) / 1000 * 1000 - 999, 1, 1);
    default:
      ThrowUnitNotSupported(Lower(Trim(unit_text)), type_name);
  }
}

Interval TruncateInterval(std::string_view unit_text, const Interval& interval) {
  Unit unit = ResolveUnit(unit_text, "interval");
  Interval result = interval;
  int32_t years = interval.months / 12;
  switch (unit) {
    case Unit::kMicrosecond:
      return result;
    case Unit::kMillisecond:
      result.micros = interval.micros / kMicrosPerMillisecond * kMicrosPerMillisecond;
      return result;
    case Unit::kSecond:
      result.micros = interval.micros / kMicrosPerSecond * kMicrosPerSecond;
      return result;
    case Unit::kMinute:
      result.micros = interval.micros / kMicrosPerMinute * kMicrosPerMinute;
      return result;
    case Unit::kHour:
      result.micros = interval.micros / kMicrosPerHour * kMicrosPerHour;
      return result;
    case Unit::kDay:
      result.micros = 0;
      return result;
    case Unit::kMonth:
      result.days = 0;
      result.micros = 0;
      return result;
    case Unit::kQuarter:
      return {years * 12 + interval.months % 12 / 3 * 3, 0, 0};
    case Unit::kYear:
      return {years * 12, 0, 0};
    case Unit::kDecade:
      return {years / 10 * 120, 0, 0};
    case Unit::kCentury:
      return {years / 100 * 1200, 0, 0};
    case Unit::kMillennium:
      return {years / 1000 * 12000, 0, 0};
    case Unit::kWeek:
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "interval units \"week\" not supported because months usually have "
                     "fractional weeks");
    default:
      ThrowUnitNotSupported(Lower(Trim(unit_text)), "interval");
  }
}

// ---------------------------------------------------------------------------------------
// extract / date_part.

double TimestampPart(std::string_view field, int64_t micros, bool with_time_zone) {
  std::string_view type_name =
      with_time_zone ? "timestamp with time zone" : "timestamp without time zone";
  Unit unit = ResolveUnit(field, type_name);
  int64_t time = 0;
  int64_t days = SplitTimestamp(micros, &time);
  if (std::optional<double> value = TimeField(unit, time)) return *value;
  if (std::optional<double> value = DateField(unit, days)) return *value;
  switch (unit) {
    case Unit::kEpoch:
      return static_cast<double>(micros - kUnixEpochDays * kMicrosPerDay) / 1e6;
    case Unit::kTimezone:
    case Unit::kTimezoneHour:
    case Unit::kTimezoneMinute:
      if (with_time_zone) return 0;  // The session time zone is UTC.
      [[fallthrough]];
    default:
      ThrowUnitNotSupported(Lower(Trim(field)), type_name);
  }
}

double DatePart(std::string_view field, int64_t days) {
  Unit unit = ResolveUnit(field, "date");
  if (std::optional<double> value = DateField(unit, days)) return *value;
  if (unit == Unit::kEpoch) return static_cast<double>((days - kUnixEpochDays) * 86400);
  ThrowUnitNotSupported(Lower(Trim(field)), "date");
}

double TimePart(std::string_view field, int64_t micros) {
  Unit unit = ResolveUnit(field, "time without time zone");
  if (std::optional<double> value = TimeField(unit, micros)) return *value;
  if (unit == Unit::kEpoch) return static_cast<double>(micros) / 1e6;
  ThrowUnitNotSupported(Lower(Trim(field)), "time without time zone");
}

double IntervalPart(std::string_view field, const Interval& interval) {
  Unit unit = ResolveUnit(field, "interval");
  int64_t years = interval.months / 12;
  int64_t months = interval.months % 12;
  int64_t second_micros = interval.micros % kMicrosPerMinute;
  switch (unit) {
    case Unit::kMicrosecond:
      return static_cast<double>(second_micros);
    case Unit::kMillisecond:
      return static_cast<double>(second_micros) / 1000.0;
    case Unit::kSecond:
      return static_cast<double>(second_micros) / 1e6;
    case Unit::kMinute:
      return static_cast<double>(interval.micros % kMicrosPerHour / kMicrosPerMinute);
    case Unit::kHour:
      return static_cast<double>(interval.micros / kMicrosPerHour);
    case Unit::kDay:
      return interval.days;
    case Unit::kMonth:
      return static_cast<double>(months);
    case Unit::kQuarter:
      return static_cast<double>(months / 3 + 1);
    case Unit::kYear:
      return static_cast<double>(years);
    case Unit::kDecade:
      return static_cast<double>(years / 10);
    case Unit::kCentury:
      return static_cast<double>(years / 100);
    case Unit::kMillennium:
      return static_cast<double>(years / 1000);
    case Unit::kEpoch:
      // PostgreSQL counts a year as 365.25 days here, and a month as 30.
      return (365.25 * static_cast<double>(years) + 30.0 * static_cast<double>(months) +
              interval.days) *
                 86400.0 +
             static_cast<double>(interval.micros) / 1e6;
    default:
      ThrowUnitNotSupported(Lower(Trim(field)), "interval");
  }
}

namespace {

// A field of microseconds as extract shows it: seconds with 6 decimals, milliseconds with 3.
std::optional<Decimal> ExactSecondsField(Unit unit, Int128 micros) {
  if (unit == Unit::kSecond) return decimal::FromInt128(micros, 6);
  if (unit == Unit::kMillisecond) return decimal::FromInt128(micros, 3);
  return std::nullopt;
}

// The other fields are whole numbers, which a double holds exactly.
Decimal WholeField(double part) { return decimal::FromInteger(static_cast<int64_t>(part)); }

}  // namespace

Decimal TimestampExtract(std::string_view field, int64_t micros, bool with_time_zone) {
  double part = TimestampPart(field, micros, with_time_zone);  // Checks the field.
  Unit unit = ResolveUnit(field, "timestamp");
  int64_t time = 0;
  SplitTimestamp(micros, &time);
  if (std::optional<Decimal> exact = ExactSecondsField(unit, time % kMicrosPerMinute)) {
    return *exact;
  }
  if (unit == Unit::kEpoch) {
    return decimal::FromInt128(Int128{micros} - kUnixEpochDays * kMicrosPerDay, 6);
  }
  return WholeField(part);
}

Decimal DateExtract(std::string_view field, int64_t days) {
  return WholeField(DatePart(field, days));
}

Decimal TimeExtract(std::string_view field, int64_t micros) {
  double part = TimePart(field, micros);
  Unit unit = ResolveUnit(field, "time without time zone");
  if (std::optional<Decimal> exact = ExactSecondsField(unit, micros % kMicrosPerMinute)) {
    return *exact;
  }
  if (unit == Unit::kEpoch) return decimal::FromInt128(micros, 6);
  return WholeField(part);
}

Decimal IntervalExtract(std::string_view field, const Interval& interval) {
  double part = IntervalPart(field, interval);
  Unit unit = ResolveUnit(field, "interval");
  if (std::optional<Decimal> exact = ExactSecondsField(unit, interval.micros % kMicrosPerMinute)) {
    return *exact;
  }
  if (unit == Unit::kEpoch) {
    // As IntervalPart: a year of 365.25 days (31,557,600 s), a month of 30 days.
    Int128 years = interval.months / 12;
    Int128 months = interval.months % 12;
    Int128 seconds = years * 31557600 + (months * 30 + interval.days) * 86400;
    return decimal::FromInt128(seconds * kMicrosPerSecond + interval.micros, 6);
  }
  return WholeField(part);
}

// ---------------------------------------------------------------------------------------
// Constructors.

int64_t TimestampFromUnixSeconds(double seconds) {
  if (std::isnan(seconds)) throw SqlError(kDatetimeFieldOverflow, "timestamp cannot be NaN");
  if (std::isinf(seconds)) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "infinite dates and timestamps are not supported");
  }
  double micros = std::rint(seconds * 1e6) + static_cast<double>(kUnixEpochDays * kMicrosPerDay);
  if (!FitsInt64(micros)) ThrowTimestampOutOfRange();
  auto result = static_cast<int64_t>(micros);
  CheckTimestamp(result);
  return result;
}

int64_t MakeDate(int64_t year, int64_t month, int64_t day) {
  if (year < 1 || year > kMaxDateYear || month < 1 || month > 12 || day < 1 ||
      day > DaysInMonth(year, static_cast<int>(month))) {
    throw SqlError(
        kDatetimeFieldOverflow,
        fmt::format("date field value out of range: {}-{:02d}-{:02d}", year, month, day));
  }
  return DaysFromCivil(year, static_cast<int>(month), static_cast<int>(day));
}

int64_t MakeTime(int64_t hour, int64_t minute, double second) {
  if (hour < 0 || hour > 24 || minute < 0 || minute > 59 || !(second >= 0) || second > 60 ||
      (hour == 24 && (minute > 0 || second > 0))) {
    throw SqlError(
        kDatetimeFieldOverflow,
        fmt::format("time field value out of range: {}:{:02d}:{:02}", hour, minute, second));
  }
  return hour * kMicrosPerHour + minute * kMicrosPerMinute +
         static_cast<int64_t>(std::rint(second * 1e6));
}

int64_t MakeTimestamp(int64_t year, int64_t month, int64_t day, int64_t hour, int64_t minute,
                      double second) {
  int64_t days = MakeDate(year, month, day);
  if (days > kMaxTimestamp / kMicrosPerDay) ThrowTimestampOutOfRange();
  int64_t micros = days * kMicrosPerDay + MakeTime(hour, minute, second);
  CheckTimestamp(micros);
  return micros;
}

Interval MakeInterval(int64_t years, int64_t months, int64_t weeks, int64_t days, int64_t hours,
                      int64_t minutes, double seconds) {
  double micros = std::rint(seconds * 1e6);
  if (!FitsInt64(micros)) ThrowIntervalOutOfRange();
  return {
      CheckedInt32(static_cast<Int128>(years) * 12 + months),
      CheckedInt32(static_cast<Int128>(weeks) * 7 + days),
      CheckedInt64(static_cast<Int128>(hours) * kMicrosPerHour +
                   static_cast<Int128>(minutes) * kMicrosPerMinute + static_cast<int64_t>(micros))};
}

int64_t CurrentTimestamp() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::microseconds>(now).count() +
         kUnixEpochDays * kMicrosPerDay;
}

}  // namespace stave::temporal
