// libFuzzer target: the PostgreSQL protocol server (server/pgwire/) reading whatever a client
// may send. The input is the client's side of one connection, from the first byte of the
// startup packet on; the first input byte picks the authentication method, so the password,
// MD5 and SCRAM exchanges are fuzzed as well as trust. Statements run in the scripted
// session of the protocol tests, which answers with rows of every type in text and binary,
// errors, notices and transaction states without a database behind it.
//
// Properties: no crash, no sanitizer report, no leak, and PgConnection::Run returns (it
// must never throw, whatever the bytes).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "common/password.h"
#include "server/pgwire/byte_stream.h"
#include "server/pgwire/pg_connection.h"
#include "tests/server/scripted_query_session.h"

namespace stave::server::pgwire {
namespace {

/// A client that sends the fuzzer's bytes, a few at a time, and whose answers are dropped.
class FuzzedClientStream : public ByteStream {
 public:
  FuzzedClientStream(std::string_view input, size_t max_read)
      : input_(input), max_read_(max_read) {}

  size_t ReadSome(char* data, size_t size) override {
    size_t count = std::min({size, max_read_, input_.size() - position_});
    std::memcpy(data, input_.data() + position_, count);
    position_ += count;
    return count;
  }

  bool WriteAll(std::string_view data) override {
    written_ += data.size();
    return true;
  }

 private:
  std::string_view input_;
  size_t position_ = 0;
  size_t max_read_;
  size_t written_ = 0;
};

const UserCredentials& Alice() {
  // Few SCRAM iterations: each input that reaches the proof pays for them.
  static const UserCredentials credentials{
      password::FormatScramVerifier(password::MakeScramVerifier("wonderland", "saltsalt", 16)),
      password::Md5PasswordHash("wonderland", "alice"), true};
  return credentials;
}

// Whether a "rows N" of the scripted session asks for 10000 rows or more.
bool AsksForManyRows(std::string_view input) {
  for (size_t at = input.find("rows "); at != std::string_view::npos;
       at = input.find("rows ", at + 1)) {
    size_t digits = 0;
    size_t i = at + 5;
    while (i < input.size() && (input[i] == '0' || input[i] == ' ' || input[i] == '+')) ++i;
    while (i + digits < input.size() && input[i + digits] >= '0' && input[i + digits] <= '9') {
      ++digits;
    }
    if (digits >= 5) return true;
  }
  return false;
}

}  // namespace
}  // namespace stave::server::pgwire

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stave::server::pgwire;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // The scripted session's "SLEEP n" really sleeps, and "SELECT rows n" makes n rows: slow
  // inputs, not findings.
  if (input.find("SLEEP") != std::string_view::npos || AsksForManyRows(input)) return 0;
  if (input.empty()) return 0;
  auto selector = static_cast<uint8_t>(input.front());
  input.remove_prefix(1);

  PgConnectionConfig config;
  config.process_id = 42;
  config.secret_key = 1234567;
  config.peer = "fuzz";
  config.peer_address = "192.0.2.1";
  config.auth_method = static_cast<AuthMethod>(selector % 4);
  config.credentials = [](std::string_view user) -> std::optional<UserCredentials> {
    if (user == "alice") return Alice();
    return std::nullopt;
  };
  // Small limits, so that the paths of too-long messages and of flushing mid-result run.
  config.max_message_length = 4096;
  config.flush_threshold = 256;
  config.on_cancel_request = [](int32_t, int32_t) {};

  stave::server::testing::ScriptedSessionFactory scripted;
  stave::server::QuerySessionFactory factory = scripted.AsFactory();
  // Bits 2-3 of the selector: hand the input out whole or in small pieces.
  const size_t kReadSizes[] = {SIZE_MAX, 1, 3, 64};
  FuzzedClientStream stream(input, kReadSizes[(selector >> 2) % 4]);
  PgConnection connection(&stream, &factory, std::move(config));
  connection.Run();
  return 0;
}
