#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/decimal.h"

// Calendar math, parsing, formatting and arithmetic of the temporal types, with PostgreSQL's
// semantics. Representations (the same as PostgreSQL's, so that its algorithms and its binary
// wire format carry over):
//
//   date         int64 days since 2000-01-01
//   time         int64 microseconds since midnight, 0 to 24:00:00 inclusive
//   timestamp    int64 microseconds since 2000-01-01 00:00:00
//   timestamptz  int64 microseconds since 2000-01-01 00:00:00 UTC
//   interval     Interval{months, days, microseconds}, held in Values and columns as the
//                bytes of EncodeInterval
//
// Years 1 to 294276 AD are supported (dates up to 5874897 AD, as PostgreSQL); BC dates and
// the infinities are refused with a clear error. Stave's session time zone is always UTC, so
// timestamptz converts to and from timestamp without an offset. Errors are SqlErrors with
// PostgreSQL's SQLSTATEs: 22007 bad syntax, 22008 a field or result out of range, 22015 an
// interval field out of range, 22023 an unknown unit, 0A000 a unit the type lacks.

namespace stave::temporal {

inline constexpr int64_t kMicrosPerMillisecond = 1000;
inline constexpr int64_t kMicrosPerSecond = 1000000;
inline constexpr int64_t kMicrosPerMinute = 60 * kMicrosPerSecond;
inline constexpr int64_t kMicrosPerHour = 60 * kMicrosPerMinute;
inline constexpr int64_t kMicrosPerDay = 24 * kMicrosPerHour;
/// PostgreSQL counts a month as 30 days when it compares or converts intervals.
inline constexpr int64_t kDaysPerMonth = 30;
/// Days from 1970-01-01 (the Unix epoch) to 2000-01-01.
inline constexpr int64_t kUnixEpochDays = -10957;

/// The proleptic Gregorian calendar.
bool IsLeapYear(int64_t year);
int DaysInMonth(int64_t year, int month);
/// Days since 2000-01-01 of a calendar date (no range check).
int64_t DaysFromCivil(int64_t year, int month, int day);
struct CivilDate {
  int64_t year;
  int month;  ///< 1 to 12.
  int day;    ///< 1 to 31.
};
CivilDate CivilFromDays(int64_t days);

/// An interval as PostgreSQL keeps it: the three fields are independent (a month is not a
/// fixed number of days, a day not a fixed number of microseconds across a DST change).
struct Interval {
  int32_t months = 0;
  int32_t days = 0;
  int64_t micros = 0;

