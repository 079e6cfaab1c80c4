#include "server/pgwire/pg_connection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/pgwire/byte_stream.h"
#include "tests/server/scripted_query_session.h"
#include "tests/server/wire_transcript.h"

namespace stave::server::pgwire {
namespace {

using testing::AppendInt32;
using testing::BackendMessage;
using testing::BindBytes;
using testing::CloseBytes;
using testing::DataRowValues;
using testing::DescribeBytes;
using testing::ErrorField;
using testing::ExecuteBytes;
using testing::MessageBytes;
using testing::MessageTypes;
using testing::ParseBackendMessages;
using testing::ParseBytes;
using testing::QueryBytes;
using testing::StartupMessageBytes;
using testing::SyncBytes;

/// A ByteStream over fixed input that records the output; can hand input out in small
/// pieces and can fail writes, to play a slow or vanishing client.
class MemoryStream : public ByteStream {
 public:
  explicit MemoryStream(std::string input, size_t max_read = SIZE_MAX)
      : input_(std::move(input)), max_read_(max_read) {}

  size_t ReadSome(char* data, size_t size) override {
    size_t count = std::min({size, max_read_, input_.size() - position_});
    std::memcpy(data, input_.data() + position_, count);
    position_ += count;
    return count;
  }

  bool WriteAll(std::string_view data) override {
    ++writes_;
    if (writes_ > fail_writes_after_) return false;
    output_.append(data);
    return true;
  }

  void FailWritesAfter(int writes) { fail_writes_after_ = writes; }
  const std::string& output() const { return output_; }
  int writes() const { return writes_; }

 private:
  std::string input_;
  size_t position_ = 0;
  size_t max_read_;
  std::string output_;
  int writes_ = 0;
  int fail_writes_after_ = 1 << 30;
};

const std::vector<std::pair<std::string, std::string>> kStartup = {
    {"user", "u"}, {"database", "stave"}, {"application_name", "psql"}};

class PgConnectionTest : public ::testing::Test {
 protected:
  // Runs a connection over `input` and returns everything it sent.
  std::string Converse(const std::string& input, size_t max_read = SIZE_MAX) {
    stream_ = std::make_unique<MemoryStream>(input, max_read);
    RunOn(stream_.get());
    return stream_->output();
  }

  void RunOn(MemoryStream* stream) {
    PgConnectionConfig config;
    config.process_id = 42;
    config.secret_key = 1234567;
    config.peer = "test";
    config.flush_threshold = flush_threshold_;
    config.max_message_length = max_message_length_;
    config.on_cancel_request = [this](int32_t process_id, int32_t secret_key) {
      canceled_.emplace_back(process_id, secret_key);
    };
    PgConnection connection(stream, &factory_, std::move(config));
    connection.Run();
  }

  // Everything after the startup answer (R S... K Z), which is checked on the way.
  std::vector<BackendMessage> AfterStartup(const std::string& output) {
    auto messages = ParseBackendMessages(output);
    std::string types = MessageTypes(messages);
    size_t ready = types.find('Z');
    EXPECT_NE(ready, std::string::npos) << types;
    EXPECT_EQ(types.substr(0, 1), "R");
    return {messages.begin() + static_cast<long>(ready) + 1, messages.end()};
  }

  std::string Startup() { return StartupMessageBytes(kStartup); }
  static std::string Terminate() { return MessageBytes('X', ""); }

