#include "server/pgwire/pg_server.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/scripted_query_session.h"
#include "tests/server/wire_transcript.h"

namespace stave::server::pgwire {
namespace {

using boost::asio::ip::tcp;
using testing::BackendMessage;
using testing::ErrorField;
using testing::MessageTypes;
using testing::ParseBackendMessages;
using testing::QueryBytes;

struct CommandResult {
  int exit_code;
  std::string output;  // stdout and stderr together.
};

CommandResult RunCommand(const std::string& command) {
  CommandResult result{-1, ""};
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t read;
  while ((read = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, read);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

bool HavePsql() { return RunCommand("psql --version").exit_code == 0; }

/// A raw protocol client on a blocking socket.
class RawClient {
 public:
  explicit RawClient(uint16_t port) : socket_(io_context_) {
    socket_.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  }

  void Send(const std::string& bytes) { boost::asio::write(socket_, boost::asio::buffer(bytes)); }

  // Reads messages until ReadyForQuery, or until the server closes the connection.
  std::vector<BackendMessage> ReadUntilReady() {
    std::vector<BackendMessage> messages;
    while (true) {
      std::string header(5, '\0');
      boost::system::error_code error;
      boost::asio::read(socket_, boost::asio::buffer(header), error);
      if (error) return messages;
      uint32_t length = testing::ReadUint32(header, 1);
      std::string body(length - 4, '\0');
      boost::asio::read(socket_, boost::asio::buffer(body), error);
      if (error) return messages;
      messages.push_back({header[0], body});
      if (header[0] == 'Z') return messages;
    }
  }

  // One byte, as the answer to SSLRequest.
  char ReadByte() {
    char byte = 0;
    boost::asio::read(socket_, boost::asio::buffer(&byte, 1));
    return byte;
  }

  // True once the server has closed the connection (reads end of stream).
  bool ServerClosed() {
    char byte;
    boost::system::error_code error;
    socket_.read_some(boost::asio::buffer(&byte, 1), error);
    return error == boost::asio::error::eof || error == boost::asio::error::connection_reset;
  }

  std::vector<BackendMessage> Startup() {
    Send(testing::StartupMessageBytes({{"user", "u"}, {"database", "stave"}}));
    return ReadUntilReady();
  }

  void Close() { socket_.close(); }

 private:
  boost::asio::io_context io_context_;
  tcp::socket socket_;
};

class PgServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer({}); }

  void StartServer(PgServerOptions options) {
    if (server_) server_->Stop();
    server_ = std::make_unique<PgServer>("127.0.0.1", 0, scripted_.AsFactory(), std::move(options));
    Status status = server_->Start();
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_NE(server_->port(), 0);
  }

  CommandResult Psql(const std::string& sql, const std::string& extra_options = "") {
    return RunCommand("PGCONNECT_TIMEOUT=10 PGAPPNAME=stave_test psql -h 127.0.0.1 -p " +
                      std::to_string(server_->port()) + " -U u -d stave -X -A -t " + extra_options +
                      " -c " + ShellQuote(sql));
  }

  // Waits until the server counts `expected` open connections, for at most 5 s.
  bool WaitForConnectionCount(size_t expected) {
    for (int i = 0; i < 500; ++i) {
      if (server_->connection_count() == expected) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  testing::ScriptedSessionFactory scripted_;
  std::unique_ptr<PgServer> server_;
};

TEST_F(PgServerTest, PsqlRunsAQuery) {
  if (!HavePsql()) GTEST_SKIP() << "psql is not installed";
  CommandResult result = Psql("SELECT 1");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "1\n");
  bool saw_application_name = false;
  for (const auto& [name, value] : scripted_.last_parameters()) {
    if (name == "application_name" && value == "stave_test") saw_application_name = true;
  }
  EXPECT_TRUE(saw_application_name);
}

TEST_F(PgServerTest, PsqlShowsEveryResultAndType) {
  if (!HavePsql()) GTEST_SKIP() << "psql is not installed";
  CommandResult result = Psql("SELECT types; SELECT 'a'");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "t|-7|9000000000|1.5|h\xC3\xA9llo|\na\n");
  result = Psql("SELECT types", "-P null=NULL");
  EXPECT_EQ(result.output, "t|-7|9000000000|1.5|h\xC3\xA9llo|NULL\n");
}

TEST_F(PgServerTest, PsqlShowsColumnNamesAndRowCount) {
  if (!HavePsql()) GTEST_SKIP() << "psql is not installed";
  CommandResult result = RunCommand("psql -h 127.0.0.1 -p " + std::to_string(server_->port()) +
                                    " -U u -d stave -X -c 'SELECT rows 2'");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output,
            " n |   s   \n"
            "---+-------\n"
            " 0 | row 0\n"
            " 1 | row 1\n"
            "(2 rows)\n\n");
}

TEST_F(PgServerTest, PsqlShowsErrorWithPositionCaret) {
  if (!HavePsql()) GTEST_SKIP() << "psql is not installed";
  CommandResult result = Psql("BAD x");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_EQ(result.output,
            "ERROR:  syntax error at or near \"x\"\n"
            "LINE 1: BAD x\n"
            "            ^\n");
}

TEST_F(PgServerTest, PsqlHandlesEmptyQueries) {
  if (!HavePsql()) GTEST_SKIP() << "psql is not installed";
  CommandResult result = Psql("");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "");
  result = Psql(";");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "");
}

