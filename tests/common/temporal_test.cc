#include "common/temporal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "common/sql_error.h"
#include "common/value.h"
#include "common/value_cast.h"

namespace stave::temporal {
namespace {

std::string SqlStateOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const SqlError& error) {
    return error.sqlstate();
  }
  return "none";
}

int64_t Ts(std::string_view text) { return ParseTimestamp(text, false); }
std::string TsText(int64_t micros) { return FormatTimestamp(micros, false); }
Interval Iv(std::string_view text) { return ParseInterval(text); }
std::string IvText(std::string_view text) { return FormatInterval(ParseInterval(text)); }

TEST(TemporalTest, CalendarRoundTrips) {
  EXPECT_EQ(DaysFromCivil(2000, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), kUnixEpochDays);
  for (int64_t days = -800000; days < 800000; days += 997) {
    CivilDate date = CivilFromDays(days);
    EXPECT_EQ(DaysFromCivil(date.year, date.month, date.day), days);
  }
  EXPECT_TRUE(IsLeapYear(2000));
  EXPECT_TRUE(IsLeapYear(2024));
  EXPECT_FALSE(IsLeapYear(1900));
  EXPECT_FALSE(IsLeapYear(2023));
  EXPECT_EQ(DaysInMonth(2024, 2), 29);
  EXPECT_EQ(DaysInMonth(2100, 2), 28);
}

TEST(TemporalTest, ParsesAndFormatsDates) {
  EXPECT_EQ(FormatDate(ParseDate("2024-02-29")), "2024-02-29");
  EXPECT_EQ(FormatDate(ParseDate(" 2024-1-2 ")), "2024-01-02");
  EXPECT_EQ(FormatDate(ParseDate("20240102")), "2024-01-02");
  EXPECT_EQ(FormatDate(ParseDate("2024-01-02 23:59:59")), "2024-01-02");
  EXPECT_EQ(FormatDate(ParseDate("epoch")), "1970-01-01");
  EXPECT_EQ(FormatDate(ParseDate("0001-01-01")), "0001-01-01");
  EXPECT_EQ(FormatDate(ParseDate("12345-06-07")), "12345-06-07");
  EXPECT_EQ(SqlStateOf([] { ParseDate("2023-02-29"); }), "22008");
  EXPECT_EQ(SqlStateOf([] { ParseDate("2024-13-01"); }), "22008");
  EXPECT_EQ(SqlStateOf([] { ParseDate("2024-00-10"); }), "22008");
  EXPECT_EQ(SqlStateOf([] { ParseDate("abc"); }), "22007");
  EXPECT_EQ(SqlStateOf([] { ParseDate(""); }), "22007");
  EXPECT_EQ(SqlStateOf([] { ParseDate("2024-01-02x"); }), "22007");
  EXPECT_EQ(SqlStateOf([] { ParseDate("2024-01-02 BC"); }), "22008");
  EXPECT_EQ(SqlStateOf([] { ParseDate("infinity"); }), "0A000");
}

TEST(TemporalTest, ParsesAndFormatsTimestamps) {
  EXPECT_EQ(TsText(Ts("2024-01-02 03:04:05.123456")), "2024-01-02 03:04:05.123456");
  EXPECT_EQ(TsText(Ts("2024-01-02T03:04:05")), "2024-01-02 03:04:05");
  EXPECT_EQ(TsText(Ts("2024-01-02 03:04")), "2024-01-02 03:04:00");
  EXPECT_EQ(TsText(Ts("2024-01-02")), "2024-01-02 00:00:00");
  EXPECT_EQ(TsText(Ts("2024-01-02 03:04:05.5")), "2024-01-02 03:04:05.5");
  EXPECT_EQ(TsText(Ts("2024-01-02 24:00:00")), "2024-01-03 00:00:00");
  EXPECT_EQ(TsText(Ts("1999-12-31 23:59:59.999999")), "1999-12-31 23:59:59.999999");
  // A timestamp without time zone ignores a written offset; timestamptz applies it.
  EXPECT_EQ(TsText(Ts("2024-01-02 03:04:05+02")), "2024-01-02 03:04:05");
  EXPECT_EQ(FormatTimestamp(ParseTimestamp("2024-01-02 03:04:05+02", true), true),
            "2024-01-02 01:04:05+00");
  EXPECT_EQ(FormatTimestamp(ParseTimestamp("2024-01-02 03:04:05-05:30", true), true),
            "2024-01-02 08:34:05+00");
  EXPECT_EQ(FormatTimestamp(ParseTimestamp("2024-01-02T03:04:05Z", true), true),
            "2024-01-02 03:04:05+00");
  EXPECT_EQ(FormatTimestamp(ParseTimestamp("2024-01-02 03:04:05 UTC", true), true),
            "2024-01-02 03:04:05+00");
  EXPECT_EQ(FormatTimestamp(ParseTimestamp("2024-01-02 03:04:05+0530", true), true),
            "2024-01-01 21:34:05+00");
  EXPECT_EQ(SqlStateOf([] { Ts("2024-01-02 25:00:00"); }), "22008");
  EXPECT_EQ(SqlStateOf([] { Ts("2024-01-02 10:60:00"); }), "22008");
  EXPECT_EQ(SqlStateOf([] { Ts("2024-01-02 10:00:00 Europe/Paris"); }), "0A000");
  EXPECT_EQ(SqlStateOf([] { Ts("2024-01-02 10:"); }), "22007");
  EXPECT_EQ(SqlStateOf([] { Ts("294277-01-01"); }), "22008");
}

