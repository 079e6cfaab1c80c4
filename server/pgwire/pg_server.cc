#include "server/pgwire/pg_server.h"

#include <openssl/ssl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>

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
#include "server/pgwire/tls_context.h"

namespace stave::server::pgwire {
namespace {

using boost::asio::ip::tcp;

/// A ByteStream over a connected, blocking socket, switched to TLS on request when the
/// server has a TlsContext. A read deadline is enforced with poll() before each read.
class SocketByteStream : public ByteStream {
 public:
  SocketByteStream(tcp::socket& socket, const TlsContext* tls_context)
      : socket_(socket), tls_context_(tls_context) {}

  ~SocketByteStream() override {
    if (ssl_ != nullptr) {
      SSL_shutdown(ssl_);  // Best effort: tells the client the session ends on purpose.
      SSL_free(ssl_);
    }
  }

  size_t ReadSome(char* data, size_t size) override {
    if (ssl_ != nullptr) {
      if (deadline_ && SSL_pending(ssl_) == 0 && !WaitReadable()) return 0;
      int read = SSL_read(ssl_, data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
      return read > 0 ? static_cast<size_t>(read) : 0;
    }
    if (deadline_ && !WaitReadable()) return 0;
    boost::system::error_code error;
    size_t read = socket_.read_some(boost::asio::buffer(data, size), error);
    return error ? 0 : read;
  }

  bool WriteAll(std::string_view data) override {
    if (ssl_ != nullptr) {
      while (!data.empty()) {
        int written =
            SSL_write(ssl_, data.data(), static_cast<int>(std::min<size_t>(data.size(), 1 << 30)));
        if (written <= 0) return false;
        data.remove_prefix(static_cast<size_t>(written));
      }
      return true;
    }
    boost::system::error_code error;
    boost::asio::write(socket_, boost::asio::buffer(data.data(), data.size()), error);
    return !error;
  }

  void SetReadDeadline(std::optional<std::chrono::steady_clock::time_point> deadline) override {
    deadline_ = deadline;
  }

  bool TlsAvailable() const override { return tls_context_ != nullptr; }

  bool StartTls(std::string* error) override {
    ssl_ = SSL_new(tls_context_->native());
    if (ssl_ == nullptr) {
      *error = LastOpenSslError();
      return false;
    }
    boost::system::error_code ignored;
    socket_.non_blocking(false, ignored);
    socket_.native_non_blocking(false, ignored);
    int descriptor = socket_.native_handle();
    // The handshake's reads are bounded by the startup deadline through the socket's
    // receive timeout, then the timeout is lifted again.
    SetReceiveTimeout(descriptor);
    SSL_set_fd(ssl_, descriptor);
    int result = SSL_accept(ssl_);
    timeval none{};
    ::setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
    if (result != 1) {
      *error = LastOpenSslError();
      SSL_free(ssl_);
      ssl_ = nullptr;
      return false;
    }
    return true;
  }

  bool IsTls() const override { return ssl_ != nullptr; }

 private:
  void SetReceiveTimeout(int descriptor) {
    if (!deadline_) return;
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(
        *deadline_ - std::chrono::steady_clock::now());
    int64_t micros = std::max<int64_t>(left.count(), 1000);
    timeval timeout{};
    timeout.tv_sec = static_cast<time_t>(micros / 1'000'000);
    timeout.tv_usec = static_cast<suseconds_t>(micros % 1'000'000);
    ::setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }

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
  const TlsContext* tls_context_;
  SSL* ssl_ = nullptr;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
};

// Whether a client connects from this machine; an IPv4 address mapped into IPv6 (a server
// listening on "::") counts by its IPv4 form.
bool IsLoopback(const boost::asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6())
        .is_loopback();
  }
  return address.is_loopback();
}

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
    config.cancellation = key.cancellation;
    config.peer =
        error ? "unknown" : remote.address().to_string() + ":" + std::to_string(remote.port());
    config.peer_address = error ? "unknown" : remote.address().to_string();
    bool loopback = !error && IsLoopback(remote.address());
    config.auth_method = loopback ? options_.loopback_auth : options_.remote_auth;
    config.require_tls = options_.require_tls_remote && !loopback;
    config.credentials = options_.credentials;
    config.startup_timeout = options_.startup_timeout;
    config.max_message_length = options_.max_message_length;
    config.on_cancel_request = [this](int32_t process_id, int32_t secret_key) {
      OnCancelRequest(process_id, secret_key);
    };
    spdlog::debug("pgwire: connection {} accepted from {}", key.process_id, config.peer);
    SocketByteStream stream(socket, tls_context_.get());
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

Status PgServer::Start() {
  if (options_.tls_certificate_file.empty() != options_.tls_key_file.empty()) {
    return Status::InvalidArgument("TLS needs both a certificate file and a key file");
  }
  if (!options_.tls_certificate_file.empty()) {
    Result<std::unique_ptr<TlsContext>> context =
        TlsContext::Load(options_.tls_certificate_file, options_.tls_key_file);
    if (!context.ok()) return context.status();
    tls_context_ = std::move(context).value();
  }
  return tcp_server_->Start();
}

void PgServer::Stop() { tcp_server_->Stop(); }

uint16_t PgServer::port() const { return tcp_server_->port(); }

size_t PgServer::connection_count() const { return tcp_server_->connection_count(); }
uint64_t PgServer::accepted_connections() const { return tcp_server_->accepted_count(); }
uint64_t PgServer::refused_connections() const { return tcp_server_->refused_count(); }

PgServer::BackendKey PgServer::RegisterConnection() {
  std::lock_guard<std::mutex> lock(keys_mutex_);
  BackendKey key;
  // Process ids are a counter that wraps, skipping ids of connections still open.
  do {
    key.process_id = next_process_id_;
    next_process_id_ =
        next_process_id_ == std::numeric_limits<int32_t>::max() ? 1 : next_process_id_ + 1;
  } while (key_by_process_.contains(key.process_id));
  // The secret makes cancel requests unforgeable by other clients, so it comes from the
  // operating system's random source.
  key.secret_key = static_cast<int32_t>(random_device_());
  key.cancellation = std::make_shared<Cancellation>();
  key_by_process_[key.process_id] = key;
  return key;
}

void PgServer::UnregisterConnection(int32_t process_id) {
  std::lock_guard<std::mutex> lock(keys_mutex_);
  key_by_process_.erase(process_id);
}

void PgServer::OnCancelRequest(int32_t process_id, int32_t secret_key) {
  std::shared_ptr<Cancellation> cancellation;
  {
    std::lock_guard<std::mutex> lock(keys_mutex_);
    auto it = key_by_process_.find(process_id);
    if (it != key_by_process_.end() && it->second.secret_key == secret_key) {
      cancellation = it->second.cancellation;
    }
  }
  if (!cancellation) {
    spdlog::debug("pgwire: ignoring a cancel request with an unknown key for connection {}",
                  process_id);
    return;
  }
  spdlog::info("pgwire: cancel request for connection {}", process_id);
  cancellation->Cancel();
  if (options_.on_cancel) options_.on_cancel(process_id);
}

}  // namespace stave::server::pgwire
