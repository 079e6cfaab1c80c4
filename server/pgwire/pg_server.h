#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>

#include "common/cancellation.h"
#include "common/status.h"
#include "server/pgwire/authentication.h"
#include "server/pgwire/protocol.h"
#include "server/query_session.h"

namespace stave::server::pgwire {

class TcpServer;
class TlsContext;

/// Tuning and hooks of a PgServer; the defaults suit production.
struct PgServerOptions {
  /// Connections beyond this many get FATAL 53300 "sorry, too many clients already".
  size_t max_connections = 1000;
  /// How long a client may take to send its StartupMessage; zero means no limit.
  std::chrono::milliseconds startup_timeout{60'000};
  /// The largest Query, Parse, Bind, FunctionCall or CopyData message accepted, length word
  /// included; at most kMaxMessageLength (1 GiB). See PgConnectionConfig.
  uint32_t max_message_length = kDefaultMaxMessageLength;
  /// Called for a CancelRequest whose (process id, secret key) matches a live connection,
  /// with that connection's process id, on the thread of the cancel connection, after the
  /// connection's running statement was asked to stop (see Cancellation). May be empty.
  std::function<void(int32_t process_id)> on_cancel;

  /// How clients connecting from a loopback address (127.0.0.0/8, ::1) authenticate, and
  /// how all others do. The defaults trust local clients only.
  AuthMethod loopback_auth = AuthMethod::kTrust;
  AuthMethod remote_auth = AuthMethod::kScramSha256;
  /// The users and their verifiers, for the password methods.
  CredentialLookup credentials;
  /// PEM files of the server's certificate (chain) and private key. Both set: an SSLRequest
  /// is answered 'S' and the connection switches to TLS; both empty: 'N' (plain text only).
  std::string tls_certificate_file;
  std::string tls_key_file;
  /// Refuse clients that are not on loopback unless they use TLS.
  bool require_tls_remote = false;
};

/// The PostgreSQL frontend/backend protocol v3 server: accepts clients (psql, libpq, JDBC,
/// ...) and serves each on its own thread through a QuerySession made by the factory.
///
/// Thread-safety: Start, Stop and the accessors may be called from any thread. The factory
/// is called concurrently from connection threads, so it must be thread-safe; every session
/// it makes is used by one thread only.
class PgServer {
 public:
  /// Listens on `listen_address` ("127.0.0.1", "0.0.0.0", "::", "localhost") and `port`
  /// (0 picks a free port; see port()).
  PgServer(std::string listen_address, uint16_t port, QuerySessionFactory session_factory,
           PgServerOptions options = {});
  /// Stops the server if it is still running.
  ~PgServer();

  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  /// Loads the TLS certificate and key if configured, binds and listens, then accepts on a
  /// background thread. Fails with an IoError naming the address when the port is taken, or
  /// an InvalidArgument for a bad address or unusable TLS files. Call once.
  Status Start();

  /// Stops accepting, closes every client connection and joins all threads. A statement
  /// still running in a session is waited for. Idempotent; the destructor calls it.
  void Stop();

  /// The bound port, valid after a successful Start.
  uint16_t port() const;

  /// The number of client connections open right now.
  size_t connection_count() const;
  /// Client connections accepted, and refused because max_connections were open, since Start.
  uint64_t accepted_connections() const;
  uint64_t refused_connections() const;

 private:
  struct BackendKey {
    int32_t process_id;
    int32_t secret_key;
    /// Stops the connection's running statement; shared with its session.
    std::shared_ptr<Cancellation> cancellation;
  };

  // Hands out the key of a new connection and remembers it for cancel requests.
  BackendKey RegisterConnection();
  void UnregisterConnection(int32_t process_id);
  void OnCancelRequest(int32_t process_id, int32_t secret_key);

  const QuerySessionFactory session_factory_;
  const PgServerOptions options_;
  std::unique_ptr<TcpServer> tcp_server_;
  std::unique_ptr<TlsContext> tls_context_;  // Set by Start when TLS is configured.

  std::mutex keys_mutex_;
  int32_t next_process_id_ = 1;                             // GUARDED_BY(keys_mutex_)
  std::unordered_map<int32_t, BackendKey> key_by_process_;  // GUARDED_BY(keys_mutex_)
  std::random_device random_device_;                        // GUARDED_BY(keys_mutex_)
};

}  // namespace stave::server::pgwire
