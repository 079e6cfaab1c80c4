#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

namespace stave::server::pgwire {

/// A blocking, bidirectional byte stream to one client. The protocol code runs on this
/// rather than on a socket so that it can be driven from memory in tests. Used by one
/// thread at a time.
class ByteStream {
 public:
  virtual ~ByteStream() = default;

  /// Reads between 1 and `size` bytes into `data`, blocking until some are available.
  /// Returns 0 at end of stream, on an error, or when the read deadline passed.
  /// REQUIRES: size > 0.
  virtual size_t ReadSome(char* data, size_t size) = 0;

  /// Writes all of `data`. Returns false if the peer is gone or on any other error.
  virtual bool WriteAll(std::string_view data) = 0;

  /// Makes reads give up (return 0) once `deadline` has passed; nullopt waits forever.
  /// Used to bound the startup phase. Streams without a clock may ignore it.
  virtual void SetReadDeadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
    (void)deadline;
  }

  /// Whether StartTls can be called: the server has a certificate and key.
  virtual bool TlsAvailable() const { return false; }
  /// Runs the TLS handshake as the server; from then on reads and writes are encrypted.
  /// Returns false (with the reason in `error`) if the handshake failed.
  /// REQUIRES: TlsAvailable(), and no TLS started yet.
  virtual bool StartTls(std::string* error) {
    *error = "TLS is not available";
    return false;
  }
  /// Whether StartTls succeeded.
  virtual bool IsTls() const { return false; }
};

}  // namespace stave::server::pgwire
