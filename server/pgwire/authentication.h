#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace stave::server::pgwire {

/// How a connection proves who it is, named as in PostgreSQL's pg_hba.conf.
enum class AuthMethod {
  kTrust,        ///< Every client is accepted under the user name it gives.
  kPassword,     ///< The password in clear text (use it over TLS only).
  kMd5,          ///< A salted MD5 challenge; needs the user's MD5 hash.
  kScramSha256,  ///< SCRAM-SHA-256 (RFC 7677): the password never crosses the wire.
};

/// "trust", "password", "md5", "scram-sha-256".
std::string_view AuthMethodName(AuthMethod method);
/// The method of a name AuthMethodName gives; nullopt for any other.
std::optional<AuthMethod> ParseAuthMethod(std::string_view name);

/// What the server keeps of a user to authenticate it; never the password itself.
struct UserCredentials {
  /// PostgreSQL's text form of a SCRAM-SHA-256 verifier; empty when the user has no password
  /// (then only trust lets it in, as in PostgreSQL).
  std::string scram_verifier;
  /// "md5" followed by md5(password || user) in hex, for MD5 authentication; may be empty.
  std::string md5_hash;
  /// False for a role made NOLOGIN: refused whatever the method (28000).
  bool can_login = true;
};

/// Looks a user up by name; nullopt when there is none. Called concurrently from connection
/// threads, so it must be thread-safe.
using CredentialLookup = std::function<std::optional<UserCredentials>(std::string_view user)>;

}  // namespace stave::server::pgwire