TEST(TemporalTest, RoundsFractionsToMicroseconds) {
  EXPECT_EQ(TsText(Ts("2024-01-02 03:04:05.1234564")), "2024-01-02 03:04:05.123456");
  EXPECT_EQ(TsText(Ts("2024-01-02 03:04:05.1234566")), "2024-01-02 03:04:05.123457");
  EXPECT_EQ(TsText(Ts("2024-01-02 23:59:59.9999999")), "2024-01-03 00:00:00");
  EXPECT_EQ(FormatTime(ParseTime("10:00:00.0000005")), "10:00:00.000001");
}

TEST(TemporalTest, ParsesAndFormatsTimes) {
  EXPECT_EQ(FormatTime(ParseTime("03:04:05")), "03:04:05");
  EXPECT_EQ(FormatTime(ParseTime("3:04")), "03:04:00");
  EXPECT_EQ(FormatTime(ParseTime("24:00:00")), "24:00:00");
  EXPECT_EQ(FormatTime(ParseTime("2024-01-02 03:04:05.25")), "03:04:05.25");
  EXPECT_EQ(FormatTime(ParseTime("allballs")), "00:00:00");
  EXPECT_EQ(SqlStateOf([] { ParseTime("24:00:01"); }), "22008");
  EXPECT_EQ(SqlStateOf([] { ParseTime("2024-01-02"); }), "22007");
}

TEST(TemporalTest, FormatsIntervalsAsPostgres) {
  EXPECT_EQ(IvText("1 day 2 hours"), "1 day 02:00:00");
  EXPECT_EQ(IvText("1 year 2 months"), "1 year 2 mons");
  EXPECT_EQ(IvText("-1 second"), "-00:00:01");
  EXPECT_EQ(IvText("0"), "00:00:00");
  EXPECT_EQ(IvText("5"), "00:00:05");
  EXPECT_EQ(IvText("2 days"), "2 days");
  EXPECT_EQ(IvText("-1 day 2 hours"), "-1 days +02:00:00");
  EXPECT_EQ(IvText("1 day -2 hours"), "1 day -02:00:00");
  EXPECT_EQ(IvText("-1 year -2 mons"), "-1 years -2 mons");
  EXPECT_EQ(IvText("1 mon -1 day"), "1 mon -1 days");
  EXPECT_EQ(IvText("1.5 days"), "1 day 12:00:00");
  EXPECT_EQ(IvText("1.5 months"), "1 mon 15 days");
  EXPECT_EQ(IvText("1.5 years"), "1 year 6 mons");
  EXPECT_EQ(IvText("0.5 seconds"), "00:00:00.5");
  EXPECT_EQ(IvText("-0.5 seconds"), "-00:00:00.5");
  EXPECT_EQ(IvText("100 hours"), "100:00:00");
  EXPECT_EQ(IvText("1 week"), "7 days");
  EXPECT_EQ(IvText("01:02:03"), "01:02:03");
  EXPECT_EQ(IvText("-01:02:03.5"), "-01:02:03.5");
  EXPECT_EQ(IvText("1 day 02:00:00"), "1 day 02:00:00");
  EXPECT_EQ(IvText("@ 3 days ago"), "-3 days");
  EXPECT_EQ(IvText("1 decade"), "10 years");
  EXPECT_EQ(IvText("3 ms"), "00:00:00.003");
  EXPECT_EQ(SqlStateOf([] { Iv("abc"); }), "22007");
  EXPECT_EQ(SqlStateOf([] { Iv(""); }), "22007");
  EXPECT_EQ(SqlStateOf([] { Iv("1 fortnight"); }), "22007");
  EXPECT_EQ(SqlStateOf([] { Iv("99999999999 years"); }), "22015");
}

