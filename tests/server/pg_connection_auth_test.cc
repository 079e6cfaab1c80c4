// Authentication of a PgConnection: the messages of each method, driven by a client that
// answers the server's requests as libpq does (computing SCRAM proofs with common/password).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string>

#include "common/password.h"
#include "server/pgwire/byte_stream.h"
#include "server/pgwire/pg_connection.h"
#include "tests/server/scripted_query_session.h"
#include "tests/server/wire_transcript.h"

namespace stave::server::pgwire {
namespace {

using testing::AppendInt32;
using testing::BackendMessage;
using testing::ErrorField;
using testing::MessageBytes;
using testing::MessageTypes;
using testing::ParseBackendMessages;
using testing::ReadUint32;
using testing::StartupMessageBytes;

/// A client that sends its startup packet, then answers each authentication request the
/// server sends with `answer` (given the request's body); an empty answer hangs up.
class InteractiveStream : public ByteStream {
 public:
  using Answer = std::function<std::string(const std::string& request)>;
  InteractiveStream(std::string user, Answer answer) : answer_(std::move(answer)) {
    pending_ = StartupMessageBytes({{"user", user}, {"database", "stave"}});
  }

  size_t ReadSome(char* data, size_t size) override {
    if (pending_.empty()) {
      // The server waits for us: answer its last authentication request.
      std::vector<BackendMessage> messages = ParseBackendMessages(output_);
      if (messages.empty() || messages.size() == answered_ || messages.back().type != 'R') {
        return 0;
      }
      answered_ = messages.size();
      pending_ = answer_(messages.back().body);
      if (pending_.empty()) return 0;
    }
    size_t count = std::min(size, pending_.size());
    std::memcpy(data, pending_.data(), count);
    pending_.erase(0, count);
    return count;
  }

  bool WriteAll(std::string_view data) override {
    output_.append(data);
    return true;
  }

  std::vector<BackendMessage> messages() const { return ParseBackendMessages(output_); }

 private:
  Answer answer_;
  std::string pending_;
  std::string output_;
  size_t answered_ = 0;
};

std::string PasswordMessage(std::string_view body) { return MessageBytes('p', std::string(body)); }

std::string Terminate() { return MessageBytes('X', ""); }

// libpq's side of SCRAM-SHA-256 for `password`; `final` receives the server's last message.
InteractiveStream::Answer ScramClient(std::string password, std::string* server_final) {
  auto client_first_bare = std::make_shared<std::string>("n=,r=clientNonce123");
  auto auth_message = std::make_shared<std::string>();
  return [=](const std::string& request) -> std::string {
    uint32_t code = ReadUint32(request, 0);
    if (code == 10) {  // AuthenticationSASL: the mechanisms.
      EXPECT_EQ(request.substr(4), std::string("SCRAM-SHA-256\0\0", 15));
      std::string body("SCRAM-SHA-256\0", 14);
      std::string first = "n,," + *client_first_bare;
      AppendInt32(&body, static_cast<uint32_t>(first.size()));
      body += first;
      return PasswordMessage(body);
    }
    if (code == 11) {  // AuthenticationSASLContinue: r=…,s=…,i=…
      std::string server_first = request.substr(4);
      size_t salt_at = server_first.find(",s=");
      size_t iterations_at = server_first.find(",i=");
      std::string nonce = server_first.substr(2, salt_at - 2);
      EXPECT_TRUE(nonce.starts_with("clientNonce123")) << nonce;
      std::string salt =
          *password::Base64Decode(server_first.substr(salt_at + 3, iterations_at - salt_at - 3));
      int iterations = std::stoi(server_first.substr(iterations_at + 3));
      std::string without_proof = "c=biws,r=" + nonce;
      *auth_message = *client_first_bare + "," + server_first + "," + without_proof;
      return PasswordMessage(without_proof + ",p=" +
                             password::ScramClientProof(password, salt, iterations, *auth_message));
    }
    if (code == 12) {  // AuthenticationSASLFinal
      *server_final = request.substr(4);
      return "";
    }
    if (code == 0) return Terminate();
    ADD_FAILURE() << "unexpected authentication request " << code;
    return "";
  };
}

class PgConnectionAuthTest : public ::testing::Test {
 protected:
  PgConnectionAuthTest() {
    alice_.scram_verifier =
        password::FormatScramVerifier(password::MakeScramVerifier("wonderland", "saltsalt", 4096));
    alice_.md5_hash = password::Md5PasswordHash("wonderland", "alice");
  }

  std::vector<BackendMessage> Run(AuthMethod method, const std::string& user,
                                  InteractiveStream::Answer answer, bool require_tls = false) {
    InteractiveStream stream(user, std::move(answer));
    PgConnectionConfig config;
    config.peer = "test";
    config.peer_address = "192.0.2.1";
    config.require_tls = require_tls;
    config.auth_method = method;
    config.credentials = [this](std::string_view name) -> std::optional<UserCredentials> {
      if (name == "alice") return alice_;
      if (name == "carol") return UserCredentials{alice_.scram_verifier, "", false};
      return std::nullopt;
    };
    PgConnection connection(&stream, &factory_, std::move(config));
    connection.Run();
    return stream.messages();
  }

