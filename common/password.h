#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stave::password {

/// The iteration count of new SCRAM verifiers, PostgreSQL's default (scram_iterations).
inline constexpr int kScramIterations = 4096;
/// The salt length of new SCRAM verifiers, in bytes, as PostgreSQL's.
inline constexpr size_t kScramSaltLength = 16;
/// The random part the server adds to a SCRAM nonce, in bytes (before base64), as PostgreSQL's.
inline constexpr size_t kScramNonceLength = 18;

/// What a SCRAM-SHA-256 verifier holds: enough to check a password or a client proof and to
/// prove the server knows it, never the password itself (RFC 5802, section 3).
struct ScramVerifier {
  int iterations = kScramIterations;
  std::string salt;        ///< Raw bytes.
  std::string stored_key;  ///< H(ClientKey), 32 raw bytes.
  std::string server_key;  ///< HMAC(SaltedPassword, "Server Key"), 32 raw bytes.
};

/// Standard base64 with padding, no line breaks.
std::string Base64Encode(std::string_view bytes);
/// Decodes standard base64 with padding; nullopt for anything else.
std::optional<std::string> Base64Decode(std::string_view text);

/// `count` bytes from OpenSSL's cryptographically secure generator. Throws std::runtime_error
/// if the generator fails.
std::string RandomBytes(size_t count);

/// Makes a verifier for `password` with `salt` and `iterations` (PBKDF2-HMAC-SHA-256). The
/// password's bytes are used as given: PostgreSQL's SASLprep leaves ASCII unchanged.
ScramVerifier MakeScramVerifier(std::string_view password, std::string_view salt,
                                int iterations = kScramIterations);
/// A verifier with a fresh random salt.
ScramVerifier MakeScramVerifier(std::string_view password);

/// PostgreSQL's text form: `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`,
/// the three byte strings in base64, as pg_authid.rolpassword holds it.
std::string FormatScramVerifier(const ScramVerifier& verifier);
/// Reads the text form; nullopt when it is not one.
std::optional<ScramVerifier> ParseScramVerifier(std::string_view text);

/// Whether `password` is the one `verifier` was made from (cleartext password authentication).
bool ScramVerifierMatches(const ScramVerifier& verifier, std::string_view password);

/// PostgreSQL's MD5 password hash: "md5" followed by md5(password || user) in hex.
std::string Md5PasswordHash(std::string_view password, std::string_view user);
/// What a client answers to an MD5 challenge: "md5" followed by md5(hash without "md5" ||
/// salt) in hex, for the stored `md5_hash` (from Md5PasswordHash) and the 4-byte `salt`.
std::string Md5Response(std::string_view md5_hash, std::string_view salt);

/// Compares two byte strings in time that depends on their lengths only.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

/// The server's side of one SCRAM-SHA-256 exchange, without channel binding (RFC 5802 and
/// 7677 as PostgreSQL implements them: the user name in the messages is ignored, the startup
/// packet names the user). Not thread-safe; one per authentication attempt.
///
/// Usage: HandleClientFirst, send its result; HandleClientFinal, send its result as the
/// final message if it returns one; the client is authenticated if and only if
/// HandleClientFinal returned a value and `verifier` was the user's real one.
class ScramServerExchange {
 public:
  /// `verifier` is the user's, or a made-up one for a user that does not exist (so that the
  /// exchange looks the same and only its end fails). `server_nonce` is the random part the
  /// server adds; empty picks a fresh one.
  explicit ScramServerExchange(ScramVerifier verifier, std::string server_nonce = "");

  /// Reads the client-first-message and returns the server-first-message. Sets `error` and
  /// returns nullopt for a malformed message or one that asks for channel binding.
  std::optional<std::string> HandleClientFirst(std::string_view message, std::string* error);

  /// Reads the client-final-message and returns the server-final-message ("v=…") when the
  /// proof is right. Sets `error` and returns nullopt for a malformed message (`malformed`
  /// true) or a wrong proof (`malformed` false).
  std::optional<std::string> HandleClientFinal(std::string_view message, std::string* error,
                                               bool* malformed);

 private:
  ScramVerifier verifier_;
  std::string server_nonce_;
  std::string gs2_header_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string nonce_;  // The client's and the server's nonce together.
};

/// The client's side of the same computations, for tests and tools: the proof (base64) a
/// client sends for `password`, given the exchange's AuthMessage and the verifier's salt and
/// iterations; and the server signature it expects back.
std::string ScramClientProof(std::string_view password, std::string_view salt, int iterations,
                             std::string_view auth_message);
std::string ScramServerSignature(const ScramVerifier& verifier, std::string_view auth_message);

}  // namespace stave::password