  bool operator==(const Interval&) const = default;
};

/// The interval's bytes as a Value holds them: 32 bytes whose byte order is PostgreSQL's
/// interval order. First the span (months as 30 days, days as 24 hours, in microseconds; a
/// 128-bit integer because months * 30 days in microseconds overflows 64 bits), then months,
/// days and microseconds; each big-endian with the sign bit flipped. Intervals PostgreSQL
/// calls equal because their spans are equal ('1 mon' and '30 days') stay distinct here.
std::string EncodeInterval(const Interval& interval);
/// REQUIRES: `bytes` came from EncodeInterval.
Interval DecodeInterval(std::string_view bytes);

/// The SQL-standard interval qualifier of `INTERVAL '5' SECOND`: the unit of a bare number,
/// and the least significant field kept.
enum class IntervalField { kNone, kYear, kMonth, kDay, kHour, kMinute, kSecond };

/// Text → value, as PostgreSQL's input functions accept ISO 8601 forms: `2024-01-02`,
/// `20240102`, `2024-01-02 03:04:05.123456`, a `T` separator, a time zone (`Z`, `UTC`,
/// `+02`, `+0530`, `-05:30`) applied by timestamptz and ignored by timestamp and time, and
/// the words `epoch`, `now`, `today`, `tomorrow`, `yesterday`. Fractions of a second round to
/// the microsecond.
int64_t ParseDate(std::string_view text);
int64_t ParseTime(std::string_view text);
int64_t ParseTimestamp(std::string_view text, bool with_time_zone);
/// PostgreSQL's interval input: `1 day 2 hours`, `5 seconds`, `-1 year 2 mons`, `01:02:03`,
/// `1 day 02:00:00`, `1.5 hours`, `@ 3 days ago`, a bare number (seconds, or `field`'s unit).
Interval ParseInterval(std::string_view text, IntervalField field = IntervalField::kNone);

/// Value → text in PostgreSQL's default output (DateStyle ISO, IntervalStyle postgres;
/// timestamptz in UTC, `+00`).
std::string FormatDate(int64_t days);
std::string FormatTime(int64_t micros);
std::string FormatTimestamp(int64_t micros, bool with_time_zone);
std::string FormatInterval(const Interval& interval);

/// Conversions between the types (timestamptz ↔ timestamp is the identity in UTC). Throw
/// 22008 when the result is out of range.
int64_t DateToTimestamp(int64_t days);
int64_t TimestampToDate(int64_t micros);
int64_t TimestampToTime(int64_t micros);
/// Throws 22008 unless the value is a supported timestamp / date.
void CheckTimestamp(int64_t micros);
void CheckDate(int64_t days);

/// Arithmetic. Month arithmetic clamps the day to the month's end (Jan 31 + 1 month = Feb 28
/// or 29), then days are added, then microseconds, as PostgreSQL's timestamp_pl_interval.
int64_t AddInterval(int64_t timestamp, const Interval& interval);
int64_t SubtractInterval(int64_t timestamp, const Interval& interval);
/// timestamp - timestamp: whole days go to the days field (justify_hours), as PostgreSQL.
Interval SubtractTimestamps(int64_t left, int64_t right);
int64_t AddDays(int64_t date, int64_t days);
/// time ± interval: only the interval's time of day counts; wraps around midnight.
int64_t AddIntervalToTime(int64_t time, const Interval& interval);
Interval AddIntervals(const Interval& left, const Interval& right);
Interval SubtractIntervals(const Interval& left, const Interval& right);
Interval NegateInterval(const Interval& interval);
Interval MultiplyInterval(const Interval& interval, double factor);
Interval DivideInterval(const Interval& interval, double divisor);

/// date_trunc(unit, value). Units: microseconds, milliseconds, second, minute, hour, day,
/// week, month, quarter, year, decade, century, millennium (and PostgreSQL's plurals and
/// abbreviations). `type_name` names the argument's type in errors.
int64_t TruncateTimestamp(std::string_view unit, int64_t micros, std::string_view type_name);
Interval TruncateInterval(std::string_view unit, const Interval& interval);

/// extract(field FROM value) and date_part(field, value), as double precision. Fields:
/// microseconds, milliseconds, second, minute, hour, day, month, year, quarter, week, dow,
/// isodow, doy, isoyear, decade, century, millennium, epoch (and timezone fields for
/// timestamptz).
double TimestampPart(std::string_view field, int64_t micros, bool with_time_zone);
double DatePart(std::string_view field, int64_t days);
double TimePart(std::string_view field, int64_t micros);
double IntervalPart(std::string_view field, const Interval& interval);

/// extract(field FROM value) as PostgreSQL 14+ gives it, numeric and exact: second and epoch
/// with 6 decimals, milliseconds with 3, every other field an integer. The same fields and
/// errors as the *Part functions above.
Decimal TimestampExtract(std::string_view field, int64_t micros, bool with_time_zone);
Decimal DateExtract(std::string_view field, int64_t days);
Decimal TimeExtract(std::string_view field, int64_t micros);
Decimal IntervalExtract(std::string_view field, const Interval& interval);

/// to_timestamp(seconds since 1970-01-01 UTC) → timestamptz.
int64_t TimestampFromUnixSeconds(double seconds);
/// make_date, make_time, make_timestamp, make_interval.
int64_t MakeDate(int64_t year, int64_t month, int64_t day);
int64_t MakeTime(int64_t hour, int64_t minute, double second);
int64_t MakeTimestamp(int64_t year, int64_t month, int64_t day, int64_t hour, int64_t minute,
                      double second);
Interval MakeInterval(int64_t years, int64_t months, int64_t weeks, int64_t days, int64_t hours,
                      int64_t minutes, double seconds);

/// The current time as a timestamptz.
int64_t CurrentTimestamp();

}  // namespace stave::temporal
