#include "common/array_value.h"

#include <gtest/gtest.h>

#include "common/sql_error.h"

namespace stave::array {
namespace {

std::string SqlStateOf(std::string_view text, DataType element) {
  try {
    ParseText(text, element);
  } catch (const SqlError& error) {
    return error.sqlstate();
  }
  return "no error";
}

TEST(ArrayValueTest, RoundTripsEveryPhysicalType) {
  std::vector<Value> ints = {Value::Int(-5), Value::Null(), Value::Int(1LL << 40)};
  EXPECT_EQ(Decode(Encode(ints, TypeId::kInt64), TypeId::kInt64), ints);
  std::vector<Value> doubles = {Value::Double(-1.5), Value::Double(0)};
  EXPECT_EQ(Decode(Encode(doubles, TypeId::kFloat64), TypeId::kFloat64), doubles);
  std::vector<Value> strings = {Value::String(std::string("a\0b", 3)), Value::String(""),
                                Value::Null()};
  EXPECT_EQ(Decode(Encode(strings, TypeId::kVarchar), TypeId::kVarchar), strings);
  EXPECT_EQ(Length(Encode(strings, TypeId::kVarchar), TypeId::kVarchar), 3u);
  EXPECT_TRUE(Decode(Encode({}, TypeId::kInt32), TypeId::kInt32).empty());
}

TEST(ArrayValueTest, BytesOrderAsPostgresOrdersArrays) {
  auto ints = [](std::vector<Value> values) { return Encode(values, TypeId::kInt32); };
  // Element by element, a prefix first, NULL above every value.
  EXPECT_LT(ints({Value::Int(1), Value::Int(2)}), ints({Value::Int(1), Value::Int(3)}));
  EXPECT_LT(ints({Value::Int(1)}), ints({Value::Int(1), Value::Int(-9)}));
  EXPECT_LT(ints({Value::Int(-1)}), ints({Value::Int(0)}));
  EXPECT_LT(ints({Value::Int(5)}), ints({Value::Null()}));
  EXPECT_LT(ints({}), ints({Value::Int(-100)}));
  auto texts = [](std::vector<Value> values) { return Encode(values, TypeId::kVarchar); };
  EXPECT_LT(texts({Value::String("a")}), texts({Value::String("a"), Value::String("")}));
  EXPECT_LT(texts({Value::String("a")}), texts({Value::String("ab")}));
  EXPECT_LT(texts({Value::String("a"), Value::String("z")}), texts({Value::String("ab")}));
}

TEST(ArrayValueTest, TextInputAndOutput) {
  DataType text = TypeId::kVarchar;
  EXPECT_EQ(FormatText(ParseText(R"({a,"b c","",NULL,"NULL","x\"y",p\\q, z })", text), text),
            R"({a,"b c","",NULL,"NULL","x\"y","p\\q",z})");
  EXPECT_EQ(FormatText(ParseText("{}", text), text), "{}");
  DataType integer = TypeId::kInt32;
  EXPECT_EQ(FormatText(ParseText(" { 1 , -2,null } ", integer), integer), "{1,-2,NULL}");
  for (std::string_view bad : {"", "1,2", "{1,2", "{1,,2}", "{1} x", "{1,x}", "{\"1\"x}"}) {
    EXPECT_EQ(SqlStateOf(bad, integer), "22P02") << bad;
  }
  EXPECT_EQ(SqlStateOf("{99999999999}", integer), "22003");
  EXPECT_EQ(SqlStateOf("{{1},{2}}", integer), "0A000");
}

}  // namespace
}  // namespace stave::array
