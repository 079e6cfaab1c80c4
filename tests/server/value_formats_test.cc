#include "server/pgwire/value_formats.h"

#include <gtest/gtest.h>

#include <string>

#include "common/decimal.h"
#include "common/sql_error.h"

namespace stave::server::pgwire {
namespace {

// PostgreSQL's numeric_send of `text`, as bytes: ndigits, weight, sign, dscale, digits.
std::string Bytes(std::initializer_list<int> words) {
  std::string out;
  for (int word : words) {
    out.push_back(static_cast<char>((word >> 8) & 0xff));
    out.push_back(static_cast<char>(word & 0xff));
  }
  return out;
}

std::string Send(std::string_view text) {
  return EncodeBinaryValue(Value::Numeric(decimal::Parse(text)), TypeId::kNumeric);
}

std::string Receive(const std::string& bytes, DataType type = TypeId::kNumeric) {
  return DecodeParameter(bytes, kBinaryFormat, type, 1).ToText(type);
}

TEST(ValueFormatsTest, NumericBinaryIsPostgresqlsNumericSend) {
  // The expected bytes are what PostgreSQL 15's numeric_send gives for the same values.
  EXPECT_EQ(Send("1.50"), Bytes({2, 0, 0x0000, 2, 1, 5000}));
  EXPECT_EQ(Send("-12345.678"), Bytes({3, 1, 0x4000, 3, 1, 2345, 6780}));
  EXPECT_EQ(Send("0"), Bytes({0, 0, 0x0000, 0}));
  EXPECT_EQ(Send("0.00"), Bytes({0, 0, 0x0000, 2}));
  EXPECT_EQ(Send("10000.0001"), Bytes({3, 1, 0x0000, 4, 1, 0, 1}));
  EXPECT_EQ(Send("0.0012"), Bytes({1, -1, 0x0000, 4, 12}));
  EXPECT_EQ(Send("100000000"), Bytes({1, 2, 0x0000, 0, 1}));
  EXPECT_EQ(Send("NaN"), Bytes({0, 0, 0xC000, 0}));
  EXPECT_EQ(Send("-Infinity"), Bytes({0, 0, 0xF000, 0}));
  EXPECT_EQ(Send("1e48"), Bytes({1, 12, 0x0000, 0, 1}));
  EXPECT_EQ(
      Send("-123456789012345678901234567890123456789.5"),
      Bytes({11, 9, 0x4000, 1, 123, 4567, 8901, 2345, 6789, 123, 4567, 8901, 2345, 6789, 5000}));
}

TEST(ValueFormatsTest, NumericBinaryRoundTrips) {
  for (std::string_view text :
       {"1.50", "-12345.678", "0", "0.00", "10000.0001", "0.0012", "100000000", "-0.000000001",
        "NaN", "Infinity", "-Infinity", "123456789012345678901234567890.12345678",
        "1000000000000000000000000000000000000000000000000",
        "-0.00000000000000000000000000000000000000000000000012345678901234567890123456789"}) {
    EXPECT_EQ(Receive(Send(text)), text);
  }
  // A parameter takes the scale of its declared type.
  EXPECT_EQ(Receive(Send("2.345"), DataType::Numeric(10, 2)), "2.35");
}

TEST(ValueFormatsTest, MalformedNumericBinaryIsRefused) {
  auto sqlstate_of = [](const std::string& bytes) {
    try {
      Receive(bytes);
    } catch (const SqlError& error) {
      return std::string(error.sqlstate());
    }
    return std::string("none");
  };
  EXPECT_EQ(sqlstate_of(Bytes({2, 0, 0x0000, 2, 1})), "22P03");      // A digit missing.
  EXPECT_EQ(sqlstate_of(Bytes({1, 0, 0x0000, 0, 10000})), "22P03");  // Not base 10000.
  EXPECT_EQ(sqlstate_of(Bytes({1, 0, 0x1234, 0, 1})), "22P03");      // No such sign.
  EXPECT_EQ(sqlstate_of(Bytes({1, 0, 0x0000})), "22P03");            // Short header.
  EXPECT_EQ(sqlstate_of(Bytes({0, 0, 0x0000, 16384})), "22003");     // Scale beyond 16383.
}

}  // namespace
}  // namespace stave::server::pgwire
