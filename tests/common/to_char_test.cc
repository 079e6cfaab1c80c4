#include "common/to_char.h"

#include <gtest/gtest.h>

#include "common/sql_error.h"

namespace stave::to_char {
namespace {

// Expected texts are PostgreSQL 15's answers to the same calls.
std::string Timestamp(std::string_view text, std::string_view pattern) {
  return DateTimeFormat(pattern).FormatTimestamp(temporal::ParseTimestamp(text, false), false);
}

std::string Number(std::string_view value, std::string_view pattern) {
  return FormatNumeric(NumberFormat(pattern), decimal::Parse(value));
}

TEST(ToCharTest, DateTimeFields) {
  EXPECT_EQ(Timestamp("2024-03-05 17:08:09.123456", "YYYY-MM-DD HH24:MI:SS.MS US"),
            "2024-03-05 17:08:09.123 123456");
  EXPECT_EQ(Timestamp("2024-03-05 00:08:09", "HH:mm"), "12:03");  // mm is the month.
  EXPECT_EQ(Timestamp("2024-03-05 17:08:09", "HH12 PM a.m."), "05 PM p.m.");
  EXPECT_EQ(Timestamp("2024-03-05 07:08:09", "Month|FMMonth|Dy|day"),
            "March    |March|Tue|tuesday  ");
  EXPECT_EQ(Timestamp("2021-01-03 07:08:09", "IYYY-IW-ID YYYY DDD"), "2020-53-7 2021 003");
  EXPECT_EQ(Timestamp("2024-03-22 07:08:09", "FMDDth \"of\" Mon"), "22nd of Mar");
  EXPECT_EQ(Timestamp("2024-03-11 07:08:09", "FMDDTH"), "11TH");
}

TEST(ToCharTest, Intervals) {
  DateTimeFormat format("HH24:MI:SS DD");
  EXPECT_EQ(format.FormatInterval(temporal::ParseInterval("2 days 27:15:00")), "27:15:00 02");
  EXPECT_EQ(DateTimeFormat("HH24:MI").FormatInterval(temporal::ParseInterval("-3 hours")),
            "-03:00");
  EXPECT_EQ(DateTimeFormat("HH AM").FormatInterval(temporal::ParseInterval("15 hours")), "03 PM");
  try {
    DateTimeFormat("Month").FormatInterval(temporal::ParseInterval("3 months"));
    FAIL() << "a month name of an interval";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.sqlstate(), "22007");
  }
}

TEST(ToCharTest, Numbers) {
  EXPECT_EQ(Number("0.5", "9.9"), "  .5");
  EXPECT_EQ(Number("-0.5", "FM9.9"), "-.5");
  EXPECT_EQ(Number("12.345", "99.99"), " 12.35");
  EXPECT_EQ(Number("12.3", "FM999.0099"), "12.30");
  EXPECT_EQ(Number("-12", "999PR"), " <12>");
  EXPECT_EQ(Number("-12", "999S"), " 12-");
  EXPECT_EQ(Number("1234567", "9G999G999"), " 1,234,567");
  EXPECT_EQ(Number("-999.99", "99.9"), "-##.#");
  EXPECT_EQ(Number("-5", "0009"), "-0005");
  EXPECT_EQ(Number("0", "FM9.99"), "0.");
  EXPECT_EQ(FormatInteger(NumberFormat("9,999"), -123), "  -123");
  EXPECT_EQ(FormatFloat(NumberFormat("9.99999999999999999999"), 0.1, 15), "  .10000000000000");
  try {
    NumberFormat("9.9.9");
    FAIL() << "two decimal points";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.sqlstate(), "42601");
  }
}

}  // namespace
}  // namespace stave::to_char