TEST(TemporalTest, IntervalQualifier) {
  EXPECT_EQ(FormatInterval(ParseInterval("5", IntervalField::kSecond)), "00:00:05");
  EXPECT_EQ(FormatInterval(ParseInterval("5", IntervalField::kDay)), "5 days");
  EXPECT_EQ(FormatInterval(ParseInterval("2", IntervalField::kYear)), "2 years");
  EXPECT_EQ(FormatInterval(ParseInterval("1 day 3 hours 5 minutes", IntervalField::kHour)),
            "1 day 03:00:00");
  EXPECT_EQ(FormatInterval(ParseInterval("1 year 5 months", IntervalField::kYear)), "1 year");
}

TEST(TemporalTest, IntervalEncodingSortsAsPostgres) {
  std::vector<std::string> ordered = {"-1 year",  "-1 day",   "-00:00:01",      "0",
                                      "00:00:01", "23:59:59", "1 day 00:00:01", "31 days",
                                      "1 year"};
  for (size_t i = 0; i + 1 < ordered.size(); ++i) {
    EXPECT_LT(EncodeInterval(Iv(ordered[i])), EncodeInterval(Iv(ordered[i + 1])))
        << ordered[i] << " < " << ordered[i + 1];
  }
  Interval big{2000000000, -2000000000, 9000000000000000000};
  EXPECT_EQ(DecodeInterval(EncodeInterval(big)), big);
}

TEST(TemporalTest, MonthArithmeticClampsTheDay) {
  auto plus = [](std::string_view ts, std::string_view interval) {
    return TsText(AddInterval(Ts(ts), Iv(interval)));
  };
  EXPECT_EQ(plus("2024-01-31", "1 month"), "2024-02-29 00:00:00");
  EXPECT_EQ(plus("2023-01-31", "1 month"), "2023-02-28 00:00:00");
  EXPECT_EQ(plus("2024-03-31", "-1 month"), "2024-02-29 00:00:00");
  EXPECT_EQ(plus("2024-02-29", "1 year"), "2025-02-28 00:00:00");
  EXPECT_EQ(plus("2024-12-31 23:00", "2 hours"), "2025-01-01 01:00:00");
  EXPECT_EQ(plus("2024-01-31", "1 month 1 day"), "2024-03-01 00:00:00");
  EXPECT_EQ(plus("2000-01-01", "-1 microsecond"), "1999-12-31 23:59:59.999999");
  EXPECT_EQ(SqlStateOf([&] { plus("294276-12-31", "1 day"); }), "22008");
  EXPECT_EQ(SqlStateOf([&] { plus("0001-01-01", "-1 day"); }), "22008");
  // Fields large enough to overflow 64-bit microseconds are refused, not wrapped.
  EXPECT_EQ(SqlStateOf([] { AddInterval(0, {0, 2000000000, 0}); }), "22008");
  EXPECT_EQ(SqlStateOf([] { AddInterval(0, {2000000000, 0, 0}); }), "22008");
  EXPECT_EQ(SqlStateOf([] { DateToTimestamp(ParseDate("5874897-12-31")); }), "22008");
  EXPECT_EQ(SqlStateOf([] { MakeTimestamp(5000000, 1, 1, 0, 0, 0); }), "22008");
  EXPECT_EQ(SqlStateOf([] { AddDays(ParseDate("5874897-12-31"), 1); }), "22008");
  EXPECT_EQ(SqlStateOf([] { MultiplyInterval({0, 2000000000, 0}, 1.5); }), "22008");
}

TEST(TemporalTest, TimestampDifferenceJustifiesHours) {
  EXPECT_EQ(FormatInterval(SubtractTimestamps(Ts("2024-01-02 03:00"), Ts("2024-01-01"))),
            "1 day 03:00:00");
  EXPECT_EQ(FormatInterval(SubtractTimestamps(Ts("2024-01-01"), Ts("2024-01-02 03:00"))),
            "-1 days -03:00:00");
  EXPECT_EQ(FormatInterval(SubtractTimestamps(Ts("2024-03-01"), Ts("2024-02-01"))), "29 days");
}

