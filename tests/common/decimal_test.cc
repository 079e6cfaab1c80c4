#include "common/decimal.h"

#include <gtest/gtest.h>

#include <string>

#include "common/sql_error.h"
#include "common/value_cast.h"

namespace stave {
namespace {

using decimal::Format;
using decimal::Parse;

std::string Text(const Decimal& value) { return Format(value); }

std::string SqlStateOf(void (*body)()) {
  try {
    body();
  } catch (const SqlError& error) {
    return error.sqlstate();
  }
  return "none";
}

// Expected answers are PostgreSQL 15's.
TEST(DecimalTest, ParsesAndPrintsLikePostgres) {
  EXPECT_EQ(Text(Parse("1.50")), "1.50");
  EXPECT_EQ(Parse("1.50").scale, 2);
  EXPECT_EQ(Text(Parse("1e3")), "1000");
  EXPECT_EQ(Text(Parse("1.5e-3")), "0.0015");
  EXPECT_EQ(Text(Parse("1.500e1")), "15.00");
  EXPECT_EQ(Text(Parse(" -0.0 ")), "0.0");
  EXPECT_EQ(Text(Parse(".5")), "0.5");
  EXPECT_EQ(Text(Parse("+7.")), "7");
  EXPECT_EQ(Text(Parse("-123.456")), "-123.456");
  EXPECT_EQ(Text(Parse("0.000000000000000000000000000000000000000000001")),
            "0.000000000000000000000000000000000000000000001");
  EXPECT_EQ(Text(Parse("99999999999999999999999999999999999999")),
            "99999999999999999999999999999999999999");
  EXPECT_EQ(Text(Parse("NaN")), "NaN");
  EXPECT_EQ(Text(Parse("-infinity")), "-Infinity");
  EXPECT_EQ(Text(Parse("inf")), "Infinity");
  EXPECT_EQ(SqlStateOf([] { Parse("abc"); }), "22P02");
  EXPECT_EQ(SqlStateOf([] { Parse("1.2.3"); }), "22P02");
  EXPECT_EQ(SqlStateOf([] { Parse("1e"); }), "22P02");
  EXPECT_EQ(SqlStateOf([] { Parse(""); }), "22P02");
  // 39 digits and more: wide values.
  EXPECT_EQ(Text(Parse("-123456789012345678901234567890123456789.10")),
            "-123456789012345678901234567890123456789.10");
  EXPECT_TRUE(Parse("123456789012345678901234567890123456789").is_wide());
  EXPECT_FALSE(Parse("99999999999999999999999999999999999999").is_wide());
}

// Expected answers are PostgreSQL 15's.
TEST(DecimalTest, WideValuesReachPostgresLimits) {
  EXPECT_EQ(Text(Parse("1e131071")).size(), 131072u);
  EXPECT_EQ(SqlStateOf([] { Parse("1e131072"); }), "22003");
  EXPECT_EQ(SqlStateOf([] { Parse("1" + std::string(131072, '0')); }), "22003");
  EXPECT_EQ(Text(Parse("1e-16383")).size(), 16385u);
  EXPECT_EQ(SqlStateOf([] { Parse("1e-16384"); }), "22003");
  EXPECT_EQ(SqlStateOf([] { Parse("0." + std::string(17000, '0')); }), "22003");
  EXPECT_EQ(SqlStateOf([] { Parse("0e-20000"); }), "22003");
  EXPECT_EQ(SqlStateOf([] { Parse("1e99999999999999999999"); }), "22003");
  EXPECT_EQ(Text(Parse("0e200000")), "0");
  // A product's scale is the sum of the operands', rounded to 16383 beyond.
  EXPECT_EQ(Text(decimal::Multiply(Parse("1e-10000"), Parse("1e-10000"))).size(), 16385u);
  EXPECT_EQ(Text(decimal::Multiply(Parse("1e60000"), Parse("1e60000"))).size(), 120001u);
  EXPECT_EQ(SqlStateOf([] { decimal::Multiply(Parse("1e70000"), Parse("1e70000")); }), "22003");
  // Division and sqrt stop at 1000 digits after the point.
  EXPECT_EQ(Text(decimal::Divide(Parse("1"), Parse("3e-2000"))).size(), 3001u);
  EXPECT_EQ(Text(decimal::Sqrt(Parse("1e-3000"))).size(), 1002u);
  // round and trunc clamp their scale to what a numeric holds.
  EXPECT_EQ(Text(decimal::Round(Parse("1.5"), 20000)).size(), 16385u);
  EXPECT_EQ(Text(decimal::Trunc(Parse("1.5"), 20000)).size(), 16385u);
  EXPECT_EQ(Text(decimal::Round(Parse("5e5"), -131073)), "0");
  EXPECT_EQ(Text(decimal::Round(Parse("5e5"), -6)), "1000000");
}

TEST(DecimalTest, WideArithmeticLikePostgres) {
  EXPECT_EQ(Text(decimal::Divide(Parse("1e60"), Parse("7"))),
            "142857142857142857142857142857142857142857142857142857142857");
  EXPECT_EQ(Text(decimal::ApplyTypmod(Parse("1e60"), 70, 2)),
            "1000000000000000000000000000000000000000000000000000000000000.00");
  EXPECT_EQ(SqlStateOf([] { decimal::ApplyTypmod(Parse("1e100"), 10, 2); }), "22003");
  EXPECT_EQ(Text(decimal::Modulo(Parse("12345678901234567890123456789012345678901234567890"),
                                 Parse("7"))),
            "1");
  EXPECT_EQ(Text(decimal::Modulo(decimal::Subtract(Parse("-1e60"), Parse("7")), Parse("1e59"))),
            "-7");
  EXPECT_EQ(Text(decimal::Floor(Parse("-1234567890123456789012345678901234567890.5"))),
            "-1234567890123456789012345678901234567891");
  EXPECT_EQ(Text(decimal::Ceil(decimal::Add(Parse("1e50"), Parse("0.1")))),
            "100000000000000000000000000000000000000000000000001");
  EXPECT_EQ(Text(decimal::Trunc(decimal::Add(Parse("1e50"), Parse("0.56789")), 2)),
            "100000000000000000000000000000000000000000000000000.56");
  EXPECT_EQ(Text(decimal::Round(Parse("123456789012345678901234567890123456789012345678.55"), 1)),
            "123456789012345678901234567890123456789012345678.6");
  EXPECT_EQ(Text(decimal::Sqrt(Parse("1e100"))),
            "100000000000000000000000000000000000000000000000000");
  EXPECT_EQ(Text(decimal::Sqrt(decimal::Multiply(Parse("2"), Parse("1e100")))),
            "141421356237309504880168872420969807856967187537695");
  EXPECT_EQ(Text(decimal::Divide(Parse("1e60"), Parse("1e-60"))),
            "1" + std::string(120, '0') + "." + std::string(60, '0'));
  EXPECT_EQ(decimal::Compare(Parse("1" + std::string(100, '0')), Parse("1e100")), 0);
  EXPECT_LT(decimal::Compare(Parse("1e60"), Parse("1.5e60")), 0);
  EXPECT_GT(decimal::Compare(Parse("-1e38"), Parse("-1e60")), 0);
  EXPECT_EQ(SqlStateOf([] { decimal::ToInt64(Parse("1e50"), "bigint"); }), "22003");
  EXPECT_EQ(decimal::ToInt64(Parse("1" + std::string(45, '0') + "e-45"), "bigint"), 1);
  EXPECT_DOUBLE_EQ(decimal::ToDouble(Parse("1e50")), 1e50);
  EXPECT_EQ(SqlStateOf([] { decimal::ToDouble(Parse("1e400")); }), "22003");
  EXPECT_EQ(SqlStateOf([] { decimal::ToDouble(Parse("1e-400")); }), "22003");
  // A result back below 38 digits is narrow again: one value, one representation.
  Decimal back = decimal::Subtract(
      Parse("1e60"), Parse("999999999999999999999999999999999999999999999999999999999990"));
  EXPECT_FALSE(back.is_wide());
  EXPECT_EQ(back, Parse("10"));
  EXPECT_EQ(decimal::Normalize(Parse("1." + std::string(50, '0'))), Parse("1"));
}

// Expected answers are PostgreSQL 15's; tests/sql/types/numeric_math.slt has many more.
TEST(DecimalTest, ExpLnLogPowerLikePostgres) {
  EXPECT_EQ(Text(decimal::Exp(Parse("1"))), "2.7182818284590452");
  EXPECT_EQ(Text(decimal::Exp(Parse("100"))), "26881171418161354484126255515800135873611119");
  EXPECT_EQ(Text(decimal::Ln(Parse("1.0001"))), "0.00009999500033330834");
  EXPECT_EQ(Text(decimal::Log(Parse("10"), Parse("1e-10"))), "-10.000000000000000");
  EXPECT_EQ(Text(decimal::Log(Parse("2.5"), Parse("100"))), "5.0258831894641201");
  EXPECT_EQ(Text(decimal::Power(Parse("2"), Parse("3.5"))), "11.313708498984760");
  EXPECT_EQ(Text(decimal::Power(Parse("12.34"), Parse("5"))), "286138.1721051424000000");
  EXPECT_EQ(Text(decimal::Power(Parse("-2.5"), Parse("-3"))), "-0.0640000000000000");
  EXPECT_EQ(SqlStateOf([] { decimal::Power(Parse("-2"), Parse("0.5")); }), "2201F");
  EXPECT_EQ(SqlStateOf([] { decimal::Power(Parse("0"), Parse("-1")); }), "2201F");
  EXPECT_EQ(SqlStateOf([] { decimal::Ln(Parse("0")); }), "2201E");
  EXPECT_EQ(SqlStateOf([] { decimal::Log(Parse("1"), Parse("2")); }), "22012");
  EXPECT_EQ(SqlStateOf([] { decimal::Exp(Parse("6000")); }), "22003");
}

TEST(DecimalTest, ArithmeticScales) {
  EXPECT_EQ(Text(decimal::Add(Parse("1.5"), Parse("2.25"))), "3.75");
  EXPECT_EQ(Text(decimal::Subtract(Parse("1.50"), Parse("2"))), "-0.50");
  EXPECT_EQ(Text(decimal::Multiply(Parse("1.5"), Parse("2.25"))), "3.375");
  EXPECT_EQ(Text(decimal::Multiply(Parse("-0.10"), Parse("3"))), "-0.30");
  EXPECT_EQ(Text(decimal::Modulo(Parse("5.5"), Parse("2"))), "1.5");
  EXPECT_EQ(Text(decimal::Modulo(Parse("-5.5"), Parse("2"))), "-1.5");
  EXPECT_EQ(Text(decimal::Modulo(Parse("10"), Parse("0.3"))), "0.1");
}

TEST(DecimalTest, DivisionFollowsSelectDivScale) {
  auto divide = [](const char* a, const char* b) {
    return Text(decimal::Divide(Parse(a), Parse(b)));
  };
  EXPECT_EQ(divide("1", "3"), "0.33333333333333333333");
  EXPECT_EQ(divide("2", "3"), "0.66666666666666666667");
  EXPECT_EQ(divide("-2", "3"), "-0.66666666666666666667");
  EXPECT_EQ(divide("10", "4"), "2.5000000000000000");
  EXPECT_EQ(divide("100", "3"), "33.3333333333333333");
  EXPECT_EQ(divide("1", "7"), "0.14285714285714285714");
  EXPECT_EQ(divide("1.0", "3"), "0.33333333333333333333");
  EXPECT_EQ(divide("12345.678", "0.001"), "12345678.000000000000");
  EXPECT_EQ(divide("7.50", "2.5"), "3.0000000000000000");
  EXPECT_EQ(divide("123456789012345678", "10"), "12345678901234568");
  // A divisor of 38 digits takes the digit-at-a-time path.
  EXPECT_EQ(divide("1", "99999999999999999999999999999999999999"),
            "0.00000000000000000000000000000000000001000000000000000000");
  EXPECT_EQ(SqlStateOf([] { decimal::Divide(Parse("1"), Parse("0.00")); }), "22012");
  EXPECT_EQ(SqlStateOf([] { decimal::Modulo(Parse("1"), Parse("0")); }), "22012");
}

TEST(DecimalTest, CrossingThirtyEightDigitsIsExact) {
  EXPECT_EQ(Text(decimal::Multiply(Parse("10000000000000000000000000000000000000"), Parse("100"))),
            "1000000000000000000000000000000000000000");
  EXPECT_EQ(Text(decimal::Add(Parse("99999999999999999999999999999999999999"), Parse("1"))),
            "100000000000000000000000000000000000000");
  EXPECT_EQ(Text(decimal::Multiply(Parse("-99999999999999999999999999999999999999"),
                                   Parse("99999999999999999999999999999999999999.9"))),
            "-9999999999999999999999999999999999999890000000000000000000000000000000000000.1");
}

TEST(DecimalTest, RoundingIsHalfAwayFromZero) {
  EXPECT_EQ(Text(decimal::Round(Parse("2.5"), 0)), "3");
  EXPECT_EQ(Text(decimal::Round(Parse("-2.5"), 0)), "-3");
  EXPECT_EQ(Text(decimal::Round(Parse("1.2345"), 2)), "1.23");
  EXPECT_EQ(Text(decimal::Round(Parse("1.235"), 2)), "1.24");
  EXPECT_EQ(Text(decimal::Round(Parse("1234.5"), -2)), "1200");
  EXPECT_EQ(Text(decimal::Round(Parse("1250"), -2)), "1300");
  EXPECT_EQ(Text(decimal::Round(Parse("1.5"), 3)), "1.500");
  EXPECT_EQ(Text(decimal::Round(Parse("0.5"), -5)), "0");
  EXPECT_EQ(Text(decimal::Trunc(Parse("-1.99"), 1)), "-1.9");
  EXPECT_EQ(Text(decimal::Trunc(Parse("1999"), -3)), "1000");
  EXPECT_EQ(Text(decimal::Floor(Parse("-1.5"))), "-2");
  EXPECT_EQ(Text(decimal::Floor(Parse("1.5"))), "1");
  EXPECT_EQ(Text(decimal::Ceil(Parse("-1.5"))), "-1");
  EXPECT_EQ(Text(decimal::Ceil(Parse("1.1"))), "2");
  EXPECT_EQ(Text(decimal::Ceil(Parse("-0.5"))), "0");
  EXPECT_EQ(Text(decimal::Sign(Parse("-0.5"))), "-1");
  EXPECT_EQ(Text(decimal::Abs(Parse("-0.50"))), "0.50");
}

TEST(DecimalTest, Typmod) {
  EXPECT_EQ(Text(decimal::ApplyTypmod(Parse("123.456"), 5, 2)), "123.46");
  EXPECT_EQ(Text(decimal::ApplyTypmod(Parse("1"), 5, 2)), "1.00");
  EXPECT_EQ(Text(decimal::ApplyTypmod(Parse("0.005"), 3, 2)), "0.01");
  EXPECT_EQ(Text(decimal::ApplyTypmod(Parse("12345"), 3, -2)), "12300");
  EXPECT_EQ(Text(decimal::ApplyTypmod(Parse("NaN"), 3, 1)), "NaN");
  EXPECT_EQ(SqlStateOf([] { decimal::ApplyTypmod(Parse("999.995"), 5, 2); }), "22003");
  EXPECT_EQ(SqlStateOf([] { decimal::ApplyTypmod(Parse("Infinity"), 5, 2); }), "22003");
  try {
    decimal::ApplyTypmod(Parse("1000"), 5, 2);
    FAIL();
  } catch (const SqlError& error) {
    EXPECT_STREQ(error.what(), "numeric field overflow");
    EXPECT_EQ(error.detail(),
              "A field with precision 5, scale 2 must round to an absolute value less than 10^3.");
  }
}

TEST(DecimalTest, ComparesByValue) {
  EXPECT_EQ(decimal::Compare(Parse("1.10"), Parse("1.1")), 0);
  EXPECT_LT(decimal::Compare(Parse("-2"), Parse("-1.5")), 0);
  EXPECT_GT(decimal::Compare(Parse("0.001"), Parse("0")), 0);
  EXPECT_GT(decimal::Compare(Parse("10000000000000000000000000000000000000"),
                             Parse("0.0000000000000000000000000000000000001")),
            0);
  EXPECT_GT(decimal::Compare(Parse("NaN"), Parse("Infinity")), 0);
  EXPECT_LT(decimal::Compare(Parse("-Infinity"), Parse("-99999")), 0);
  EXPECT_EQ(decimal::Compare(Parse("NaN"), Parse("NaN")), 0);
  EXPECT_EQ(decimal::Normalize(Parse("1.100")), Parse("1.1"));
  EXPECT_EQ(decimal::Normalize(Parse("0.00")), Parse("0"));
}

TEST(DecimalTest, Conversions) {
  EXPECT_EQ(Text(decimal::FromDouble(0.1, 15)), "0.1");
  EXPECT_EQ(Text(decimal::FromDouble(1.0 / 3, 15)), "0.333333333333333");
  EXPECT_EQ(Text(decimal::FromDouble(1e20, 15)), "100000000000000000000");
  EXPECT_DOUBLE_EQ(decimal::ToDouble(Parse("0.1")), 0.1);
  EXPECT_DOUBLE_EQ(decimal::ToDouble(Parse("12345678901234567890.5")), 12345678901234567890.5);
  EXPECT_EQ(decimal::ToInt64(Parse("2.5"), "bigint"), 3);
  EXPECT_EQ(decimal::ToInt64(Parse("-2.5"), "bigint"), -3);
  EXPECT_EQ(SqlStateOf([] { decimal::ToInt64(Parse("1e19"), "bigint"); }), "22003");
  EXPECT_EQ(SqlStateOf([] { decimal::ToInt64(Parse("NaN"), "bigint"); }), "0A000");
  // Casts apply the target's precision and scale.
  Value cast = CastValue(Value::String("3.14159"), TypeId::kVarchar, DataType::Numeric(4, 2));
  EXPECT_EQ(cast.ToText(TypeId::kNumeric), "3.14");
  EXPECT_EQ(CastValue(Value::Numeric(Parse("2.5")), TypeId::kNumeric, TypeId::kInt32).int_value(),
            3);
  EXPECT_EQ(DataType::Numeric(10, 2).Typmod(), (10 << 16 | 2) + 4);
  EXPECT_EQ(DataType(TypeId::kNumeric).Typmod(), -1);
}

TEST(DecimalTest, ValueHoldsNumericsInPlace) {
  // The fast path must not allocate: a narrow Decimal is a 32-byte value held in place.
  static_assert(sizeof(Decimal) == 32);
  EXPECT_FALSE(Parse("1.10").is_wide());
  Value a = Value::Numeric(Parse("1.10"));
  Value b = Value::Numeric(Parse("1.1"));
  EXPECT_EQ(CompareValues(a, b), 0);
  EXPECT_FALSE(a == b);  // The representation differs (the scale prints).
  EXPECT_EQ(a.ToText(TypeId::kNumeric), "1.10");
}

}  // namespace
}  // namespace stave
