#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace stave::server::pgwire {
class TcpServer;
}  // namespace stave::server::pgwire

namespace stave::server::http {

/// One HTTP request as the handler sees it.
struct HttpRequest {
  std::string method;  ///< "GET", "POST", ... as sent.
  std::string target;  ///< The request target as sent: "/jobs/3?verbose=1".
  std::string path;    ///< The target up to '?': "/jobs/3" (not percent-decoded).
  std::string query;   ///< The target after '?', empty if none: "verbose=1".
  /// Header (name, value) pairs in the order sent; names as sent.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  /// The value of the first header named `name` (case-insensitive), or "" if none.
  std::string_view Header(std::string_view name) const;
};

/// The handler's answer. The server adds Content-Length, Server and Connection headers.
struct HttpResponse {
  int status = 200;  ///< An HTTP status code, 100..599; anything else is sent as 500.
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  /// Further (name, value) headers, e.g. Location or Cache-Control.
  std::vector<std::pair<std::string, std::string>> headers;

  static HttpResponse Text(int status, std::string body);
  static HttpResponse Json(int status, std::string body);
};

/// Answers one request. Called concurrently from connection threads, so it must be
/// thread-safe. An exception it throws becomes a 500 response.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

/// Limits of an HttpServer; the defaults suit an admin endpoint.
struct HttpServerOptions {
  size_t max_connections = 64;
  /// Requests with a larger body get 413.
  size_t max_body_size = 8 * 1024 * 1024;
  /// A kept-alive connection idle this long is closed.
  std::chrono::milliseconds idle_timeout{30'000};
};

/// A small HTTP/1.1 server for the admin API (health, metrics, jobs) on Boost.Beast: each
/// connection is served on its own thread with blocking I/O, with keep-alive. Malformed
/// requests get 400 and the connection is closed; nothing a client sends can crash it.
///
/// Thread-safety: Start, Stop and port() may be called from any thread.
class HttpServer {
 public:
  /// Port 0 picks a free port; see port().
  HttpServer(std::string listen_address, uint16_t port, HttpHandler handler,
             HttpServerOptions options = {});
  /// Stops the server if it is still running.
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds, listens and accepts on a background thread. Fails with an IoError when the port
  /// is taken, or an InvalidArgument for a bad address. Call once.
  Status Start();

  /// Stops accepting, closes all connections and joins all threads (a handler still
  /// running is waited for). Idempotent; the destructor calls it.
  void Stop();

  /// The bound port, valid after a successful Start.
  uint16_t port() const;

 private:
  const HttpHandler handler_;
  const HttpServerOptions options_;
  std::unique_ptr<pgwire::TcpServer> tcp_server_;
};

}  // namespace stave::server::http
