#include "server/pgwire/message_writer.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/sql_error.h"
#include "tests/server/wire_transcript.h"

namespace stave::server::pgwire {
namespace {

using testing::BackendMessage;
using testing::DataRowValues;
using testing::ErrorField;
using testing::ParseBackendMessages;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int byte : bytes) out.push_back(static_cast<char>(byte));
  return out;
}

TEST(MessageWriterTest, AuthenticationOk) {
  MessageWriter writer;
  writer.WriteAuthenticationOk();
  EXPECT_EQ(writer.data(), Bytes({'R', 0, 0, 0, 8, 0, 0, 0, 0}));
}

TEST(MessageWriterTest, ParameterStatus) {
  MessageWriter writer;
  writer.WriteParameterStatus("TimeZone", "Etc/UTC");
  // As captured from PostgreSQL 15: "B S len=21 TimeZone|Etc/UTC|".
  EXPECT_EQ(writer.data(), std::string("S\0\0\0\x15TimeZone\0Etc/UTC\0", 22));
}

TEST(MessageWriterTest, BackendKeyDataAndReadyForQuery) {
  MessageWriter writer;
  writer.WriteBackendKeyData(0x01020304, -1);
  writer.WriteReadyForQuery('T');
  EXPECT_EQ(writer.data(), Bytes({'K', 0, 0, 0, 12, 1, 2, 3, 4, 0xff, 0xff, 0xff, 0xff,  //
                                  'Z', 0, 0, 0, 5, 'T'}));
}

TEST(MessageWriterTest, RowDescriptionMatchesPostgres) {
  MessageWriter writer;
  writer.WriteRowDescription({{"?column?", TypeId::kInt32}});
  // "B T len=33 |.?column?||||||||||.|.....||": int4 (OID 23), typlen 4, typmod -1, text.
  std::string expected = Bytes({'T', 0, 0, 0, 33, 0, 1}) + std::string("?column?\0", 9) +
                         Bytes({0, 0, 0, 0, 0, 0, 0, 0, 0, 23, 0, 4, 0xff, 0xff, 0xff, 0xff, 0, 0});
  EXPECT_EQ(writer.data(), expected);
}

TEST(MessageWriterTest, RowDescriptionOfVarcharHasVariableLength) {
  MessageWriter writer;
  writer.WriteRowDescription({{"s", TypeId::kVarchar}});
  std::string expected = Bytes({'T', 0, 0, 0,    26,   0,    1,    's',  0,    0,    0,    0, 0, 0,
                                0,   0, 0, 0x04, 0x13, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0});
  EXPECT_EQ(writer.data(), expected);
}

TEST(MessageWriterTest, RowDescriptionOfNumericCarriesItsTypmod) {
  MessageWriter writer;
  writer.WriteRowDescription({{"n", DataType::Numeric(10, 2)}});
  // numeric (OID 1700), typlen -1, typmod ((10 << 16) | 2) + 4 as PostgreSQL sends it.
  std::string expected = Bytes({'T', 0, 0, 0,    26,   0,    1,    'n',  0,    0,    0,    0, 0, 0,
                                0,   0, 0, 0x06, 0xA4, 0xff, 0xff, 0x00, 0x0A, 0x00, 0x06, 0, 0});
  EXPECT_EQ(writer.data(), expected);
}

TEST(MessageWriterTest, DataRowUsesTextFormatAndMinusOneForNull) {
  MessageWriter writer;
  writer.WriteDataRow({Value::Int(42), Value::Null(), Value::String("x"), Value::Boolean(false),
                       Value::Double(0.1)},
                      {{"a", TypeId::kInt32},
                       {"b", TypeId::kInt64},
                       {"c", TypeId::kVarchar},
                       {"d", TypeId::kBoolean},
                       {"e", TypeId::kFloat64}});
  std::string expected = Bytes({'D', 0, 0, 0, 33, 0, 5}) + Bytes({0, 0, 0, 2}) + "42" +
                         Bytes({0xff, 0xff, 0xff, 0xff}) + Bytes({0, 0, 0, 1}) + "x" +
                         Bytes({0, 0, 0, 1}) + "f" + Bytes({0, 0, 0, 3}) + "0.1";
  EXPECT_EQ(writer.data(), expected);
}