TEST_F(PgServerTest, PsqlSeesInternalErrorsAndTransactionState) {
  if (!HavePsql()) GTEST_SKIP() << "psql is not installed";
  CommandResult result = Psql("THROW");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_EQ(result.output, "ERROR:  boom\n");
  // psql's -c commands share one connection; the session's transaction state carries over.
  result = RunCommand("psql -h 127.0.0.1 -p " + std::to_string(server_->port()) +
                      " -U u -d stave -X -A -t -c BEGIN -c 'BAD x' -c 'SELECT 1' -c ROLLBACK "
                      "-c 'SELECT 1'");
  EXPECT_NE(result.output.find("ERROR:  current transaction is aborted"), std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.substr(result.output.size() - 11), "ROLLBACK\n1\n") << result.output;
}

TEST_F(PgServerTest, ManyPsqlClientsAtOnce) {
  if (!HavePsql()) GTEST_SKIP() << "psql is not installed";
  constexpr int kClients = 12;
  std::vector<std::thread> clients;
  std::vector<CommandResult> results(kClients);
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([this, i, &results] { results[i] = Psql("SLEEP 100; SELECT rows 3"); });
  }
  for (std::thread& client : clients) client.join();
  for (const CommandResult& result : results) {
    EXPECT_EQ(result.exit_code, 0) << result.output;
    EXPECT_EQ(result.output, "SLEEP\n0|row 0\n1|row 1\n2|row 2\n");
  }
  EXPECT_TRUE(WaitForConnectionCount(0));
}

TEST_F(PgServerTest, RawClientWithSslRequest) {
  RawClient client(server_->port());
  client.Send(testing::SslRequestBytes());
  EXPECT_EQ(client.ReadByte(), 'N');
  auto startup = client.Startup();
  ASSERT_FALSE(startup.empty());
  EXPECT_EQ(startup.front().type, 'R');
  EXPECT_EQ(startup.back().type, 'Z');
  client.Send(QueryBytes("SELECT 1"));
  EXPECT_EQ(MessageTypes(client.ReadUntilReady()), "TDCZ");
  client.Send(testing::MessageBytes('X', ""));
  EXPECT_TRUE(client.ServerClosed());
}

TEST_F(PgServerTest, GarbageAndHostileInputDoNotHurtOthers) {
  // A client that completes startup and stays connected through it all.
  RawClient bystander(server_->port());
  bystander.Startup();

  {  // An HTTP request to the PostgreSQL port: the "length" is huge.
    RawClient client(server_->port());
    client.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    auto messages = client.ReadUntilReady();
    ASSERT_EQ(MessageTypes(messages), "E");
    EXPECT_EQ(ErrorField(messages[0], 'C'), "08P01");
    EXPECT_TRUE(client.ServerClosed());
  }
  {  // An oversized message length after startup.
    RawClient client(server_->port());
    client.Startup();
    std::string message = "Q";
    testing::AppendInt32(&message, 0x7fffffff);
    client.Send(message);
    auto messages = client.ReadUntilReady();
    ASSERT_EQ(MessageTypes(messages), "E");
    EXPECT_TRUE(ErrorField(messages[0], 'M').starts_with("invalid message length"));
    EXPECT_TRUE(client.ServerClosed());
  }
  {  // A length below 4.
    RawClient client(server_->port());
    client.Startup();
    client.Send(std::string("Q\0\0\0\x02", 5));
    EXPECT_EQ(MessageTypes(client.ReadUntilReady()), "E");
    EXPECT_TRUE(client.ServerClosed());
  }
  {  // Random bytes after startup.
    RawClient client(server_->port());
    client.Startup();
    client.Send(std::string("\x01\xff\x00garbage", 10));
    EXPECT_EQ(MessageTypes(client.ReadUntilReady()), "E");
    EXPECT_TRUE(client.ServerClosed());
  }
  {  // Disconnecting in the middle of a startup packet and of a message.
    RawClient half_startup(server_->port());
    half_startup.Send(testing::StartupMessageBytes({{"user", "u"}}).substr(0, 10));
    half_startup.Close();
    RawClient half_message(server_->port());
    half_message.Startup();
    half_message.Send(QueryBytes("SELECT 1").substr(0, 7));
    half_message.Close();
  }

  bystander.Send(QueryBytes("SELECT 1"));
  EXPECT_EQ(MessageTypes(bystander.ReadUntilReady()), "TDCZ");
  if (HavePsql()) {
    EXPECT_EQ(Psql("SELECT 1").output, "1\n");
  }
  bystander.Close();
  EXPECT_TRUE(WaitForConnectionCount(0));
}

