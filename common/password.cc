#include "common/password.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <charconv>
#include <stdexcept>
#include <vector>

#include "common/bytea.h"

namespace stave::password {
namespace {

constexpr std::string_view kScramPrefix = "SCRAM-SHA-256$";

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out,
           &length) == nullptr) {
    throw std::runtime_error("HMAC-SHA-256 failed");
  }
  return std::string(reinterpret_cast<const char*>(out), length);
}

std::string Sha256(std::string_view data) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), out);
  return std::string(reinterpret_cast<const char*>(out), sizeof(out));
}

std::string SaltedPassword(std::string_view password, std::string_view salt, int iterations) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()),
                        static_cast<int>(salt.size()), iterations, EVP_sha256(), sizeof(out),
                        out) != 1) {
    throw std::runtime_error("PBKDF2-HMAC-SHA-256 failed");
  }
  return std::string(reinterpret_cast<const char*>(out), sizeof(out));
}

std::string Xor(std::string_view a, std::string_view b) {
  std::string out(a.size(), '\0');
  for (size_t i = 0; i < a.size(); ++i) out[i] = static_cast<char>(a[i] ^ b[i]);
  return out;
}

// Splits `text` at commas into SCRAM attributes ("r=…").
std::vector<std::string_view> SplitAttributes(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return parts;
}

// The value of attribute `name` in `part` ("n=value"), or nullopt.
std::optional<std::string_view> Attribute(std::string_view part, char name) {
  if (part.size() < 2 || part[0] != name || part[1] != '=') return std::nullopt;
  return part.substr(2);
}

// RFC 5802's printable characters, as a nonce must consist of (any but ',').
bool IsValidNonce(std::string_view nonce) {
  if (nonce.empty()) return false;
  for (char c : nonce) {
    if (c < 0x21 || c > 0x7e || c == ',') return false;
  }
  return true;
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int length = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                               reinterpret_cast<const unsigned char*>(bytes.data()),
                               static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(length));
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool digit = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '+' || c == '/';
    // Padding only at the end, at most two.
    bool padding = c == '=' && i + 2 >= text.size() && (i + 1 == text.size() || text[i + 1] == '=');
    if (!digit && !padding) return std::nullopt;
  }
  std::string out(3 * text.size() / 4 + 1, '\0');
  int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                               reinterpret_cast<const unsigned char*>(text.data()),
                               static_cast<int>(text.size()));
  if (length < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes.
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') ++padding;
  if (text.size() >= 2 && text[text.size() - 2] == '=') ++padding;
  out.resize(static_cast<size_t>(length) - padding);
  return out;
}

std::string RandomBytes(size_t count) {
  std::string out(count, '\0');
  if (count > 0 &&
      RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(count)) != 1) {
    throw std::runtime_error("could not generate random bytes");
  }
  return out;
}

ScramVerifier MakeScramVerifier(std::string_view password, std::string_view salt, int iterations) {
  std::string salted = SaltedPassword(password, salt, iterations);
  ScramVerifier verifier;
  verifier.iterations = iterations;
  verifier.salt = std::string(salt);
  verifier.stored_key = Sha256(Hmac(salted, "Client Key"));
  verifier.server_key = Hmac(salted, "Server Key");
  return verifier;
}

ScramVerifier MakeScramVerifier(std::string_view password) {
  return MakeScramVerifier(password, RandomBytes(kScramSaltLength));
}

std::string FormatScramVerifier(const ScramVerifier& verifier) {
  return std::string(kScramPrefix) + std::to_string(verifier.iterations) + ":" +
         Base64Encode(verifier.salt) + "$" + Base64Encode(verifier.stored_key) + ":" +
         Base64Encode(verifier.server_key);
}

std::optional<ScramVerifier> ParseScramVerifier(std::string_view text) {
  if (!text.starts_with(kScramPrefix)) return std::nullopt;
  text.remove_prefix(kScramPrefix.size());
  size_t colon = text.find(':');
  size_t dollar = text.find('$');
  if (colon == std::string_view::npos || dollar == std::string_view::npos || colon > dollar) {
    return std::nullopt;
  }
  size_t key_colon = text.find(':', dollar);
  if (key_colon == std::string_view::npos) return std::nullopt;
  ScramVerifier verifier;
  std::string_view iterations = text.substr(0, colon);
  auto [end, error] = std::from_chars(iterations.data(), iterations.data() + iterations.size(),
                                      verifier.iterations);
  if (error != std::errc() || end != iterations.data() + iterations.size() ||
      verifier.iterations < 1) {
    return std::nullopt;
  }
  std::optional<std::string> salt = Base64Decode(text.substr(colon + 1, dollar - colon - 1));
  std::optional<std::string> stored_key =
      Base64Decode(text.substr(dollar + 1, key_colon - dollar - 1));
  std::optional<std::string> server_key = Base64Decode(text.substr(key_colon + 1));
  if (!salt || salt->empty() || !stored_key || stored_key->size() != SHA256_DIGEST_LENGTH ||
      !server_key || server_key->size() != SHA256_DIGEST_LENGTH) {
    return std::nullopt;
  }
  verifier.salt = std::move(*salt);
  verifier.stored_key = std::move(*stored_key);
  verifier.server_key = std::move(*server_key);
  return verifier;
}

