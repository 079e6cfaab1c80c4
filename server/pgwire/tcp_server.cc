#include "server/pgwire/tcp_server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <exception>
#include <system_error>
#include <utility>

#include "common/thread_name.h"

namespace stave::server::pgwire {

using boost::asio::ip::tcp;

namespace {

// Closing a socket with unread input makes the kernel send a reset, which can destroy a
// last message (such as a FATAL error) before the client reads it. So the sending side is
// shut down first and input that already arrived is discarded.
void CloseGracefully(tcp::socket& socket) {
  boost::system::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  socket.non_blocking(true, ignored);
  char scratch[4096];
  for (int i = 0; i < 16; ++i) {
    boost::system::error_code error;
    socket.read_some(boost::asio::buffer(scratch), error);
    if (error) break;
  }
  socket.close(ignored);
}

}  // namespace

/// One accepted connection and the thread serving it.
struct TcpServer::Connection {
  explicit Connection(tcp::socket accepted)
      : socket(std::move(accepted)), native_handle(socket.native_handle()) {}

  tcp::socket socket;
  const int native_handle;
  uint64_t id = 0;
  std::mutex socket_mutex;     // Orders Stop's shutdown before the serving thread's close.
  bool socket_closed = false;  // GUARDED_BY(socket_mutex)
  std::atomic<bool> finished{false};
  std::thread thread;
};

TcpServer::TcpServer(std::string name, std::string listen_address, uint16_t port,
                     size_t max_connections, ConnectionHandler handler,
                     RejectHandler reject_handler)
    : name_(std::move(name)),
      listen_address_(std::move(listen_address)),
      requested_port_(port),
      max_connections_(max_connections),
      handler_(std::move(handler)),
      reject_handler_(std::move(reject_handler)),
      acceptor_(io_context_) {}

TcpServer::~TcpServer() { Stop(); }

Status TcpServer::Start() {
  std::lock_guard<std::mutex> lifecycle_lock(lifecycle_mutex_);
  if (started_ || stopped_) {
    return Status::InvalidArgument(name_ + " server cannot be started more than once");
  }
  boost::system::error_code error;
  tcp::resolver resolver(io_context_);
  auto endpoints = resolver.resolve(listen_address_, std::to_string(requested_port_),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, error);
  if (error || endpoints.empty()) {
    return Status::InvalidArgument(
        fmt::format("{} server: cannot resolve listen address \"{}\": {}", name_, listen_address_,
                    error.message()));
  }
  tcp::endpoint endpoint = endpoints.begin()->endpoint();
  auto fail = [&](const char* step) {
    std::string message = fmt::format("{} server: could not {} {}:{}: {}", name_, step,
                                      listen_address_, requested_port_, error.message());
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    return Status::IoError(std::move(message));
  };
  acceptor_.open(endpoint.protocol(), error);
  if (error) return fail("open a socket for");
  // Lets a restarted server bind while old connections linger in TIME_WAIT; a port that
  // another socket listens on still fails.
  acceptor_.set_option(tcp::acceptor::reuse_address(true), error);
  if (error) return fail("set options on");
  acceptor_.bind(endpoint, error);
  if (error) return fail("bind to");
  acceptor_.listen(boost::asio::socket_base::max_listen_connections, error);
  if (error) return fail("listen on");
  tcp::endpoint local = acceptor_.local_endpoint(error);
  if (error) return fail("read the address of");
  port_ = local.port();
  started_ = true;
  AcceptNext();
  accept_thread_ = std::thread([this] {
    NameCurrentThread("stave:accept");
    try {
      io_context_.run();
    } catch (const std::exception& e) {
      spdlog::error("{} server: accept loop failed: {}", name_, e.what());
    }
  });
  spdlog::info("{} server listening on {}:{}", name_, local.address().to_string(), local.port());
  return Status::Ok();
}

void TcpServer::Stop() {
  std::lock_guard<std::mutex> lifecycle_lock(lifecycle_mutex_);
  if (stopped_) return;
  stopped_ = true;
  if (!started_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  // The acceptor belongs to the accept thread; closing it there ends the accept loop.
  boost::asio::post(io_context_, [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
  accept_thread_.join();
  boost::system::error_code ignored;
  acceptor_.close(ignored);

  std::list<std::unique_ptr<Connection>> connections;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    connections.swap(connections_);
  }
  for (const std::unique_ptr<Connection>& connection : connections) {
    std::lock_guard<std::mutex> socket_lock(connection->socket_mutex);
    // Shutting the socket down wakes a thread blocked reading or writing it. Only the
    // descriptor is touched: the socket object belongs to the serving thread.
    if (!connection->socket_closed) ::shutdown(connection->native_handle, SHUT_RDWR);
  }
  for (const std::unique_ptr<Connection>& connection : connections) {
    if (connection->thread.joinable()) connection->thread.join();
  }
  spdlog::info("{} server on port {} stopped", name_, port_.load());
}

size_t TcpServer::connection_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t count = 0;
  for (const std::unique_ptr<Connection>& connection : connections_) {
    if (!connection->finished.load()) ++count;
  }
  return count;
}

void TcpServer::AcceptNext() {
  acceptor_.async_accept([this](const boost::system::error_code& error, tcp::socket socket) {
    if (error == boost::asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (error) {
      // Typically out of file descriptors: wait a little instead of spinning.
      spdlog::warn("{} server: accept failed: {}", name_, error.message());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } else {
      OnAccepted(std::move(socket));
    }
    AcceptNext();
  });
}

void TcpServer::OnAccepted(tcp::socket socket) {
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  socket.set_option(boost::asio::socket_base::keep_alive(true), ignored);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ReapFinishedConnectionsLocked();
    if (stopping_) return;
    if (connections_.size() < max_connections_) {
      auto connection = std::make_unique<Connection>(std::move(socket));
      connection->id = next_connection_id_++;
      Connection* serving = connection.get();
      connections_.push_back(std::move(connection));
      try {
        serving->thread = std::thread([this, serving] {
          NameCurrentThread("stave:session");
          Serve(serving);
        });
        accepted_.fetch_add(1, std::memory_order_relaxed);
      } catch (const std::system_error& e) {
        spdlog::error("{} server: cannot start a connection thread: {}", name_, e.what());
        connections_.pop_back();
      }
      return;
    }
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("{} server: refusing a connection: {} connections are open", name_,
               max_connections_);
  try {
    if (reject_handler_) reject_handler_(socket);
  } catch (const std::exception& e) {
    spdlog::warn("{} server: rejecting a connection failed: {}", name_, e.what());
  }
  CloseGracefully(socket);
}

void TcpServer::Serve(Connection* connection) {
  try {
    handler_(connection->socket, connection->id);
  } catch (const std::exception& e) {
    spdlog::error("{} server: connection {} failed: {}", name_, connection->id, e.what());
  } catch (...) {
    spdlog::error("{} server: connection {} failed", name_, connection->id);
  }
  {
    std::lock_guard<std::mutex> socket_lock(connection->socket_mutex);
    CloseGracefully(connection->socket);
    connection->socket_closed = true;
  }
  connection->finished = true;
}

void TcpServer::ReapFinishedConnectionsLocked() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if ((*it)->finished.load()) {
      (*it)->thread.join();
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace stave::server::pgwire