  testing::ScriptedSessionFactory scripted_;
  QuerySessionFactory factory_ = scripted_.AsFactory();
  size_t flush_threshold_ = 64 * 1024;
  uint32_t max_message_length_ = kDefaultMaxMessageLength;
  std::vector<std::pair<int32_t, int32_t>> canceled_;
  std::unique_ptr<MemoryStream> stream_;
};

TEST_F(PgConnectionTest, StartupAnswersAuthParametersKeyAndReady) {
  auto messages = ParseBackendMessages(Converse(Startup() + Terminate()));
  EXPECT_EQ(MessageTypes(messages), "RSSSSSSSSKZ");
  EXPECT_EQ(messages[0].body, std::string(4, '\0'));  // AuthenticationOk.
  EXPECT_EQ(messages[1].body, std::string("application_name\0psql\0", 22));
  EXPECT_EQ(testing::ReadUint32(messages[9].body, 0), 42u);
  EXPECT_EQ(testing::ReadUint32(messages[9].body, 4), 1234567u);
  EXPECT_EQ(messages[10].body, "I");
  EXPECT_EQ(scripted_.last_parameters(), kStartup);
}

TEST_F(PgConnectionTest, SimpleQueryReturnsRowDescriptionRowsAndTag) {
  auto messages = AfterStartup(Converse(Startup() + QueryBytes("SELECT 1") + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "TDCZ");
  EXPECT_EQ(DataRowValues(messages[1]), std::vector<std::string>{"1"});
  EXPECT_EQ(messages[2].body, std::string("SELECT 1\0", 9));
  EXPECT_EQ(messages[3].body, "I");
}

TEST_F(PgConnectionTest, EveryStatementOfAQueryGetsItsResults) {
  auto messages =
      AfterStartup(Converse(Startup() + QueryBytes("SELECT 1; SELECT 'a'; BEGIN") + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "TDCTDCCZ");
  EXPECT_EQ(DataRowValues(messages[4]), std::vector<std::string>{"a"});
  EXPECT_EQ(messages[6].body, std::string("BEGIN\0", 6));
  EXPECT_EQ(messages[7].body, "T");
}

TEST_F(PgConnectionTest, CopyToStdoutSendsCopyDataBetweenCopyOutAndCopyDone) {
  auto messages = AfterStartup(Converse(Startup() + QueryBytes("COPY rows 2") + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "HdddcCZ");
  // Text format overall, two columns in text format.
  EXPECT_EQ(messages[0].body, std::string("\0\0\2\0\0\0\0", 7));
  EXPECT_EQ(messages[1].body, "n,s\n");
  EXPECT_EQ(messages[2].body, "0,row 0\n");
  EXPECT_EQ(messages[3].body, "1,row 1\n");
  EXPECT_EQ(messages[4].body, "");
  EXPECT_EQ(messages[5].body, std::string("COPY 2\0", 7));
}

TEST_F(PgConnectionTest, NoticesPrecedeCommandComplete) {
  auto messages = AfterStartup(Converse(Startup() + QueryBytes("NOTICE") + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "NNCZ");
  EXPECT_EQ(ErrorField(messages[0], 'S'), "NOTICE");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "00000");
  EXPECT_EQ(ErrorField(messages[0], 'M'), "table \"x\" does not exist, skipping");
  EXPECT_EQ(ErrorField(messages[1], 'S'), "WARNING");
  EXPECT_EQ(ErrorField(messages[1], 'C'), "25P01");
}

TEST_F(PgConnectionTest, TypesAndNullsInTextFormat) {
  auto messages = AfterStartup(Converse(Startup() + QueryBytes("SELECT types") + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "TDCZ");
  EXPECT_EQ(DataRowValues(messages[1]),
            (std::vector<std::string>{"t", "-7", "9000000000", "1.5", "h\xC3\xA9llo", "<NULL>"}));
}

TEST_F(PgConnectionTest, EmptyQueryGetsEmptyQueryResponse) {
  auto messages = AfterStartup(Converse(Startup() + QueryBytes("") + QueryBytes(" ; ;") +
                                        QueryBytes("SELECT 1") + Terminate()));
  EXPECT_EQ(MessageTypes(messages), "IZIZTDCZ");
}

TEST_F(PgConnectionTest, StatementErrorIsReportedAndConnectionContinues) {
  auto messages = AfterStartup(Converse(Startup() + QueryBytes("SELECT 1; BAD x; SELECT 1") +
                                        QueryBytes("SELECT 1") + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "TDCEZTDCZ");
  const BackendMessage& error = messages[3];
  EXPECT_EQ(ErrorField(error, 'S'), "ERROR");
  EXPECT_EQ(ErrorField(error, 'V'), "ERROR");
  EXPECT_EQ(ErrorField(error, 'C'), "42601");
  EXPECT_EQ(ErrorField(error, 'M'), "syntax error at or near \"x\"");
  EXPECT_EQ(ErrorField(error, 'P'), "15");  // "SELECT 1; BAD x": x is character 15.
  EXPECT_EQ(messages[4].body, "I");
}

TEST_F(PgConnectionTest, ErrorInTransactionBlockFailsIt) {
  auto messages =
      AfterStartup(Converse(Startup() + QueryBytes("BEGIN") + QueryBytes("BAD x") +
                            QueryBytes("SELECT 1") + QueryBytes("ROLLBACK") + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "CZEZEZCZ");
  EXPECT_EQ(messages[1].body, "T");
  EXPECT_EQ(messages[3].body, "E");
  EXPECT_EQ(ErrorField(messages[4], 'C'), "25P02");
  EXPECT_EQ(messages[5].body, "E");
  EXPECT_EQ(messages[7].body, "I");
}

TEST_F(PgConnectionTest, OtherExceptionsBecomeInternalErrors) {
  auto messages = AfterStartup(
      Converse(Startup() + QueryBytes("THROW") + QueryBytes("SELECT 1") + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "EZTDCZ");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "XX000");
  EXPECT_EQ(ErrorField(messages[0], 'M'), "boom");
}

TEST_F(PgConnectionTest, BadValueNeverSendsAHalfRow) {
  auto messages = AfterStartup(Converse(Startup() + QueryBytes("SELECT bad row") + Terminate()));
  // RowDescription went out, the row could not be encoded: an error, no DataRow.
  ASSERT_EQ(MessageTypes(messages), "TEZ");
  EXPECT_EQ(ErrorField(messages[1], 'C'), "XX000");
}

TEST_F(PgConnectionTest, ChangedParametersAreReportedBeforeReady) {
  auto messages =
      AfterStartup(Converse(Startup() + QueryBytes("SET application_name = foo") + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "CSZ");
  EXPECT_EQ(messages[1].body, std::string("application_name\0foo\0", 21));
}

TEST_F(PgConnectionTest, ExtendedProtocolUnnamedStatementAndPortal) {
  // What pgJDBC sends for a query with one int4 parameter (binary) and all-binary results.
  std::string int4_seven("\0\0\0\x07", 4);
  auto messages = AfterStartup(Converse(
      Startup() + ParseBytes("", "SELECT $1", {23}) + BindBytes("", "", {1}, {int4_seven}, {1}) +
      DescribeBytes('P', "") + ExecuteBytes("") + SyncBytes() + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "12TDCZ");
  // RowDescription: int4, binary format (the last 2 bytes of the one field).
  EXPECT_EQ(testing::ReadUint32(messages[2].body, 2 + 9 + 6), 23u);
  EXPECT_EQ(testing::ReadUint16(messages[2].body, messages[2].body.size() - 2), 1u);
  EXPECT_EQ(DataRowValues(messages[3]), std::vector<std::string>{int4_seven});
  EXPECT_EQ(messages[4].body, std::string("SELECT 1\0", 9));
  EXPECT_EQ(messages[5].body, "I");
}

TEST_F(PgConnectionTest, DescribeStatementReportsParametersAndColumns) {
  auto messages = AfterStartup(Converse(Startup() + ParseBytes("s1", "SELECT $1, $2", {0, 20}) +
                                        DescribeBytes('S', "s1") + ParseBytes("s2", "BEGIN") +
                                        DescribeBytes('S', "s2") + SyncBytes() + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "1tT1tnZ");
  // ParameterDescription: 2 parameters, int4 (inferred) and int8 (declared).
  EXPECT_EQ(testing::ReadUint16(messages[1].body, 0), 2u);
  EXPECT_EQ(testing::ReadUint32(messages[1].body, 2), 23u);
  EXPECT_EQ(testing::ReadUint32(messages[1].body, 6), 20u);
  EXPECT_EQ(testing::ReadUint16(messages[4].body, 0), 0u);
}

TEST_F(PgConnectionTest, NamedStatementsAndPortalsLiveUntilClosed) {
  auto messages = AfterStartup(
      Converse(Startup() + ParseBytes("q", "SELECT $1") + SyncBytes() +
               // Reused twice, with text values, a NULL, and a second named portal.
               BindBytes("", "q", {}, {std::string("x")}) + ExecuteBytes("") +
               BindBytes("p", "q", {0}, {std::nullopt}) + ExecuteBytes("p") + SyncBytes() +
               CloseBytes('S', "q") + CloseBytes('S', "never") + SyncBytes() +
               BindBytes("", "q", {}, {std::string("x")}) + SyncBytes() + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "1Z2DC2DCZ33ZEZ");
  EXPECT_EQ(DataRowValues(messages[3]), std::vector<std::string>{"x"});
  EXPECT_EQ(DataRowValues(messages[6]), std::vector<std::string>{"<NULL>"});
  EXPECT_EQ(ErrorField(messages[12], 'C'), "26000");
  EXPECT_EQ(ErrorField(messages[12], 'M'), "prepared statement \"q\" does not exist");
}

TEST_F(PgConnectionTest, NamesInUseAndUnknownNamesAreErrors) {
  auto messages = AfterStartup(Converse(
      Startup() + ParseBytes("q", "SELECT 1") + ParseBytes("q", "SELECT 1") + SyncBytes() +
      ExecuteBytes("nope") + SyncBytes() + DescribeBytes('P', "nope") + SyncBytes() +
      BindBytes("p", "q", {}, {}) + BindBytes("p", "q", {}, {}) + SyncBytes() + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "1EZEZEZ2EZ");
  EXPECT_EQ(ErrorField(messages[1], 'C'), "42P05");
  EXPECT_EQ(ErrorField(messages[1], 'M'), "prepared statement \"q\" already exists");
  EXPECT_EQ(ErrorField(messages[3], 'C'), "34000");
  EXPECT_EQ(ErrorField(messages[3], 'M'), "portal \"nope\" does not exist");
  EXPECT_EQ(ErrorField(messages[5], 'C'), "34000");
  EXPECT_EQ(ErrorField(messages[8], 'C'), "42P03");
}

TEST_F(PgConnectionTest, RowLimitsSuspendThePortalAndLaterExecutesContinue) {
  auto messages =
      AfterStartup(Converse(Startup() + QueryBytes("BEGIN") + ParseBytes("", "SELECT rows 5") +
                            BindBytes("c", "", {}, {}) + ExecuteBytes("c", 2) + SyncBytes() +
                            ExecuteBytes("c", 2) + SyncBytes() + ExecuteBytes("c", 2) +
                            SyncBytes() + ExecuteBytes("c", 2) + SyncBytes() + Terminate()));
  ASSERT_EQ(MessageTypes(messages),
            "CZ"
            "12DDsZ"
            "DDsZ"
            "DCZ"
            "CZ");
  EXPECT_EQ(DataRowValues(messages[8])[0], "2");
  EXPECT_EQ(DataRowValues(messages[12])[0], "4");
  EXPECT_EQ(messages[13].body, std::string("SELECT 1\0", 9));  // Rows of this Execute.
  EXPECT_EQ(messages[15].body, std::string("SELECT 0\0", 9));
  EXPECT_EQ(messages[16].body, "T");
}

TEST_F(PgConnectionTest, PortalsEndWithTheirTransaction) {
  auto messages = AfterStartup(Converse(
      Startup() + ParseBytes("", "SELECT rows 3") + BindBytes("c", "", {}, {}) +
      ExecuteBytes("c", 1) + SyncBytes() + ExecuteBytes("c", 1) + SyncBytes() + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "12DsZEZ");
  EXPECT_EQ(ErrorField(messages[5], 'C'), "34000");
}

TEST_F(PgConnectionTest, ErrorSkipsToSyncAndFailsTheTransactionBlock) {
  std::string flush = MessageBytes('H', "");
  auto messages = AfterStartup(
      Converse(Startup() + QueryBytes("BEGIN") + ParseBytes("", "SELECT nonsense") +
               BindBytes("", "", {}, {}) + ExecuteBytes("") + flush + SyncBytes() +
               ParseBytes("", "SELECT 1") + BindBytes("", "", {}, {}) + ExecuteBytes("") +
               SyncBytes() + ParseBytes("", "ROLLBACK") + BindBytes("", "", {}, {}) +
               ExecuteBytes("") + SyncBytes() + Terminate()));
  // In the failed block even the Parse of a query fails, as in PostgreSQL.
  ASSERT_EQ(MessageTypes(messages),
            "CZ"
            "EZ"
            "EZ"
            "12CZ");
  EXPECT_EQ(ErrorField(messages[2], 'C'), "42601");
  EXPECT_EQ(messages[3].body, "E");
  EXPECT_EQ(ErrorField(messages[4], 'C'), "25P02");
  EXPECT_EQ(messages[8].body, std::string("ROLLBACK\0", 9));
  EXPECT_EQ(messages[9].body, "I");
}

TEST_F(PgConnectionTest, MultipleCommandsCannotBePrepared) {
  auto messages = AfterStartup(
      Converse(Startup() + ParseBytes("", "SELECT 1; SELECT 1") + SyncBytes() + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "EZ");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "42601");
  EXPECT_EQ(ErrorField(messages[0], 'M'),
            "cannot insert multiple commands into a prepared statement");
}

TEST_F(PgConnectionTest, WrongCountsOfParametersOrFormatsAre08P01) {
  auto messages = AfterStartup(Converse(
      Startup() + ParseBytes("q", "SELECT $1, $2") + SyncBytes() +
      BindBytes("", "q", {}, {std::string("1")}) + SyncBytes() +
      BindBytes("", "q", {0, 0, 0}, {std::string("1"), std::string("a")}) + SyncBytes() +
      BindBytes("", "q", {}, {std::string("1"), std::string("a")}, {0, 0, 0}) + SyncBytes() +
      BindBytes("", "q", {7}, {std::string("1"), std::string("a")}) + SyncBytes() + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "1ZEZEZEZEZ");
  EXPECT_EQ(ErrorField(messages[2], 'C'), "08P01");
  EXPECT_EQ(ErrorField(messages[2], 'M'),
            "bind message supplies 1 parameters, but prepared statement \"q\" requires 2");
  EXPECT_EQ(ErrorField(messages[4], 'C'), "08P01");
  EXPECT_EQ(ErrorField(messages[6], 'C'), "08P01");
  EXPECT_EQ(ErrorField(messages[6], 'M'),
            "bind message has 3 result formats but query has 2 columns");
  EXPECT_EQ(ErrorField(messages[8], 'C'), "22023");
}

TEST_F(PgConnectionTest, BadParameterValuesAre22P02And22P03) {
  auto messages = AfterStartup(
      Converse(Startup() + ParseBytes("q", "SELECT $1, $2") + SyncBytes() +
               BindBytes("", "q", {}, {std::string("12x"), std::string("a")}) + SyncBytes() +
               BindBytes("", "q", {1}, {std::string("\0\0", 2), std::string("a")}) + SyncBytes() +
               Terminate()));
  ASSERT_EQ(MessageTypes(messages), "1ZEZEZ");
  EXPECT_EQ(ErrorField(messages[2], 'C'), "22P02");
  EXPECT_EQ(ErrorField(messages[2], 'M'), "invalid input syntax for type integer: \"12x\"");
  EXPECT_EQ(ErrorField(messages[4], 'C'), "22P03");
  EXPECT_EQ(ErrorField(messages[4], 'M'), "incorrect binary data format in bind parameter 1");
}

TEST_F(PgConnectionTest, TextParametersMustBeUtf8) {
  auto messages =
      AfterStartup(Converse(Startup() + ParseBytes("q", "SELECT $1") + SyncBytes() +
                            BindBytes("", "q", {}, {std::string("a\xff")}) + SyncBytes() +
                            BindBytes("", "q", {1}, {std::string("\xc3\xa9")}) + ExecuteBytes("") +
                            SyncBytes() + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "1ZEZ2DCZ");
  EXPECT_EQ(ErrorField(messages[2], 'C'), "22021");
  EXPECT_EQ(ErrorField(messages[2], 'M'), "invalid byte sequence for encoding \"UTF8\": 0xff");
  EXPECT_EQ(DataRowValues(messages[5]), std::vector<std::string>{"\xc3\xa9"});
}

TEST_F(PgConnectionTest, PerColumnResultFormats) {
  auto messages = AfterStartup(Converse(Startup() + ParseBytes("", "SELECT types") +
                                        BindBytes("", "", {}, {}, {0, 1, 1, 1, 0, 1}) +
                                        ExecuteBytes("") + SyncBytes() + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "12DCZ");
  std::vector<std::string> values = DataRowValues(messages[2]);
  ASSERT_EQ(values.size(), 6u);
  EXPECT_EQ(values[0], "t");
  EXPECT_EQ(values[1], std::string("\xff\xf9", 2));                          // int2 -7
  EXPECT_EQ(values[2], std::string("\x00\x00\x00\x02\x18\x71\x1a\x00", 8));  // int8 9e9
  EXPECT_EQ(values[3], std::string("\x3f\xf8\0\0\0\0\0\0", 8));              // float8 1.5
  EXPECT_EQ(values[4], "h\xC3\xA9llo");
  EXPECT_EQ(values[5], "<NULL>");
}

TEST_F(PgConnectionTest, EmptyStatementAnswersEmptyQueryResponse) {
  auto messages =
      AfterStartup(Converse(Startup() + ParseBytes("", "") + BindBytes("", "", {}, {}) +
                            DescribeBytes('P', "") + ExecuteBytes("") + SyncBytes() + Terminate()));
  EXPECT_EQ(MessageTypes(messages), "12nIZ");
}

TEST_F(PgConnectionTest, SyncEndsTheImplicitTransaction) {
  auto messages = AfterStartup(Converse(Startup() + SyncBytes() + SyncBytes() + Terminate()));
  EXPECT_EQ(MessageTypes(messages), "ZZ");
}

TEST_F(PgConnectionTest, QueryWhileSkippingUntilSyncIsIgnored) {
  auto messages =
      AfterStartup(Converse(Startup() + ParseBytes("", "SELECT x") + QueryBytes("SELECT 1") +
                            MessageBytes('S', "") + Terminate()));
  EXPECT_EQ(MessageTypes(messages), "EZ");
}

TEST_F(PgConnectionTest, FunctionCallIsRejectedAndStrayCopyMessagesIgnored) {
  auto messages =
      AfterStartup(Converse(Startup() + MessageBytes('F', "xxxx") + MessageBytes('d', "copy data") +
                            MessageBytes('c', "") + QueryBytes("SELECT 1") + Terminate()));
  ASSERT_EQ(MessageTypes(messages), "EZTDCZ");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "0A000");
}

TEST_F(PgConnectionTest, UnknownMessageTypeIsFatal) {
  auto messages =
      AfterStartup(Converse(Startup() + MessageBytes('?', "") + QueryBytes("SELECT 1")));
  ASSERT_EQ(MessageTypes(messages), "E");
  EXPECT_EQ(ErrorField(messages[0], 'S'), "FATAL");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "08P01");
  EXPECT_EQ(ErrorField(messages[0], 'M'), "invalid frontend message type 63");
}

TEST_F(PgConnectionTest, PasswordMessageAfterStartupIsFatal) {
  auto messages = AfterStartup(Converse(Startup() + MessageBytes('p', std::string("pw\0", 3))));
  ASSERT_EQ(MessageTypes(messages), "E");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "08P01");
}

TEST_F(PgConnectionTest, BadLengthsAreFatal) {
  for (uint32_t length : {0u, 3u, (1u << 30) + 1, 0xffffffffu}) {
    std::string message = "Q";
    AppendInt32(&message, length);
    auto messages = AfterStartup(Converse(Startup() + message + QueryBytes("SELECT 1")));
    ASSERT_EQ(MessageTypes(messages), "E") << length;
    EXPECT_EQ(ErrorField(messages[0], 'C'), "08P01");
    EXPECT_TRUE(ErrorField(messages[0], 'M').starts_with("invalid message length")) << length;
  }
  // Small messages have a small limit.
  std::string sync = "S";
  AppendInt32(&sync, 20000);
  auto messages = AfterStartup(Converse(Startup() + sync));
  ASSERT_EQ(MessageTypes(messages), "E");
}

TEST_F(PgConnectionTest, MalformedQueryIsFatal) {
  for (std::string body : {std::string("SELECT 1"), std::string("SELECT 1\0junk", 13)}) {
    auto messages = AfterStartup(Converse(Startup() + MessageBytes('Q', body)));
    ASSERT_EQ(MessageTypes(messages), "E");
    EXPECT_EQ(ErrorField(messages[0], 'C'), "08P01");
  }
}

TEST_F(PgConnectionTest, MessagesOverTheLimitAreRefusedFromTheirLengthWord) {
  max_message_length_ = 1024;
  std::string small_enough = "SELECT 1" + std::string(1000, ' ');
  auto messages = AfterStartup(Converse(Startup() + QueryBytes(small_enough) + Terminate()));
  EXPECT_EQ(MessageTypes(messages), "TDCZ");
  // Only the header of the large one is sent: it is refused without waiting for its body.
  std::string header = "Q";
  AppendInt32(&header, 1025);
  messages = AfterStartup(Converse(Startup() + header));
  ASSERT_EQ(MessageTypes(messages), "E");
  EXPECT_EQ(ErrorField(messages[0], 'S'), "FATAL");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "08P01");
  EXPECT_EQ(ErrorField(messages[0], 'M'),
            "invalid message length: a message of type 'Q' may have at most 1024 bytes, not 1025");
  // The default is 64 MiB.
  max_message_length_ = kDefaultMaxMessageLength;
  header = "P";
  AppendInt32(&header, (64u << 20) + 1);
  messages = AfterStartup(Converse(Startup() + header));
  ASSERT_EQ(MessageTypes(messages), "E");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "08P01");
}

TEST_F(PgConnectionTest, ClaimedHugeMessageWithoutDataJustEnds) {
  // Length word says 1 GiB, then the client vanishes: nothing is allocated for bytes that
  // never came, and the connection ends quietly.
  max_message_length_ = kMaxMessageLength;
  std::string message = "Q";
  AppendInt32(&message, 1u << 30);
  message += "SELECT";
  auto messages = AfterStartup(Converse(Startup() + message));
  EXPECT_EQ(MessageTypes(messages), "");
}

TEST_F(PgConnectionTest, TruncatedInputAnywhereEndsQuietly) {
  std::string conversation = Startup() + QueryBytes("SELECT 1") + QueryBytes("SELECT 'a'");
  for (size_t cut = 0; cut < conversation.size(); ++cut) {
    std::string output = Converse(conversation.substr(0, cut));
    EXPECT_NO_THROW(ParseBackendMessages(output)) << cut;
  }
}

TEST_F(PgConnectionTest, DamagedExtendedMessagesNeverCrash) {
  // Every byte of a Parse/Bind/Describe/Execute batch flipped in turn: whatever the damage
  // (a bad length, a name without NUL, a count larger than the message, a bad format code),
  // the connection answers with well-formed messages or ends; it never crashes or hangs.
  std::string batch =
      ParseBytes("s", "SELECT $1, $2", {23, 0}) +
      BindBytes("p", "s", {1, 0}, {std::string("\0\0\0\x05", 4), std::string("x")}, {1, 0}) +
      DescribeBytes('P', "p") + ExecuteBytes("p", 1) + CloseBytes('P', "p") + SyncBytes();
  for (size_t at = 0; at < batch.size(); ++at) {
    for (char flip : {'\x01', '\x80', '\xff'}) {
      std::string damaged = batch;
      damaged[at] = static_cast<char>(damaged[at] ^ flip);
      std::string output = Converse(Startup() + damaged + SyncBytes() + Terminate());
      EXPECT_NO_THROW(ParseBackendMessages(output)) << at;
    }
  }
}

TEST_F(PgConnectionTest, ByteAtATimeDelivery) {
  auto messages = AfterStartup(Converse(testing::SslRequestBytes().substr(0) + Startup() +
                                            QueryBytes("SELECT 1; SELECT 'a'") + Terminate(),
                                        /*max_read=*/1)
                                   .substr(1));  // Skip the 'N' answer.
  EXPECT_EQ(MessageTypes(messages), "TDCTDCZ");
}

TEST_F(PgConnectionTest, EncryptionRequestsAreDeclined) {
  std::string output = Converse(testing::SslRequestBytes() + testing::GssEncRequestBytes() +
                                Startup() + QueryBytes("SELECT 1") + Terminate());
  ASSERT_EQ(output.substr(0, 2), "NN");
  EXPECT_EQ(MessageTypes(AfterStartup(output.substr(2))), "TDCZ");
}

TEST_F(PgConnectionTest, EndlessEncryptionRequestsAreFatal) {
  std::string output = Converse(testing::SslRequestBytes() + testing::SslRequestBytes() +
                                testing::SslRequestBytes() + Startup());
  ASSERT_EQ(output.substr(0, 2), "NN");
  auto messages = ParseBackendMessages(output.substr(2));
  ASSERT_EQ(MessageTypes(messages), "E");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "08P01");
}

TEST_F(PgConnectionTest, CancelRequestCallsHookAndSendsNothing) {
  std::string output = Converse(testing::CancelRequestBytes(7, 99) + Startup());
  EXPECT_EQ(output, "");
  ASSERT_EQ(canceled_.size(), 1u);
  EXPECT_EQ(canceled_[0], (std::pair<int32_t, int32_t>(7, 99)));
  EXPECT_EQ(scripted_.sessions_created(), 0);
}

TEST_F(PgConnectionTest, UnsupportedProtocolVersionIsFatal) {
  auto messages = ParseBackendMessages(Converse(StartupMessageBytes(kStartup, 2 << 16)));
  ASSERT_EQ(MessageTypes(messages), "E");
  EXPECT_EQ(ErrorField(messages[0], 'S'), "FATAL");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "08P01");
  EXPECT_EQ(ErrorField(messages[0], 'M'),
            "unsupported frontend protocol 2.0: server supports 3.0 to 3.0");
  EXPECT_EQ(scripted_.sessions_created(), 0);
}

TEST_F(PgConnectionTest, NewerMinorVersionAndProtocolOptionsAreNegotiated) {
  auto with_option = kStartup;
  with_option.emplace_back("_pq_.something", "on");
  auto messages =
      ParseBackendMessages(Converse(StartupMessageBytes(with_option, (3 << 16) | 2) + Terminate()));
  ASSERT_EQ(MessageTypes(messages).substr(0, 2), "vR");
  EXPECT_EQ(testing::ReadUint32(messages[0].body, 0), 0u);
  EXPECT_EQ(testing::ReadUint32(messages[0].body, 4), 1u);
  EXPECT_EQ(messages[0].body.substr(8), std::string("_pq_.something\0", 15));
  EXPECT_EQ(scripted_.last_parameters(), kStartup);  // The option is not passed on.
}

TEST_F(PgConnectionTest, BadStartupPacketsAreFatal) {
  std::string too_long;
  AppendInt32(&too_long, 10001);
  std::string too_short;
  AppendInt32(&too_short, 4);
  std::string no_terminator;
  AppendInt32(&no_terminator, 3 << 16);
  no_terminator.append("user\0u\0", 7);
  for (const std::string& input :
       {too_long + std::string(10000, 'x'), too_short, testing::StartupPacketBytes(no_terminator),
        std::string("GET / HTTP/1.1\r\n\r\n")}) {
    auto messages = ParseBackendMessages(Converse(input));
    ASSERT_EQ(MessageTypes(messages), "E");
    EXPECT_EQ(ErrorField(messages[0], 'C'), "08P01");
  }
  EXPECT_EQ(scripted_.sessions_created(), 0);
}

TEST_F(PgConnectionTest, FactoryErrorRejectsTheConnection) {
  factory_ =
      [](const std::vector<std::pair<std::string, std::string>>&) -> std::unique_ptr<QuerySession> {
    throw SqlError("3D000", "database \"nope\" does not exist");
  };
  auto messages = ParseBackendMessages(Converse(Startup() + QueryBytes("SELECT 1")));
  ASSERT_EQ(MessageTypes(messages), "E");
  EXPECT_EQ(ErrorField(messages[0], 'S'), "FATAL");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "3D000");

  factory_ = [](const std::vector<std::pair<std::string, std::string>>&) {
    return std::unique_ptr<QuerySession>();
  };
  messages = ParseBackendMessages(Converse(Startup()));
  ASSERT_EQ(MessageTypes(messages), "E");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "XX000");
}

TEST_F(PgConnectionTest, BigResultsAreStreamedInPieces) {
  flush_threshold_ = 1024;
  std::string output = Converse(Startup() + QueryBytes("SELECT rows 5000") + Terminate());
  auto messages = AfterStartup(output);
  EXPECT_EQ(std::count_if(messages.begin(), messages.end(),
                          [](const BackendMessage& m) { return m.type == 'D'; }),
            5000);
  EXPECT_EQ(DataRowValues(messages[4999 + 1]), (std::vector<std::string>{"4999", "row 4999"}));
  EXPECT_GT(stream_->writes(), 50);
}

TEST_F(PgConnectionTest, ClientVanishingDuringAResultEndsTheConnection) {
  flush_threshold_ = 1024;
  MemoryStream stream(Startup() + QueryBytes("SELECT rows 100000") + QueryBytes("SELECT 1"));
  stream.FailWritesAfter(3);
  RunOn(&stream);
  EXPECT_EQ(stream.writes(), 4);  // Startup, two pieces, then the failed write; no more.
  // The first query's result was cut off and the second query never ran.
  EXPECT_EQ(MessageTypes(AfterStartup(stream.output())).find('Z'), std::string::npos);
}

}  // namespace
}  // namespace stave::server::pgwire
