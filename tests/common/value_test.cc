#include "common/value.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/sql_error.h"
#include "common/value_cast.h"

namespace stave {
namespace {

TEST(FormatDoubleTest, MatchesPostgresOutput) {
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(FormatDouble(1.5), "1.5");
  EXPECT_EQ(FormatDouble(100), "100");
  EXPECT_EQ(FormatDouble(1000000), "1000000");
  EXPECT_EQ(FormatDouble(123456789012345), "123456789012345");
  EXPECT_EQ(FormatDouble(1e15), "1e+15");
  EXPECT_EQ(FormatDouble(1e20), "1e+20");
  EXPECT_EQ(FormatDouble(1.25e-5), "1.25e-05");
  EXPECT_EQ(FormatDouble(0.0001), "0.0001");
  EXPECT_EQ(FormatDouble(-2.5), "-2.5");
  EXPECT_EQ(FormatDouble(0), "0");
  EXPECT_EQ(FormatDouble(std::nan("")), "NaN");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_EQ(FormatFloat(0.1f), "0.1");
}

TEST(ValueTest, TextOutput) {
  EXPECT_EQ(Value::Boolean(true).ToText(TypeId::kBoolean), "t");
  EXPECT_EQ(Value::Int(-42).ToText(TypeId::kInt64), "-42");
  EXPECT_EQ(Value::String("x").ToText(TypeId::kVarchar), "x");
}

TEST(CastValueTest, ParsesTextLikePostgres) {
  EXPECT_EQ(CastValue(Value::String(" 42 "), TypeId::kVarchar, TypeId::kInt32).int_value(), 42);
  EXPECT_EQ(CastValue(Value::String("on"), TypeId::kVarchar, TypeId::kBoolean).int_value(), 1);
  EXPECT_DOUBLE_EQ(
      CastValue(Value::String("1.5"), TypeId::kVarchar, TypeId::kFloat64).double_value(), 1.5);
  try {
    CastValue(Value::String("1.5"), TypeId::kVarchar, TypeId::kInt32);
    FAIL();
  } catch (const SqlError& error) {
    EXPECT_EQ(error.sqlstate(), "22P02");
    EXPECT_STREQ(error.what(), "invalid input syntax for type integer: \"1.5\"");
  }
}

TEST(CastValueTest, RangeAndRounding) {
  EXPECT_EQ(CastValue(Value::Double(2.5), TypeId::kFloat64, TypeId::kInt32).int_value(), 2);
  EXPECT_EQ(CastValue(Value::Double(3.5), TypeId::kFloat64, TypeId::kInt32).int_value(), 4);
  EXPECT_THROW(CastValue(Value::Int(70000), TypeId::kInt64, TypeId::kInt16), SqlError);
  EXPECT_THROW(CastValue(Value::String("99999999999999999999"), TypeId::kVarchar, TypeId::kInt64),
               SqlError);
  EXPECT_TRUE(CastValue(Value::Null(), TypeId::kVarchar, TypeId::kInt32).is_null());
  EXPECT_EQ(CastValue(Value::Int(7), TypeId::kInt32, TypeId::kVarchar).string_value(), "7");
}

}  // namespace
}  // namespace stave
