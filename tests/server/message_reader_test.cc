#include "server/pgwire/message_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "server/pgwire/protocol.h"
#include "tests/server/wire_transcript.h"

namespace stave::server::pgwire {
namespace {

using testing::AppendInt32;

// The body of a startup packet: `bytes` without the length word.
std::string BodyOf(const std::string& packet) { return packet.substr(4); }

TEST(MessageReaderTest, ReadsBigEndianIntegersAndStrings) {
  std::string body(
      "\x01\x02\xff\xfe\x00\x00\x00\x2a"
      "abc\0tail",
      16);
  MessageReader reader(body);
  EXPECT_EQ(reader.ReadInt16(), 0x0102);
  EXPECT_EQ(reader.ReadInt16(), -2);
  EXPECT_EQ(reader.ReadInt32(), 42);
  EXPECT_EQ(reader.ReadCString(), "abc");
  EXPECT_EQ(reader.remaining(), 4u);
  EXPECT_THROW(reader.ExpectEnd(), ProtocolError);
  EXPECT_EQ(reader.ReadBytes(4), "tail");
  EXPECT_TRUE(reader.AtEnd());
  reader.ExpectEnd();
}

TEST(MessageReaderTest, ReadsPastTheEndThrow) {
  MessageReader reader(std::string_view("\x01\x02\x03", 3));
  EXPECT_THROW(reader.ReadInt32(), ProtocolError);
  EXPECT_EQ(reader.ReadByte(), 1);
  EXPECT_THROW(reader.ReadBytes(3), ProtocolError);
  EXPECT_EQ(reader.ReadInt16(), 0x0203);
  EXPECT_THROW(reader.ReadByte(), ProtocolError);
  EXPECT_THROW(reader.ReadInt16(), ProtocolError);
}

TEST(MessageReaderTest, CStringWithoutNulThrows) {
  MessageReader reader("no terminator");
  EXPECT_THROW(reader.ReadCString(), ProtocolError);
}

TEST(MessageReaderTest, DecodeUint32) {
  EXPECT_EQ(DecodeUint32("\x80\x00\x00\x01"), 0x80000001u);
  EXPECT_EQ(DecodeUint32("\x00\x00\x00\x08"), 8u);
}

TEST(ParseStartupPacketTest, StartupMessageWithParameters) {
  std::string packet = testing::StartupMessageBytes({{"user", "u_scram"},
                                                     {"database", "postgres"},
                                                     {"application_name", "psql"},
                                                     {"some_unknown_option", ""}});
  StartupPacket parsed = ParseStartupPacket(BodyOf(packet));
  EXPECT_EQ(parsed.kind, StartupPacket::Kind::kStartupMessage);
  EXPECT_EQ(parsed.protocol_version, kProtocolVersion30);
  ASSERT_EQ(parsed.parameters.size(), 4u);
  EXPECT_EQ(parsed.parameters[0], (std::pair<std::string, std::string>("user", "u_scram")));
  EXPECT_EQ(parsed.parameters[2].second, "psql");
  EXPECT_EQ(parsed.parameters[3].second, "");
}

TEST(ParseStartupPacketTest, RequestCodes) {
  EXPECT_EQ(ParseStartupPacket(BodyOf(testing::SslRequestBytes())).kind,
            StartupPacket::Kind::kSslRequest);
  EXPECT_EQ(ParseStartupPacket(BodyOf(testing::GssEncRequestBytes())).kind,
            StartupPacket::Kind::kGssEncRequest);
  StartupPacket cancel = ParseStartupPacket(BodyOf(testing::CancelRequestBytes(7, -5)));
  EXPECT_EQ(cancel.kind, StartupPacket::Kind::kCancelRequest);
  EXPECT_EQ(cancel.process_id, 7);
  EXPECT_EQ(cancel.secret_key, -5);
}

TEST(ParseStartupPacketTest, MalformedPacketsThrow) {
  // Cancel request without the secret key.
  std::string short_cancel;
  AppendInt32(&short_cancel, kCancelRequestCode);
  AppendInt32(&short_cancel, 7);
  EXPECT_THROW(ParseStartupPacket(short_cancel), ProtocolError);
  // SSL request with extra bytes.
  std::string long_ssl;
  AppendInt32(&long_ssl, kSslRequestCode);
  long_ssl += "x";
  EXPECT_THROW(ParseStartupPacket(long_ssl), ProtocolError);
  // No terminating empty name.
  std::string no_terminator;
  AppendInt32(&no_terminator, kProtocolVersion30);
  no_terminator.append("user\0u\0", 7);
  EXPECT_THROW(ParseStartupPacket(no_terminator), ProtocolError);
  // A name without a value.
  std::string no_value;
  AppendInt32(&no_value, kProtocolVersion30);
  no_value.append("user\0", 5);
  EXPECT_THROW(ParseStartupPacket(no_value), ProtocolError);
  // A value without its NUL.
  std::string no_nul;
  AppendInt32(&no_nul, kProtocolVersion30);
  no_nul.append("user\0u", 6);
  EXPECT_THROW(ParseStartupPacket(no_nul), ProtocolError);
  // Bytes after the terminator.
  std::string trailing;
  AppendInt32(&trailing, kProtocolVersion30);
  trailing.append("\0x", 2);
  EXPECT_THROW(ParseStartupPacket(trailing), ProtocolError);
  // Only the version, nothing else.
  std::string only_version;
  AppendInt32(&only_version, kProtocolVersion30);
  EXPECT_THROW(ParseStartupPacket(only_version), ProtocolError);
  // Too short for a code.
  EXPECT_THROW(ParseStartupPacket("ab"), ProtocolError);
}

TEST(ParseStartupPacketTest, OtherMajorVersionIsNotParsed) {
  std::string body;
  AppendInt32(&body, 2 << 16);
  body += "whatever";
  StartupPacket parsed = ParseStartupPacket(body);
  EXPECT_EQ(parsed.kind, StartupPacket::Kind::kStartupMessage);
  EXPECT_EQ(parsed.protocol_version, 2 << 16);
  EXPECT_TRUE(parsed.parameters.empty());
}

TEST(ParseQueryMessageTest, AcceptsExactlyOneString) {
  EXPECT_EQ(ParseQueryMessage(std::string_view("select 1\0", 9)), "select 1");
  EXPECT_EQ(ParseQueryMessage(std::string_view("\0", 1)), "");
  EXPECT_THROW(ParseQueryMessage("select 1"), ProtocolError);
  EXPECT_THROW(ParseQueryMessage(std::string_view("select 1\0x", 10)), ProtocolError);
  EXPECT_THROW(ParseQueryMessage(""), ProtocolError);
}

TEST(FrontendMessageTypeTest, KnownTypesAndLimits) {
  for (char type : std::string("BCDEFHPQSXcdf")) EXPECT_TRUE(IsFrontendMessageType(type)) << type;
  for (char type : std::string("pAZz\0\xff", 6)) EXPECT_FALSE(IsFrontendMessageType(type)) << type;
  EXPECT_EQ(MaxMessageLength('Q'), kMaxMessageLength);
  EXPECT_EQ(MaxMessageLength('d'), kMaxMessageLength);
  EXPECT_EQ(MaxMessageLength('S'), kMaxSmallMessageLength);
}

}  // namespace
}  // namespace stave::server::pgwire