TEST(MessageWriterTest, DataRowMayCarryNulBytes) {
  MessageWriter writer;
  writer.WriteDataRow({Value::String(std::string("a\0b", 3))}, {{"s", TypeId::kVarchar}});
  auto messages = ParseBackendMessages(writer.data());
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(DataRowValues(messages[0])[0], std::string("a\0b", 3));
}

TEST(MessageWriterTest, FailedDataRowLeavesBufferUnchanged) {
  MessageWriter writer;
  writer.WriteCommandComplete("SELECT 0");
  std::string before = writer.data();
  // The second value holds a string but its column says bigint: ToText throws.
  EXPECT_ANY_THROW(writer.WriteDataRow({Value::Int(1), Value::String("oops")},
                                       {{"a", TypeId::kInt64}, {"b", TypeId::kInt64}}));
  EXPECT_EQ(writer.data(), before);
  EXPECT_THROW(writer.WriteDataRow({Value::Int(1)}, {}), std::invalid_argument);
  EXPECT_EQ(writer.data(), before);
}

TEST(MessageWriterTest, CommandCompleteAndEmptyQuery) {
  MessageWriter writer;
  writer.WriteCommandComplete("SELECT 1");
  writer.WriteEmptyQueryResponse();
  EXPECT_EQ(writer.data(), std::string("C\0\0\0\x0dSELECT 1\0I\0\0\0\x04", 19));
}

TEST(MessageWriterTest, CStringsAreCutAtEmbeddedNul) {
  MessageWriter writer;
  writer.WriteCommandComplete(std::string_view("SET\0junk", 8));
  EXPECT_EQ(writer.data(), std::string("C\0\0\0\x08SET\0", 9));
}

TEST(MessageWriterTest, ErrorResponseFromSqlError) {
  SqlError error(sqlstate::kSyntaxError, "syntax error at or near \"x\"", 3);
  error.WithDetail("some detail").WithHint("some hint");
  MessageWriter writer;
  writer.WriteErrorResponse(ErrorFields::FromSqlError(error));
  auto messages = ParseBackendMessages(writer.data());
  ASSERT_EQ(messages.size(), 1u);
  const BackendMessage& message = messages[0];
  EXPECT_EQ(message.type, 'E');
  EXPECT_EQ(ErrorField(message, 'S'), "ERROR");
  EXPECT_EQ(ErrorField(message, 'V'), "ERROR");
  EXPECT_EQ(ErrorField(message, 'C'), "42601");
  EXPECT_EQ(ErrorField(message, 'M'), "syntax error at or near \"x\"");
  EXPECT_EQ(ErrorField(message, 'D'), "some detail");
  EXPECT_EQ(ErrorField(message, 'H'), "some hint");
  EXPECT_EQ(ErrorField(message, 'P'), "3");
  EXPECT_EQ(message.body.back(), '\0');
}

TEST(MessageWriterTest, ErrorResponseOmitsEmptyOptionalFields) {
  MessageWriter writer;
  ErrorFields fields;
  fields.sqlstate = "22012";
  fields.message = "division by zero";
  writer.WriteErrorResponse(fields);
  EXPECT_EQ(writer.data(),
            std::string("E\0\0\0\x2cSERROR\0VERROR\0C22012\0Mdivision by zero\0\0", 45));
}

TEST(MessageWriterTest, NoticeResponse) {
  MessageWriter writer;
  ErrorFields fields;
  fields.severity = "NOTICE";
  fields.sqlstate = "00000";
  fields.message = "hello";
  writer.WriteNoticeResponse(fields);
  auto messages = ParseBackendMessages(writer.data());
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].type, 'N');
  EXPECT_EQ(ErrorField(messages[0], 'S'), "NOTICE");
}

TEST(MessageWriterTest, NegotiateProtocolVersion) {
  MessageWriter writer;
  writer.WriteNegotiateProtocolVersion(0, {"_pq_.x"});
  EXPECT_EQ(writer.data(),
            Bytes({'v', 0, 0, 0, 19, 0, 0, 0, 0, 0, 0, 0, 1}) + std::string("_pq_.x\0", 7));
}

TEST(MessageWriterTest, ClearForgetsMessages) {
  MessageWriter writer;
  writer.WriteReadyForQuery('I');
  EXPECT_FALSE(writer.empty());
  writer.Clear();
  EXPECT_TRUE(writer.empty());
  EXPECT_EQ(writer.size(), 0u);
}

}  // namespace
}  // namespace stave::server::pgwire