  testing::ScriptedSessionFactory scripted_;
  QuerySessionFactory factory_ = scripted_.AsFactory();
  UserCredentials alice_;
};

TEST_F(PgConnectionAuthTest, ScramSha256LogsInAndProvesTheServer) {
  std::string server_final;
  auto messages = Run(AuthMethod::kScramSha256, "alice", ScramClient("wonderland", &server_final));
  std::string types = MessageTypes(messages);
  ASSERT_TRUE(types.starts_with("RRRR")) << types;  // SASL, continue, final, Ok.
  // The final message and AuthenticationOk come together, as from PostgreSQL.
  EXPECT_EQ(ReadUint32(messages[2].body, 0), 12u);
  EXPECT_TRUE(messages[2].body.substr(4).starts_with("v=")) << messages[2].body;
  EXPECT_EQ(ReadUint32(messages[3].body, 0), 0u);
  EXPECT_EQ(types.back(), 'Z');
}

TEST_F(PgConnectionAuthTest, ScramWrongPasswordAndUnknownUserGet28P01) {
  for (std::string user : {"alice", "mallory"}) {
    std::string server_final;
    auto messages = Run(AuthMethod::kScramSha256, user, ScramClient("Wonderland", &server_final));
    ASSERT_EQ(MessageTypes(messages), "RRE") << user;
    EXPECT_EQ(ErrorField(messages[2], 'S'), "FATAL");
    EXPECT_EQ(ErrorField(messages[2], 'C'), "28P01");
    EXPECT_EQ(ErrorField(messages[2], 'M'),
              "password authentication failed for user \"" + user + "\"");
  }
}

TEST_F(PgConnectionAuthTest, CleartextPasswordIsCheckedAgainstTheVerifier) {
  auto answer = [](std::string password) {
    return [password](const std::string& request) -> std::string {
      if (ReadUint32(request, 0) == 3) return PasswordMessage(password + std::string(1, '\0'));
      return Terminate();
    };
  };
  auto ok = Run(AuthMethod::kPassword, "alice", answer("wonderland"));
  EXPECT_EQ(MessageTypes(ok).substr(0, 2), "RR");
  EXPECT_EQ(ReadUint32(ok[1].body, 0), 0u);
  auto wrong = Run(AuthMethod::kPassword, "alice", answer("wonder"));
  ASSERT_EQ(MessageTypes(wrong), "RE");
  EXPECT_EQ(ErrorField(wrong[1], 'C'), "28P01");
}

TEST_F(PgConnectionAuthTest, Md5ChallengeUsesTheSalt) {
  auto answer = [](std::string password) {
    return [password](const std::string& request) -> std::string {
      if (ReadUint32(request, 0) != 5) return Terminate();
      std::string response =
          password::Md5Response(password::Md5PasswordHash(password, "alice"), request.substr(4, 4));
      return PasswordMessage(response + std::string(1, '\0'));
    };
  };
  auto ok = Run(AuthMethod::kMd5, "alice", answer("wonderland"));
  EXPECT_EQ(MessageTypes(ok).substr(0, 2), "RR");
  EXPECT_EQ(ReadUint32(ok[1].body, 0), 0u);
  auto wrong = Run(AuthMethod::kMd5, "alice", answer("wonder"));
  ASSERT_EQ(MessageTypes(wrong), "RE");
  EXPECT_EQ(ErrorField(wrong[1], 'C'), "28P01");
}

TEST_F(PgConnectionAuthTest, NoLoginRoleIsRefusedWith28000EvenUnderTrust) {
  auto messages = Run(AuthMethod::kTrust, "carol", [](const std::string&) { return Terminate(); });
  ASSERT_EQ(MessageTypes(messages), "E");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "28000");
  EXPECT_EQ(ErrorField(messages[0], 'M'), "role \"carol\" is not permitted to log in");
}

TEST_F(PgConnectionAuthTest, PlainTextIsRefusedWhenTlsIsRequired) {
  auto messages = Run(
      AuthMethod::kTrust, "alice", [](const std::string&) { return Terminate(); },
      /*require_tls=*/true);
  ASSERT_EQ(MessageTypes(messages), "E");
  EXPECT_EQ(ErrorField(messages[0], 'C'), "28000");
  EXPECT_NE(ErrorField(messages[0], 'M').find("no encryption"), std::string::npos);
}

TEST_F(PgConnectionAuthTest, MalformedSaslMessageIsAProtocolViolation) {
  auto messages = Run(AuthMethod::kScramSha256, "alice", [](const std::string&) {
    std::string body("SCRAM-SHA-256\0", 14);
    AppendInt32(&body, 5);
    body += "bogus";
    return PasswordMessage(body);
  });
  ASSERT_EQ(MessageTypes(messages), "RE");
  EXPECT_EQ(ErrorField(messages[1], 'C'), "08P01");
}

}  // namespace
}  // namespace stave::server::pgwire
