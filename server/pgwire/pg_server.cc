#include "server/pgwire/pg_server.h"

#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <limits>
#include <optional>
#include <utility>

#include "server/pgwire/byte_stream.h"
#include "server/pgwire/message_writer.h"
#include "server/pgwire/pg_connection.h"
#include "server/pgwire/tcp_server.h"

namespace stave::server::pgwire {
namespace {

using boost::asio::ip::tcp;

/// A ByteStream over a connected, blocking socket. A read deadline is enforced with poll()
/// before each read.
class SocketByteStream : public ByteStream {
 public:
  explicit SocketByteStream(tcp::socket& socket) : socket_(socket) {}

  size_t ReadSome(char* data, size_t size) override {
    if (deadline_ && !WaitReadable()) return 0;
    boost::system::error_code error;
    size_t read = socket_.read_some(boost::asio::buffer(data, size), error);
    return error ? 0 : read;
  }

  bool WriteAll(std::string_view data) override {
    boost::system::error_code error;
    boost::asio::write(socket_, boost::asio::buffer(data.data(), data.size()), error);
    return !error;
  }

  void SetReadDeadline(std::optional<std::chrono::steady_clock::time_point> deadline) override {
    deadline_ = deadline;
  }

 private:
  // Waits until the socket is readable or the deadline passes; false on timeout.
  bool WaitReadable() {
    while (true) {
      // Rounded up, so that a timeout reported means the deadline has passed.
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline_ -
                                                               std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd descriptor{socket_.native_handle(), POLLIN, 0};
      int ready = ::poll(&descriptor, 1, static_cast<int>(std::min<int64_t>(left.count(), 60'000)));
      if (ready > 0) return true;
      if (ready < 0 && errno != EINTR) return true;  // Let the read report the error.
    }
  }

  tcp::socket& socket_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
};

}  // namespace

PgServer::PgServer(std::string listen_address, uint16_t port, QuerySessionFactory session_factory,
                   PgServerOptions options)
    : session_factory_(std::move(session_factory)), options_(std::move(options)) {
  auto serve = [this](tcp::socket& socket, uint64_t /*connection_id*/) {
    BackendKey key = RegisterConnection();
    struct Unregister {
      PgServer* server;
      int32_t process_id;
      ~Unregister() { server->UnregisterConnection(process_id); }
    } unregister{this, key.process_id};
    boost::system::error_code error;
    tcp::endpoint remote = socket.remote_endpoint(error);
    PgConnectionConfig config;
    config.process_id = key.process_id;
    config.secret_key = key.secret_key;
    config.peer =
        error ? "unknown" : remote.address().to_string() + ":" + std::to_string(remote.port());
    config.startup_timeout = options_.startup_timeout;
    config.max_message_length = options_.max_message_length;
    config.on_cancel_request = [this](int32_t process_id, int32_t secret_key) {
      OnCancelRequest(process_id, secret_key);
    };
    spdlog::debug("pgwire: connection {} accepted from {}", key.process_id, config.peer);
    SocketByteStream stream(socket);
    PgConnection connection(&stream, &session_factory_, std::move(config));
    connection.Run();
    spdlog::debug("pgwire: connection {} closed", key.process_id);
  };
  auto reject = [](tcp::socket& socket) {
    MessageWriter writer;
    ErrorFields fields;
    fields.severity = "FATAL";
    fields.sqlstate = "53300";  // too_many_connections
    fields.message = "sorry, too many clients already";
    writer.WriteErrorResponse(fields);
    boost::system::error_code ignored;
    socket.non_blocking(true, ignored);
    socket.write_some(boost::asio::buffer(writer.data()), ignored);
  };
  tcp_server_ =
      std::make_unique<TcpServer>("pgwire", std::move(listen_address), port,
                                  options_.max_connections, std::move(serve), std::move(reject));
}

PgServer::~PgServer() { Stop(); }

Status PgServer::Start() { return tcp_server_->Start(); }

void PgServer::Stop() { tcp_server_->Stop(); }

uint16_t PgServer::port() const { return tcp_server_->port(); }

size_t PgServer::connection_count() const { return tcp_server_->connection_count(); }

PgServer::BackendKey PgServer::RegisterConnection() {
  std::lock_guard<std::mutex> lock(keys_mutex_);
  BackendKey key;
  // Process ids are a counter that wraps, skipping ids of connections still open.
  do {
    key.process_id = next_process_id_;
    next_process_id_ =
        next_process_id_ == std::numeric_limits<int32_t>::max() ? 1 : next_process_id_ + 1;
  } while (secret_key_by_process_.contains(key.process_id));
  // The secret makes cancel requests unforgeable by other clients, so it comes from the
  // operating system's random source.
  key.secret_key = static_cast<int32_t>(random_device_());
  secret_key_by_process_[key.process_id] = key.secret_key;
  return key;
}

void PgServer::UnregisterConnection(int32_t process_id) {
  std::lock_guard<std::mutex> lock(keys_mutex_);
  secret_key_by_process_.erase(process_id);
}

void PgServer::OnCancelRequest(int32_t process_id, int32_t secret_key) {
  bool matches = false;
  {
    std::lock_guard<std::mutex> lock(keys_mutex_);
    auto it = secret_key_by_process_.find(process_id);
    matches = it != secret_key_by_process_.end() && it->second == secret_key;
  }
  if (!matches) {
    spdlog::debug("pgwire: ignoring a cancel request with an unknown key for connection {}",
                  process_id);
    return;
  }
  if (options_.on_cancel) {
    options_.on_cancel(process_id);
  } else {
    spdlog::info("pgwire: cancel request for connection {} (query cancellation not available)",
                 process_id);
  }
}

}  // namespace stave::server::pgwire
