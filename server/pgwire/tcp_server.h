#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"

namespace stave::server::pgwire {

/// Accepts TCP connections on one address and serves each one on a thread of its own with
/// blocking I/O. The shared base of the PostgreSQL and the HTTP admin servers: it owns
/// binding, the accept loop, the connection threads and their orderly shutdown.
///
/// Thread-safety: Start, Stop and the accessors may be called from any thread; Start and
/// Stop are meant to be called once each, by the owner.
class TcpServer {
 public:
  /// Serves one accepted connection until it ends, on the connection's own thread. The
  /// socket is closed after it returns. `connection_id` counts connections from 1.
  using ConnectionHandler =
      std::function<void(boost::asio::ip::tcp::socket& socket, uint64_t connection_id)>;
  /// Tells a client it cannot be served because `max_connections` are busy; runs on the
  /// accept thread, so it must not block (the socket is fresh: a short write does not).
  /// The socket is closed after it returns.
  using RejectHandler = std::function<void(boost::asio::ip::tcp::socket& socket)>;

  /// `name` only labels log lines ("pgwire", "http"). Port 0 picks a free port.
  TcpServer(std::string name, std::string listen_address, uint16_t port, size_t max_connections,
            ConnectionHandler handler, RejectHandler reject_handler);
  /// Stops the server if it is still running.
  ~TcpServer();

  TcpServer(const TcpServer&) = delete;
  TcpServer& operator=(const TcpServer&) = delete;

  /// Binds, listens and starts accepting on a background thread. Fails with an IoError (for
  /// example "address already in use") or an InvalidArgument for an unusable address.
  Status Start();

  /// Stops accepting, shuts down every open connection (their blocking reads and writes
  /// return at once) and joins all threads. A handler busy outside socket I/O (a running
  /// statement) is waited for. Idempotent.
  void Stop();

  /// The bound port, valid after a successful Start (the chosen one when asked for port 0).
  uint16_t port() const { return port_.load(); }

  /// The number of connections being served right now.
  size_t connection_count() const;
  /// Connections accepted and served, and refused for max_connections, since Start.
  uint64_t accepted_count() const { return accepted_.load(std::memory_order_relaxed); }
  uint64_t refused_count() const { return refused_.load(std::memory_order_relaxed); }

 private:
  struct Connection;

  void AcceptNext();
  void OnAccepted(boost::asio::ip::tcp::socket socket);
  void Serve(Connection* connection);
  // Joins the threads of connections that have ended. REQUIRES: mutex_ is held.
  void ReapFinishedConnectionsLocked();

  const std::string name_;
  const std::string listen_address_;
  const uint16_t requested_port_;
  const size_t max_connections_;
  const ConnectionHandler handler_;
  const RejectHandler reject_handler_;

  boost::asio::io_context io_context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread accept_thread_;
  std::atomic<uint16_t> port_{0};
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> refused_{0};

  std::mutex lifecycle_mutex_;  // Serializes Start and Stop.
  bool started_ = false;        // GUARDED_BY(lifecycle_mutex_)
  bool stopped_ = false;        // GUARDED_BY(lifecycle_mutex_)

  mutable std::mutex mutex_;
  bool stopping_ = false;                               // GUARDED_BY(mutex_)
  uint64_t next_connection_id_ = 1;                     // GUARDED_BY(mutex_)
  std::list<std::unique_ptr<Connection>> connections_;  // GUARDED_BY(mutex_)
};

}  // namespace stave::server::pgwire
