#include "server/pgwire/copy_out.h"

#include <gtest/gtest.h>

namespace stave::server::pgwire {
namespace {

const std::vector<executor::ResultColumn> kColumns = {{"id", TypeId::kInt32},
                                                      {"na,me", TypeId::kVarchar}};

std::string Line(int id, const Value& name, const CopyFormat& format) {
  return CopyOutLine({Value::Int(id), name}, kColumns, format);
}

TEST(CopyOutTest, TextFormatEscapesAsPostgreSql) {
  CopyFormat text;
  EXPECT_EQ(Line(1, Value::String("plain"), text), "1\tplain\n");
  EXPECT_EQ(Line(2, Value::String("a\tb\nc\rd\\e"), text), "2\ta\\tb\\nc\\rd\\\\e\n");
  EXPECT_EQ(Line(3, Value::Null(), text), "3\t\\N\n");
  EXPECT_EQ(Line(4, Value::String("\\N"), text), "4\t\\\\N\n");
  text.delimiter = '|';
  text.null_string = "";
  EXPECT_EQ(Line(5, Value::String("x|y"), text), "5|x\\|y\n");
  EXPECT_EQ(Line(6, Value::Null(), text), "6|\n");
  EXPECT_EQ(CopyHeaderLine(kColumns, text), "id|na,me\n");
}

TEST(CopyOutTest, CsvQuotesAsPostgreSql) {
  CopyFormat csv;
  csv.csv = true;
  csv.delimiter = ',';
  csv.null_string = "";
  EXPECT_EQ(Line(1, Value::String("plain"), csv), "1,plain\n");
  EXPECT_EQ(Line(2, Value::String("a,b"), csv), "2,\"a,b\"\n");
  EXPECT_EQ(Line(3, Value::String("say \"hi\""), csv), "3,\"say \"\"hi\"\"\"\n");
  EXPECT_EQ(Line(4, Value::String("two\nlines"), csv), "4,\"two\nlines\"\n");
  EXPECT_EQ(Line(5, Value::String(""), csv), "5,\"\"\n");  // Not NULL.
  EXPECT_EQ(Line(6, Value::Null(), csv), "6,\n");
  EXPECT_EQ(CopyHeaderLine(kColumns, csv), "id,\"na,me\"\n");
  EXPECT_EQ(CopyOutLine({Value::String("\\.")}, {{"x", TypeId::kVarchar}}, csv), "\"\\.\"\n");
  csv.escape = '\\';
  EXPECT_EQ(Line(7, Value::String("a\"b\\c"), csv), "7,\"a\\\"b\\\\c\"\n");
}

}  // namespace
}  // namespace stave::server::pgwire