TEST(TemporalTest, IntervalArithmetic) {
  EXPECT_EQ(FormatInterval(MultiplyInterval(Iv("1 month"), 1.5)), "1 mon 15 days");
  EXPECT_EQ(FormatInterval(MultiplyInterval(Iv("1 day"), 0.5)), "12:00:00");
  EXPECT_EQ(FormatInterval(DivideInterval(Iv("1 day"), 3)), "08:00:00");
  EXPECT_EQ(FormatInterval(DivideInterval(Iv("1 mon"), 4)), "7 days 12:00:00");
  EXPECT_EQ(FormatInterval(NegateInterval(Iv("1 day 2 hours"))), "-1 days -02:00:00");
  EXPECT_EQ(FormatInterval(AddIntervals(Iv("1 day"), Iv("-25 hours"))), "1 day -25:00:00");
  EXPECT_EQ(SqlStateOf([] { DivideInterval(Iv("1 day"), 0); }), "22012");
  EXPECT_EQ(SqlStateOf([] { MultiplyInterval(Iv("1000000 years"), 1e6); }), "22008");
  EXPECT_EQ(FormatTime(AddIntervalToTime(ParseTime("23:00"), Iv("2 hours"))), "01:00:00");
  EXPECT_EQ(FormatTime(AddIntervalToTime(ParseTime("01:00"), Iv("-3 hours"))), "22:00:00");
}

TEST(TemporalTest, Truncates) {
  auto trunc = [](std::string_view unit, std::string_view ts) {
    return TsText(TruncateTimestamp(unit, Ts(ts), "timestamp without time zone"));
  };
  EXPECT_EQ(trunc("hour", "2024-05-06 07:08:09.5"), "2024-05-06 07:00:00");
  EXPECT_EQ(trunc("HOURS", "2024-05-06 07:08:09.5"), "2024-05-06 07:00:00");
  EXPECT_EQ(trunc("milliseconds", "2024-05-06 07:08:09.123456"), "2024-05-06 07:08:09.123");
  EXPECT_EQ(trunc("week", "2024-05-06 07:08:09"), "2024-05-06 00:00:00");  // A Monday.
  EXPECT_EQ(trunc("week", "2024-05-05 07:08:09"), "2024-04-29 00:00:00");  // A Sunday.
  EXPECT_EQ(trunc("quarter", "2024-05-06"), "2024-04-01 00:00:00");
  EXPECT_EQ(trunc("decade", "2024-05-06"), "2020-01-01 00:00:00");
  EXPECT_EQ(trunc("century", "2024-05-06"), "2001-01-01 00:00:00");
  EXPECT_EQ(trunc("century", "2000-05-06"), "1901-01-01 00:00:00");
  EXPECT_EQ(trunc("millennium", "2024-05-06"), "2001-01-01 00:00:00");
  EXPECT_EQ(trunc("minute", "1999-12-31 23:59:59"), "1999-12-31 23:59:00");
  EXPECT_EQ(SqlStateOf([&] { trunc("fortnight", "2024-01-01"); }), "22023");
  EXPECT_EQ(SqlStateOf([&] { trunc("epoch", "2024-01-01"); }), "0A000");
  EXPECT_EQ(FormatInterval(TruncateInterval("hour", Iv("1 year 2 mons 3 days 04:05:06"))),
            "1 year 2 mons 3 days 04:00:00");
  EXPECT_EQ(FormatInterval(TruncateInterval("year", Iv("1 year 2 mons 3 days"))), "1 year");
  EXPECT_EQ(SqlStateOf([] { TruncateInterval("week", Iv("1 day")); }), "0A000");
}

TEST(TemporalTest, ExtractsFields) {
  int64_t ts = Ts("2024-12-30 13:14:15.5");  // A Monday in ISO week 1 of 2025.
  EXPECT_EQ(TimestampPart("year", ts, false), 2024);
  EXPECT_EQ(TimestampPart("month", ts, false), 12);
  EXPECT_EQ(TimestampPart("day", ts, false), 30);
  EXPECT_EQ(TimestampPart("hour", ts, false), 13);
  EXPECT_EQ(TimestampPart("minute", ts, false), 14);
  EXPECT_EQ(TimestampPart("second", ts, false), 15.5);
  EXPECT_EQ(TimestampPart("milliseconds", ts, false), 15500);
  EXPECT_EQ(TimestampPart("microseconds", ts, false), 15500000);
  EXPECT_EQ(TimestampPart("dow", ts, false), 1);
  EXPECT_EQ(TimestampPart("isodow", ts, false), 1);
  EXPECT_EQ(TimestampPart("doy", ts, false), 365);
  EXPECT_EQ(TimestampPart("week", ts, false), 1);
  EXPECT_EQ(TimestampPart("isoyear", ts, false), 2025);
  EXPECT_EQ(TimestampPart("quarter", ts, false), 4);
  EXPECT_EQ(TimestampPart("decade", ts, false), 202);
  EXPECT_EQ(TimestampPart("century", ts, false), 21);
  EXPECT_EQ(TimestampPart("millennium", ts, false), 3);
  EXPECT_EQ(TimestampPart("epoch", Ts("1970-01-01 00:00:01.5"), false), 1.5);
  EXPECT_EQ(TimestampPart("timezone", ts, true), 0);
  EXPECT_EQ(SqlStateOf([&] { TimestampPart("timezone", ts, false); }), "0A000");
  EXPECT_EQ(DatePart("dow", ParseDate("2024-01-07")), 0);  // Sunday.
  EXPECT_EQ(DatePart("epoch", ParseDate("1970-01-02")), 86400);
  EXPECT_EQ(SqlStateOf([] { DatePart("hour", 0); }), "0A000");
  EXPECT_EQ(TimePart("second", ParseTime("10:11:12.25")), 12.25);
  EXPECT_EQ(IntervalPart("hour", Iv("1 day 25:00:00")), 25);
  EXPECT_EQ(IntervalPart("year", Iv("-1 year -2 mons")), -1);
  EXPECT_EQ(IntervalPart("month", Iv("-1 year -2 mons")), -2);
  EXPECT_EQ(IntervalPart("epoch", Iv("1 year")), 31557600);
  EXPECT_EQ(SqlStateOf([] { IntervalPart("bogus", {}); }), "22023");
}