bool ScramVerifierMatches(const ScramVerifier& verifier, std::string_view password) {
  ScramVerifier computed = MakeScramVerifier(password, verifier.salt, verifier.iterations);
  return ConstantTimeEquals(computed.stored_key, verifier.stored_key) &&
         ConstantTimeEquals(computed.server_key, verifier.server_key);
}

std::string Md5PasswordHash(std::string_view password, std::string_view user) {
  std::string input(password);
  input.append(user);
  return "md5" + bytea::Md5Hex(input);
}

std::string Md5Response(std::string_view md5_hash, std::string_view salt) {
  std::string input(md5_hash.substr(md5_hash.starts_with("md5") ? 3 : 0));
  input.append(salt);
  return "md5" + bytea::Md5Hex(input);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

ScramServerExchange::ScramServerExchange(ScramVerifier verifier, std::string server_nonce)
    : verifier_(std::move(verifier)), server_nonce_(std::move(server_nonce)) {
  if (server_nonce_.empty()) server_nonce_ = Base64Encode(RandomBytes(kScramNonceLength));
}

std::optional<std::string> ScramServerExchange::HandleClientFirst(std::string_view message,
                                                                  std::string* error) {
  // gs2-header: a channel-binding flag, an optional authzid, then client-first-message-bare.
  size_t first_comma = message.find(',');
  size_t second_comma =
      first_comma == std::string_view::npos ? first_comma : message.find(',', first_comma + 1);
  if (second_comma == std::string_view::npos) {
    *error = "malformed SCRAM message (no GS2 header)";
    return std::nullopt;
  }
  std::string_view flag = message.substr(0, first_comma);
  if (flag.starts_with("p=")) {
    *error = "channel binding is not supported by this server; use channel_binding=disable";
    return std::nullopt;
  }
  if (flag != "n" && flag != "y") {
    *error = "malformed SCRAM message (unexpected channel-binding flag)";
    return std::nullopt;
  }
  std::string_view authzid = message.substr(first_comma + 1, second_comma - first_comma - 1);
  if (!authzid.empty()) {
    *error = "client uses authorization identity, but it is not supported";
    return std::nullopt;
  }
  gs2_header_ = std::string(message.substr(0, second_comma + 1));
  client_first_bare_ = std::string(message.substr(second_comma + 1));
  std::vector<std::string_view> parts = SplitAttributes(client_first_bare_);
  if (parts.size() < 2 || parts[0].starts_with("m=") || !Attribute(parts[0], 'n')) {
    *error = "malformed SCRAM message (expected a user name attribute)";
    return std::nullopt;
  }
  std::optional<std::string_view> client_nonce = Attribute(parts[1], 'r');
  if (!client_nonce || !IsValidNonce(*client_nonce)) {
    *error = "malformed SCRAM message (expected a valid nonce attribute)";
    return std::nullopt;
  }
  nonce_ = std::string(*client_nonce) + server_nonce_;
  server_first_ = "r=" + nonce_ + ",s=" + Base64Encode(verifier_.salt) +
                  ",i=" + std::to_string(verifier_.iterations);
  return server_first_;
}

std::optional<std::string> ScramServerExchange::HandleClientFinal(std::string_view message,
                                                                  std::string* error,
                                                                  bool* malformed) {
  *malformed = true;
  if (server_first_.empty()) {
    *error = "malformed SCRAM message (final message before the first)";
    return std::nullopt;
  }
  size_t proof_at = message.rfind(",p=");
  if (proof_at == std::string_view::npos) {
    *error = "malformed SCRAM message (no proof)";
    return std::nullopt;
  }
  std::string_view without_proof = message.substr(0, proof_at);
  std::vector<std::string_view> parts = SplitAttributes(without_proof);
  std::optional<std::string_view> binding = Attribute(parts[0], 'c');
  if (!binding || Base64Decode(*binding) != gs2_header_) {
    *error = "SCRAM channel binding check failed";
    return std::nullopt;
  }
  std::optional<std::string_view> nonce =
      parts.size() > 1 ? Attribute(parts[1], 'r') : std::nullopt;
  if (!nonce || *nonce != nonce_) {
    *error = "SCRAM nonce mismatch";
    return std::nullopt;
  }
  std::optional<std::string> proof = Base64Decode(message.substr(proof_at + 3));
  if (!proof || proof->size() != SHA256_DIGEST_LENGTH) {
    *error = "malformed SCRAM message (invalid ClientProof)";
    return std::nullopt;
  }
  *malformed = false;
  std::string auth_message =
      client_first_bare_ + "," + server_first_ + "," + std::string(without_proof);
  std::string client_signature = Hmac(verifier_.stored_key, auth_message);
  std::string client_key = Xor(*proof, client_signature);
  if (!ConstantTimeEquals(Sha256(client_key), verifier_.stored_key)) {
    *error = "wrong SCRAM proof";
    return std::nullopt;
  }
  return "v=" + ScramServerSignature(verifier_, auth_message);
}

std::string ScramClientProof(std::string_view password, std::string_view salt, int iterations,
                             std::string_view auth_message) {
  std::string salted = SaltedPassword(password, salt, iterations);
  std::string client_key = Hmac(salted, "Client Key");
  std::string client_signature = Hmac(Sha256(client_key), auth_message);
  return Base64Encode(Xor(client_key, client_signature));
}

std::string ScramServerSignature(const ScramVerifier& verifier, std::string_view auth_message) {
  return Base64Encode(Hmac(verifier.server_key, auth_message));
}

}  // namespace stave::password