TEST_F(PgServerTest, ExtendedProtocolRunsAndAnswersAtSync) {
  RawClient client(server_->port());
  client.Startup();
  client.Send(testing::ParseBytes("", "SELECT 1") + testing::BindBytes("", "", {}, {}) +
              testing::ExecuteBytes("") + testing::SyncBytes());
  auto messages = client.ReadUntilReady();
  ASSERT_EQ(MessageTypes(messages), "12DCZ");
  client.Send(testing::ParseBytes("", "SELECT nonsense") + testing::SyncBytes());
  messages = client.ReadUntilReady();
  ASSERT_EQ(MessageTypes(messages), "EZ");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "42601");
  client.Send(QueryBytes("SELECT 1"));
  EXPECT_EQ(MessageTypes(client.ReadUntilReady()), "TDCZ");
}

TEST_F(PgServerTest, CancelRequestWithTheRightKeyReachesTheHook) {
  std::atomic<int32_t> canceled{0};
  PgServerOptions options;
  options.on_cancel = [&canceled](int32_t process_id) { canceled = process_id; };
  StartServer(std::move(options));

  RawClient client(server_->port());
  auto startup = client.Startup();
  ASSERT_GE(startup.size(), 2u);
  const BackendMessage& key = startup[startup.size() - 2];
  ASSERT_EQ(key.type, 'K');
  auto process_id = static_cast<int32_t>(testing::ReadUint32(key.body, 0));
  auto secret_key = static_cast<int32_t>(testing::ReadUint32(key.body, 4));

  {
    RawClient wrong_key(server_->port());
    wrong_key.Send(testing::CancelRequestBytes(process_id, secret_key ^ 1));
    EXPECT_TRUE(wrong_key.ServerClosed());
  }
  EXPECT_EQ(canceled.load(), 0);
  {
    RawClient canceler(server_->port());
    canceler.Send(testing::CancelRequestBytes(process_id, secret_key));
    EXPECT_TRUE(canceler.ServerClosed());
  }
  EXPECT_EQ(canceled.load(), process_id);
}

TEST_F(PgServerTest, ProcessIdsDifferPerConnection) {
  RawClient first(server_->port());
  RawClient second(server_->port());
  auto a = first.Startup();
  auto b = second.Startup();
  ASSERT_GE(a.size(), 2u);
  ASSERT_GE(b.size(), 2u);
  EXPECT_NE(a[a.size() - 2].body.substr(0, 4), b[b.size() - 2].body.substr(0, 4));
}

TEST_F(PgServerTest, TooManyConnectionsAreRefused) {
  PgServerOptions options;
  options.max_connections = 1;
  StartServer(std::move(options));
  RawClient first(server_->port());
  first.Startup();
  RawClient second(server_->port());
  auto messages = second.ReadUntilReady();
  ASSERT_EQ(MessageTypes(messages), "E");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "53300");
  first.Send(QueryBytes("SELECT 1"));
  EXPECT_EQ(MessageTypes(first.ReadUntilReady()), "TDCZ");
}

TEST_F(PgServerTest, SilentClientIsDroppedAfterStartupTimeout) {
  PgServerOptions options;
  options.startup_timeout = std::chrono::milliseconds(200);
  StartServer(std::move(options));
  RawClient silent(server_->port());
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent.ServerClosed());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(PgServerTest, PortInUseFailsToStart) {
  PgServer other("127.0.0.1", server_->port(), scripted_.AsFactory());
  Status status = other.Start();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), Status::Code::kIoError);
  EXPECT_NE(status.message().find("Address already in use"), std::string::npos) << status.message();
}

TEST_F(PgServerTest, BadListenAddressFailsToStart) {
  PgServer other("not an address!", 0, scripted_.AsFactory());
  Status status = other.Start();
  EXPECT_FALSE(status.ok());
}

TEST_F(PgServerTest, StopClosesOpenConnections) {
  RawClient idle(server_->port());
  idle.Startup();
  RawClient mid_startup(server_->port());
  mid_startup.Send(testing::SslRequestBytes());
  EXPECT_EQ(mid_startup.ReadByte(), 'N');
  ASSERT_TRUE(WaitForConnectionCount(2));
  auto start = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(idle.ServerClosed());
  EXPECT_TRUE(mid_startup.ServerClosed());
  server_->Stop();  // Idempotent.
}

TEST_F(PgServerTest, StopWaitsForARunningStatement) {
  RawClient client(server_->port());
  client.Startup();
  client.Send(QueryBytes("SLEEP 300"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto start = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  EXPECT_EQ(server_->connection_count(), 0u);
}

}  // namespace
}  // namespace stave::server::pgwire
