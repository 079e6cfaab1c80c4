#pragma once

#include <memory>
#include <string>

#include "common/status.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace stave::server::pgwire {

/// The server's TLS configuration (OpenSSL): its certificate and key, TLS 1.2 or newer.
/// Thread-safe once made: every connection's handshake shares it.
class TlsContext {
 public:
  /// Loads a PEM certificate (chain) and its private key. Fails with InvalidArgument naming
  /// the file and OpenSSL's reason when they cannot be read or do not match.
  static Result<std::unique_ptr<TlsContext>> Load(const std::string& certificate_file,
                                                  const std::string& key_file);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* native() const { return context_; }

 private:
  explicit TlsContext(SSL_CTX* context) : context_(context) {}
  SSL_CTX* context_;
};

/// OpenSSL's most recent error on this thread as text (and clears the queue).
std::string LastOpenSslError();

}  // namespace stave::server::pgwire
