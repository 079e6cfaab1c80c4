#include "common/jsonb.h"

#include <gtest/gtest.h>

#include "common/sql_error.h"

namespace stave::jsonb {
namespace {

std::string SqlStateOf(std::string_view text) {
  try {
    Normalize(text);
  } catch (const SqlError& error) {
    return error.sqlstate();
  }
  return "no error";
}

TEST(JsonbTest, NormalizesAsPostgresStoresJsonb) {
  EXPECT_EQ(Normalize(R"({"b":1,"a":2})"), R"({"a": 2, "b": 1})");
  // Keys sort by length first, then bytes; the last duplicate wins.
  EXPECT_EQ(Normalize(R"({"aaa":1,"b":2,"aa":3,"b":4})"), R"({"b": 4, "aa": 3, "aaa": 1})");
  EXPECT_EQ(Normalize(" [ 1 ,\n{} , [ ] , null,true ] "), "[1, {}, [], null, true]");
  EXPECT_EQ(Normalize(R"("a\"b\\c\/d\u00e9\ud83d\ude00\u0001")"),
            "\"a\\\"b\\\\c/d\xc3\xa9\xf0\x9f\x98\x80\\u0001\"");
}

TEST(JsonbTest, NumbersPrintAsNumeric) {
  EXPECT_EQ(Normalize("1e2"), "100");
  EXPECT_EQ(Normalize("1.50"), "1.50");
  EXPECT_EQ(Normalize("-0"), "0");
  EXPECT_EQ(Normalize("-0.0"), "0.0");
  EXPECT_EQ(Normalize("1.5e-3"), "0.0015");
  EXPECT_EQ(Normalize("100e-1"), "10.0");
  EXPECT_EQ(Normalize("-12.340"), "-12.340");
  EXPECT_EQ(Normalize("0.0001E+2"), "0.01");
}

TEST(JsonbTest, RefusesInvalidJson) {
  for (std::string_view bad : {"", "{", "[1,]", "{a:1}", "01", "1.", "-", "\"\\x\"", "nul", "[1] x",
                               "\"\x01\"", "\"\\ud800\""}) {
    EXPECT_EQ(SqlStateOf(bad), "22P02") << bad;
  }
  EXPECT_EQ(SqlStateOf("\"\\u0000\""), "22P05");
  EXPECT_EQ(SqlStateOf(std::string(2000, '[') + std::string(2000, ']')), "54001");
}

TEST(JsonbTest, Navigation) {
  std::string doc = Normalize(R"({"a": {"b": [10, "x", null]}, "s": "t"})");
  EXPECT_EQ(Field(doc, "a"), R"({"b": [10, "x", null]})");
  EXPECT_EQ(Field(doc, "zz"), std::nullopt);
  EXPECT_EQ(Element(Normalize("[1, 2, 3]"), -1), "3");
  EXPECT_EQ(Element(Normalize("[1, 2, 3]"), 3), std::nullopt);
  EXPECT_EQ(Element(doc, 0), std::nullopt);
  EXPECT_EQ(Path(doc, {"a", "b", "1"}), "\"x\"");
  EXPECT_EQ(Path(doc, {"a", "b", "x"}), std::nullopt);
  EXPECT_EQ(Path(doc, {"a", std::nullopt}), std::nullopt);
  EXPECT_EQ(AsText("\"x\\ny\""), "x\ny");
  EXPECT_EQ(AsText("null"), std::nullopt);
  EXPECT_EQ(AsText("[1, 2]"), "[1, 2]");
  EXPECT_EQ(TypeOf("-1"), "number");
  EXPECT_EQ(TypeOf("false"), "boolean");
  EXPECT_EQ(ArrayLength("[1, [2, 3]]"), 2);
  EXPECT_THROW(ArrayLength("{}"), SqlError);
}

TEST(JsonbTest, Containment) {
  EXPECT_TRUE(Contains(R"({"a": 1, "b": [1, 2]})", R"({"b": [2]})"));
  EXPECT_FALSE(Contains(R"({"a": 1})", R"({"a": 1, "b": 2})"));
  EXPECT_TRUE(Contains("[1, 2]", "1"));
  EXPECT_FALSE(Contains("[1, 2]", "[[1]]"));
  EXPECT_TRUE(Contains(R"({"a": 1.0})", R"({"a": 1})"));
  EXPECT_TRUE(Contains("[]", "[]"));
}

}  // namespace
}  // namespace stave::jsonb
