#include "server/http/http_server.h"

#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cerrno>
#include <exception>

#include "server/pgwire/tcp_server.h"

namespace stave::server::http {
namespace {

namespace beast = boost::beast;
namespace beast_http = boost::beast::http;
using boost::asio::ip::tcp;

constexpr size_t kMaxHeaderSize = 64 * 1024;

bool EqualsIgnoreCase(std::string_view left, std::string_view right) {
  return std::equal(left.begin(), left.end(), right.begin(), right.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
}

// Header text with CR or LF would let a handler split the response.
bool IsSafeHeaderText(std::string_view text) {
  return text.find_first_of("\r\n") == std::string_view::npos;
}

// Waits until the socket has data (or was closed) for at most `timeout`; false on timeout.
bool WaitReadable(tcp::socket& socket, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd descriptor{socket.native_handle(), POLLIN, 0};
    int ready = ::poll(&descriptor, 1, static_cast<int>(std::min<int64_t>(left.count(), 60'000)));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return true;  // Let the read report the error.
  }
}

// Sends `response`; returns false if the client is gone.
bool Send(tcp::socket& socket, const HttpResponse& response, unsigned version, bool keep_alive,
          bool head_request) {
  beast_http::response<beast_http::string_body> message;
  message.version(version);
  int status = response.status >= 100 && response.status <= 599 ? response.status : 500;
  message.result(static_cast<unsigned>(status));
  message.set(beast_http::field::server, "Stave");
  if (IsSafeHeaderText(response.content_type)) {
    message.set(beast_http::field::content_type, response.content_type);
  }
  for (const auto& [name, value] : response.headers) {
    if (name.empty() || !IsSafeHeaderText(name) || !IsSafeHeaderText(value)) {
      spdlog::warn("http: dropping a response header with an invalid name or value");
      continue;
    }
    message.set(name, value);
  }
  message.body() = response.body;
  message.keep_alive(keep_alive);
  message.prepare_payload();
  // A HEAD response carries the headers of the GET response, Content-Length included, but
  // no body.
  if (head_request) message.body().clear();
  beast::error_code error;
  beast_http::write(socket, message, error);
  return !error;
}

void ServeConnection(tcp::socket& socket, const HttpHandler& handler,
                     const HttpServerOptions& options) {
  const boost::system::error_category& parse_errors =
      beast_http::make_error_code(beast_http::error::end_of_stream).category();
  beast::flat_buffer buffer;
  while (true) {
    if (buffer.size() == 0 && !WaitReadable(socket, options.idle_timeout)) return;
    beast_http::request_parser<beast_http::string_body> parser;
    parser.header_limit(kMaxHeaderSize);
    parser.body_limit(options.max_body_size);
    beast::error_code error;
    beast_http::read(socket, buffer, parser, error);
    if (error == beast_http::error::end_of_stream) return;  // Closed between requests.
    if (error) {
      if (error.category() != parse_errors) return;  // The socket failed; nobody to tell.
      HttpResponse response;
      if (error == beast_http::error::body_limit) {
        response = HttpResponse::Text(413, "request body too large\n");
      } else if (error == beast_http::error::header_limit) {
        response = HttpResponse::Text(431, "request header fields too large\n");
      } else {
        response = HttpResponse::Text(400, "bad request: " + error.message() + "\n");
      }
      spdlog::debug("http: bad request: {}", error.message());
      Send(socket, response, 11, /*keep_alive=*/false, /*head_request=*/false);
      return;
    }

    beast_http::request<beast_http::string_body>& message = parser.get();
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    size_t question_mark = request.target.find('?');
    request.path = request.target.substr(0, question_mark);
    if (question_mark != std::string::npos)
      request.query = request.target.substr(question_mark + 1);
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());

    HttpResponse response;
    try {
      response = handler(request);
    } catch (const std::exception& e) {
      spdlog::error("http: handler failed for {} {}: {}", request.method, request.target, e.what());
      response = HttpResponse::Text(500, "internal server error\n");
    } catch (...) {
      spdlog::error("http: handler failed for {} {}", request.method, request.target);
      response = HttpResponse::Text(500, "internal server error\n");
    }
    spdlog::debug("http: {} {} -> {}", request.method, request.target, response.status);
    bool keep_alive = message.keep_alive();
    if (!Send(socket, response, message.version(), keep_alive, request.method == "HEAD")) return;
    if (!keep_alive) {
      boost::system::error_code ignored;
      socket.shutdown(tcp::socket::shutdown_send, ignored);
      return;
    }
  }
}

}  // namespace

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return {};
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = std::move(body);
  return response;
}

HttpServer::HttpServer(std::string listen_address, uint16_t port, HttpHandler handler,
                       HttpServerOptions options)
    : handler_(std::move(handler)), options_(options) {
  auto serve = [this](tcp::socket& socket, uint64_t connection_id) {
    spdlog::debug("http: connection {} accepted", connection_id);
    ServeConnection(socket, handler_, options_);
    spdlog::debug("http: connection {} closed", connection_id);
  };
  auto reject = [](tcp::socket& socket) {
    static constexpr std::string_view kBusy =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 17\r\n"
        "Connection: close\r\n\r\ntoo many clients\n";
    boost::system::error_code ignored;
    socket.non_blocking(true, ignored);
    socket.write_some(boost::asio::buffer(kBusy.data(), kBusy.size()), ignored);
  };
  tcp_server_ = std::make_unique<pgwire::TcpServer>("http", std::move(listen_address), port,
                                                    options_.max_connections, std::move(serve),
                                                    std::move(reject));
}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() { return tcp_server_->Start(); }

void HttpServer::Stop() { tcp_server_->Stop(); }

uint16_t HttpServer::port() const { return tcp_server_->port(); }

}  // namespace stave::server::http