TEST(TemporalTest, Constructors) {
  EXPECT_EQ(TsText(TimestampFromUnixSeconds(0)), "1970-01-01 00:00:00");
  EXPECT_EQ(TsText(TimestampFromUnixSeconds(1.5)), "1970-01-01 00:00:01.5");
  EXPECT_EQ(SqlStateOf([] { TimestampFromUnixSeconds(std::nan("")); }), "22008");
  EXPECT_EQ(FormatDate(MakeDate(2024, 2, 29)), "2024-02-29");
  EXPECT_EQ(SqlStateOf([] { MakeDate(2023, 2, 29); }), "22008");
  EXPECT_EQ(SqlStateOf([] { MakeDate(-44, 3, 15); }), "22008");
  EXPECT_EQ(TsText(MakeTimestamp(2024, 1, 2, 3, 4, 5.5)), "2024-01-02 03:04:05.5");
  EXPECT_EQ(FormatInterval(MakeInterval(1, 2, 1, 1, 1, 1, 1.5)), "1 year 2 mons 8 days 01:01:01.5");
}

TEST(TemporalTest, ValuesCastAndPrint) {
  Value date = CastValue(Value::String("2024-01-31"), TypeId::kVarchar, TypeId::kDate);
  EXPECT_EQ(date.ToText(TypeId::kDate), "2024-01-31");
  Value ts = CastValue(date, TypeId::kDate, TypeId::kTimestamp);
  EXPECT_EQ(ts.ToText(TypeId::kTimestamp), "2024-01-31 00:00:00");
  EXPECT_EQ(CastValue(ts, TypeId::kTimestamp, TypeId::kTimestampTz).ToText(TypeId::kTimestampTz),
            "2024-01-31 00:00:00+00");
  Value late =
      CastValue(Value::String("2024-01-31 13:14:15"), TypeId::kVarchar, TypeId::kTimestamp);
  EXPECT_EQ(CastValue(late, TypeId::kTimestamp, TypeId::kTime).ToText(TypeId::kTime), "13:14:15");
  EXPECT_EQ(CastValue(late, TypeId::kTimestamp, TypeId::kDate).ToText(TypeId::kDate), "2024-01-31");
  EXPECT_EQ(CastValue(late, TypeId::kTimestamp, TypeId::kVarchar).string_value(),
            "2024-01-31 13:14:15");
  EXPECT_TRUE(CanCast(TypeId::kDate, TypeId::kTimestampTz));
  EXPECT_FALSE(CanCast(TypeId::kDate, TypeId::kInt32));
  EXPECT_FALSE(CanCast(TypeId::kInterval, TypeId::kTimestamp));
  EXPECT_EQ(SqlStateOf([] { CastValue(Value::String("x"), TypeId::kVarchar, TypeId::kInterval); }),
            "22007");
  EXPECT_EQ(DataType(TypeId::kTimestampTz).Oid(), 1184);
  EXPECT_EQ(DataType(TypeId::kDate).TypeLength(), 4);
  EXPECT_EQ(DataTypeFromName("timestamp with time zone")->id, TypeId::kTimestampTz);
  EXPECT_EQ(DataType(TypeId::kTime).Name(), "time without time zone");
}

}  // namespace
}  // namespace stave::temporal
