#include "common/bytea.h"

#include <gtest/gtest.h>

#include <functional>

#include "common/sql_error.h"

namespace stave::bytea {
namespace {

std::string SqlStateOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const SqlError& error) {
    return error.sqlstate();
  }
  return "no error";
}

TEST(ByteaTest, ParsesHexAndEscapeFormats) {
  EXPECT_EQ(Parse("\\xDEADbeef"), std::string("\xde\xad\xbe\xef"));
  EXPECT_EQ(Parse("\\x de ad"), std::string("\xde\xad"));
  EXPECT_EQ(Parse("\\x"), "");
  EXPECT_EQ(Parse("abc"), "abc");
  EXPECT_EQ(Parse("a\\\\b"), "a\\b");
  EXPECT_EQ(Parse("a\\000b\\377"), std::string("a\0b\xff", 4));
  EXPECT_EQ(SqlStateOf([] { Parse("\\xabc"); }), "22023");
  EXPECT_EQ(SqlStateOf([] { Parse("\\xzz"); }), "22023");
  EXPECT_EQ(SqlStateOf([] { Parse("a\\b"); }), "22P02");
  EXPECT_EQ(SqlStateOf([] { Parse("a\\4"); }), "22P02");
  EXPECT_EQ(SqlStateOf([] { Parse("\\"); }), "22P02");
}

TEST(ByteaTest, FormatsAsLowerCaseHex) {
  EXPECT_EQ(Format(std::string("\xde\xad\x00\x01", 4)), "\\xdead0001");
  EXPECT_EQ(Format(""), "\\x");
}

TEST(ByteaTest, EncodeAndDecodeRoundTrip) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (const char* format : {"hex", "base64", "escape"}) {
    for (size_t length : {0u, 1u, 2u, 3u, 4u, 57u, 58u, 256u}) {
      std::string bytes = all.substr(0, length);
      EXPECT_EQ(Decode(Encode(bytes, format), format), bytes) << format << " " << length;
    }
  }
  EXPECT_EQ(Encode("hello", "base64"), "aGVsbG8=");
  EXPECT_EQ(Encode(std::string("a\0\\\xff", 4), "escape"), "a\\000\\\\\\377");
  // PostgreSQL breaks base64 lines after 76 characters.
  EXPECT_EQ(Encode(std::string(58, 'x'), "base64").find('\n'), 76u);
  EXPECT_EQ(Decode("aGVs\nbG8=", "base64"), "hello");
  EXPECT_EQ(SqlStateOf([] { Decode("!!!!", "base64"); }), "22023");
  EXPECT_EQ(SqlStateOf([] { Decode("aGVsbG8", "base64"); }), "22023");
  EXPECT_EQ(SqlStateOf([] { Decode("abc", "hex"); }), "22023");
  EXPECT_EQ(SqlStateOf([] { Encode("a", "rot13"); }), "22023");
}

TEST(ByteaTest, Md5) {
  EXPECT_EQ(Md5Hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Md5Hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
}

}  // namespace
}  // namespace stave::bytea
