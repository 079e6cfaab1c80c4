#include "server/pgwire/authentication.h"

namespace stave::server::pgwire {

std::string_view AuthMethodName(AuthMethod method) {
  switch (method) {
    case AuthMethod::kTrust:
      return "trust";
    case AuthMethod::kPassword:
      return "password";
    case AuthMethod::kMd5:
      return "md5";
    case AuthMethod::kScramSha256:
      return "scram-sha-256";
  }
  return "trust";
}

std::optional<AuthMethod> ParseAuthMethod(std::string_view name) {
  for (AuthMethod method :
       {AuthMethod::kTrust, AuthMethod::kPassword, AuthMethod::kMd5, AuthMethod::kScramSha256}) {
    if (AuthMethodName(method) == name) return method;
  }
  return std::nullopt;
}

}  // namespace stave::server::pgwire
