// The authentication exchange of PgConnection: trust, cleartext password, MD5 and
// SCRAM-SHA-256, as PostgreSQL's backend runs them (src/backend/libpq/auth.c).

#include <spdlog/spdlog.h>

#include <optional>
#include <string>

#include "common/password.h"
#include "common/sql_error.h"
#include "server/pgwire/message_reader.h"
#include "server/pgwire/pg_connection.h"
#include "server/pgwire/protocol.h"

namespace stave::server::pgwire {
namespace {

// AuthenticationRequest codes of the 'R' message.
constexpr int32_t kAuthCleartextPassword = 3;
constexpr int32_t kAuthMd5Password = 5;
constexpr int32_t kAuthSasl = 10;
constexpr int32_t kAuthSaslContinue = 11;
constexpr int32_t kAuthSaslFinal = 12;

constexpr std::string_view kScramMechanism = "SCRAM-SHA-256";

// SQLSTATEs of authentication failures.
constexpr std::string_view kInvalidPassword = "28P01";
constexpr std::string_view kInvalidAuthorization = "28000";

}  // namespace

/// Authentication failed: the client gets a FATAL error with this SQLSTATE and message, and
/// the connection ends.
class PgConnection::AuthenticationFailed : public std::runtime_error {
 public:
  AuthenticationFailed(std::string_view sqlstate, const std::string& message)
      : std::runtime_error(message), sqlstate(sqlstate) {}
  std::string sqlstate;
};

bool PgConnection::Authenticate(const std::string& user) {
  try {
    RunAuthentication(user);
    return true;
  } catch (const AuthenticationFailed& failure) {
    spdlog::info("pgwire: connection {} from {}: authentication of user \"{}\" ({}) failed: {}",
                 config_.process_id, config_.peer, user, AuthMethodName(config_.auth_method),
                 failure.what());
    // The client learns only what PostgreSQL tells it; the reason stays in the server's log.
    std::string message = failure.sqlstate == kInvalidPassword
                              ? fmt::format("password authentication failed for user \"{}\"", user)
                              : failure.what();
    SendFatal(failure.sqlstate, message);
    return false;
  }
}

void PgConnection::RunAuthentication(const std::string& user) {
  if (user.empty()) {
    throw AuthenticationFailed(kInvalidAuthorization,
                               "no PostgreSQL user name specified in startup packet");
  }
  std::optional<UserCredentials> credentials;
  if (config_.credentials) credentials = config_.credentials(user);
  if (credentials && !credentials->can_login) {
    throw AuthenticationFailed(kInvalidAuthorization,
                               fmt::format("role \"{}\" is not permitted to log in", user));
  }
  if (config_.require_tls && !stream_->IsTls()) {
    throw AuthenticationFailed(
        kInvalidAuthorization,
        fmt::format("connection from {} for user \"{}\" is refused: no encryption (this server "
                    "requires SSL for connections that are not from loopback)",
                    config_.peer_address, user));
  }
  switch (config_.auth_method) {
    case AuthMethod::kTrust:
      return;  // As before passwords existed: any user name is accepted.
    case AuthMethod::kPassword:
      AuthenticateCleartext(credentials);
      return;
    case AuthMethod::kMd5:
      // As in PostgreSQL, a user whose password is kept only as a SCRAM verifier is asked
      // for SCRAM instead.
      if (credentials && credentials->md5_hash.empty() && !credentials->scram_verifier.empty()) {
        AuthenticateScram(credentials);
      } else {
        AuthenticateMd5(credentials);
      }
      return;
    case AuthMethod::kScramSha256:
      AuthenticateScram(credentials);
      return;
  }
}

void PgConnection::AuthenticateCleartext(const std::optional<UserCredentials>& credentials) {
  writer_.WriteAuthenticationRequest(kAuthCleartextPassword, "");
  Flush();
  std::string body = ReadPasswordMessage();
  MessageReader reader(body);
  std::string_view password = reader.ReadCString();
  reader.ExpectEnd();
  if (password.empty()) throw AuthenticationFailed(kInvalidPassword, "empty password returned");
  std::optional<password::ScramVerifier> verifier;
  if (credentials) verifier = password::ParseScramVerifier(credentials->scram_verifier);
  if (!credentials) throw AuthenticationFailed(kInvalidPassword, "the user does not exist");
  if (!verifier) throw AuthenticationFailed(kInvalidPassword, "the user has no password");
  if (!password::ScramVerifierMatches(*verifier, password)) {
    throw AuthenticationFailed(kInvalidPassword, "wrong password");
  }
}

void PgConnection::AuthenticateMd5(const std::optional<UserCredentials>& credentials) {
  std::string salt = password::RandomBytes(4);
  writer_.WriteAuthenticationRequest(kAuthMd5Password, salt);
  Flush();
  std::string body = ReadPasswordMessage();
  MessageReader reader(body);
  std::string_view response = reader.ReadCString();
  reader.ExpectEnd();
  if (!credentials) throw AuthenticationFailed(kInvalidPassword, "the user does not exist");
  if (credentials->md5_hash.empty()) {
    throw AuthenticationFailed(kInvalidPassword, "the user has no MD5 password");
  }
  if (!password::ConstantTimeEquals(password::Md5Response(credentials->md5_hash, salt), response)) {
    throw AuthenticationFailed(kInvalidPassword, "wrong password");
  }
}

void PgConnection::AuthenticateScram(const std::optional<UserCredentials>& credentials) {
  std::optional<password::ScramVerifier> verifier;
  if (credentials) verifier = password::ParseScramVerifier(credentials->scram_verifier);
  // An unknown user, or one without a password, still goes through the whole exchange with
  // a made-up verifier, so that a client cannot tell which user names exist; only the end
  // fails. (PostgreSQL's mock authentication does the same.)
  bool real = verifier.has_value();
  if (!real) verifier = password::MakeScramVerifier(password::RandomBytes(16));
  password::ScramServerExchange exchange(std::move(*verifier));

  std::string mechanisms(kScramMechanism);
  mechanisms.push_back('\0');
  mechanisms.push_back('\0');
  writer_.WriteAuthenticationRequest(kAuthSasl, mechanisms);
  Flush();

  std::string body = ReadPasswordMessage();
  MessageReader initial(body);
  std::string_view mechanism = initial.ReadCString();
  if (mechanism != kScramMechanism) {
    throw ProtocolError("client selected an invalid SASL authentication mechanism");
  }
  int32_t length = initial.ReadInt32();
  if (length < 0) throw ProtocolError("malformed SCRAM message (empty message)");
  std::string_view client_first = initial.ReadBytes(static_cast<size_t>(length));
  initial.ExpectEnd();
  std::string error;
  std::optional<std::string> server_first = exchange.HandleClientFirst(client_first, &error);
  if (!server_first) throw ProtocolError(error);
  writer_.WriteAuthenticationRequest(kAuthSaslContinue, *server_first);
  Flush();

  std::string client_final = ReadPasswordMessage();
  bool malformed = false;
  std::optional<std::string> server_final =
      exchange.HandleClientFinal(client_final, &error, &malformed);
  if (!server_final) {
    if (malformed) throw ProtocolError(error);
    throw AuthenticationFailed(kInvalidPassword, error);
  }
  if (!real) {
    throw AuthenticationFailed(
        kInvalidPassword, credentials ? "the user has no password" : "the user does not exist");
  }
  writer_.WriteAuthenticationRequest(kAuthSaslFinal, *server_final);
}

std::string PgConnection::ReadPasswordMessage() {
  char header[5];
  size_t read = Read(header, sizeof(header));
  // psql closes the connection when it is asked for a password it does not have yet, to
  // prompt for one and connect again: no error worth logging.
  if (read < sizeof(header))
    throw ConnectionLost("client closed the connection during authentication");
  if (header[0] != 'p') {
    throw ProtocolError(fmt::format("expected password response, got message type {}",
                                    static_cast<int>(static_cast<unsigned char>(header[0]))));
  }
  uint32_t length = DecodeUint32(header + 1);
  if (length < 4 || length > kMaxSmallMessageLength) {
    throw ProtocolError("invalid message length");
  }
  return ReadBody(length - 4);
}

}  // namespace stave::server::pgwire
