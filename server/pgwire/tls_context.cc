#include "server/pgwire/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <fmt/format.h>

namespace stave::server::pgwire {

std::string LastOpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

Result<std::unique_ptr<TlsContext>> TlsContext::Load(const std::string& certificate_file,
                                                     const std::string& key_file) {
  SSL_CTX* context = SSL_CTX_new(TLS_server_method());
  if (context == nullptr) return Status::InvalidArgument("TLS: " + LastOpenSslError());
  std::unique_ptr<TlsContext> owner(new TlsContext(context));
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  // Renegotiation and compression are off, as in PostgreSQL.
  SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
  if (SSL_CTX_use_certificate_chain_file(context, certificate_file.c_str()) != 1) {
    return Status::InvalidArgument(fmt::format("could not load server certificate file \"{}\": {}",
                                               certificate_file, LastOpenSslError()));
  }
  if (SSL_CTX_use_PrivateKey_file(context, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Status::InvalidArgument(
        fmt::format("could not load private key file \"{}\": {}", key_file, LastOpenSslError()));
  }
  if (SSL_CTX_check_private_key(context) != 1) {
    return Status::InvalidArgument(
        fmt::format("private key file \"{}\" does not match the certificate: {}", key_file,
                    LastOpenSslError()));
  }
  return owner;
}

TlsContext::~TlsContext() { SSL_CTX_free(context_); }

}  // namespace stave::server::pgwire
