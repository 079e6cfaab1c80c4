#include "server/http/http_server.h"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <stdexcept>
#include <string>

namespace stave::server::http {
namespace {

namespace beast_http = boost::beast::http;
using boost::asio::ip::tcp;

HttpResponse Route(const HttpRequest& request) {
  if (request.path == "/health") return HttpResponse::Text(200, "ok\n");
  if (request.path == "/echo") {
    return HttpResponse::Json(200, "{\"method\":\"" + request.method + "\",\"query\":\"" +
                                       request.query + "\",\"body\":\"" + request.body +
                                       "\",\"x\":\"" + std::string(request.Header("x-test")) +
                                       "\"}");
  }
  if (request.path == "/throw") throw std::runtime_error("handler bug");
  if (request.path == "/redirect") {
    HttpResponse response = HttpResponse::Text(302, "");
    response.headers.emplace_back("Location", "/health");
    response.headers.emplace_back("X-Evil", "a\r\nInjected: yes");
    return response;
  }
  if (request.path == "/bad-status") return HttpResponse::Text(1234, "odd");
  return HttpResponse::Text(404, "not found: " + request.path + "\n");
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServerOptions options;
    options.max_body_size = 1024;
    server_ = std::make_unique<HttpServer>("127.0.0.1", 0, Route, options);
    Status status = server_->Start();
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  tcp::socket Connect() {
    tcp::socket socket(io_context_);
    socket.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), server_->port()));
    return socket;
  }

  beast_http::response<beast_http::string_body> Request(tcp::socket& socket,
                                                        beast_http::verb method,
                                                        const std::string& target,
                                                        const std::string& body = "",
                                                        bool keep_alive = true) {
    beast_http::request<beast_http::string_body> request(method, target, 11);
    request.set(beast_http::field::host, "127.0.0.1");
    request.set("X-Test", "header value");
    request.body() = body;
    request.keep_alive(keep_alive);
    request.prepare_payload();
    beast_http::write(socket, request);
    boost::beast::flat_buffer buffer;
    beast_http::response<beast_http::string_body> response;
    if (method == beast_http::verb::head) {
      beast_http::response_parser<beast_http::string_body> parser;
      parser.skip(true);
      beast_http::read(socket, buffer, parser);
      return parser.release();
    }
    beast_http::read(socket, buffer, response);
    return response;
  }

  beast_http::response<beast_http::string_body> Get(const std::string& target) {
    tcp::socket socket = Connect();
    return Request(socket, beast_http::verb::get, target, "", /*keep_alive=*/false);
  }

  // Sends raw bytes and returns everything the server answers until it closes.
  std::string RawExchange(const std::string& bytes) {
    tcp::socket socket = Connect();
    boost::asio::write(socket, boost::asio::buffer(bytes));
    std::string answer;
    boost::system::error_code error;
    boost::asio::read(socket, boost::asio::dynamic_buffer(answer), error);
    return answer;
  }

  boost::asio::io_context io_context_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, GetReturnsHandlerResponse) {
  auto response = Get("/health");
  EXPECT_EQ(response.result_int(), 200u);
  EXPECT_EQ(response.body(), "ok\n");
  EXPECT_EQ(response[beast_http::field::content_type], "text/plain; charset=utf-8");
  EXPECT_EQ(response[beast_http::field::server], "Stave");
}

TEST_F(HttpServerTest, UnknownPathGetsHandlers404) {
  auto response = Get("/nope?x=1");
  EXPECT_EQ(response.result_int(), 404u);
  EXPECT_EQ(response.body(), "not found: /nope\n");
}

TEST_F(HttpServerTest, RequestPartsReachTheHandler) {
  tcp::socket socket = Connect();
  auto response = Request(socket, beast_http::verb::post, "/echo?a=1&b=2", "payload");
  EXPECT_EQ(response.result_int(), 200u);
  EXPECT_EQ(response[beast_http::field::content_type], "application/json");
  EXPECT_EQ(response.body(),
            "{\"method\":\"POST\",\"query\":\"a=1&b=2\",\"body\":\"payload\","
            "\"x\":\"header value\"}");
}

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  tcp::socket socket = Connect();
  for (int i = 0; i < 3; ++i) {
    auto response = Request(socket, beast_http::verb::get, "/health");
    EXPECT_EQ(response.result_int(), 200u);
    EXPECT_TRUE(response.keep_alive());
  }
  auto head = Request(socket, beast_http::verb::head, "/health");
  EXPECT_EQ(head.result_int(), 200u);
  EXPECT_EQ(head[beast_http::field::content_length], "3");
  // The HEAD response had no body, so the connection is still in step.
  auto response = Request(socket, beast_http::verb::get, "/nope");
  EXPECT_EQ(response.result_int(), 404u);
}

TEST_F(HttpServerTest, HandlerExceptionIs500) {
  auto response = Get("/throw");
  EXPECT_EQ(response.result_int(), 500u);
  EXPECT_EQ(response.body(), "internal server error\n");
  EXPECT_EQ(Get("/bad-status").result_int(), 500u);
}

TEST_F(HttpServerTest, UnsafeHeadersAreDropped) {
  auto response = Get("/redirect");
  EXPECT_EQ(response.result_int(), 302u);
  EXPECT_EQ(response[beast_http::field::location], "/health");
  EXPECT_EQ(response.count("X-Evil"), 0u);
  EXPECT_EQ(response.count("Injected"), 0u);
}

TEST_F(HttpServerTest, MalformedRequestsGet400) {
  for (const std::string& bad :
       {std::string("this is not http\r\n\r\n"), std::string("GET / HTTP/9.9\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\nContent-Length: abc\r\n\r\n"),
        std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11)}) {
    std::string answer = RawExchange(bad);
    EXPECT_EQ(answer.substr(0, 12), "HTTP/1.1 400") << answer;
  }
  EXPECT_EQ(Get("/health").result_int(), 200u);
}

TEST_F(HttpServerTest, OversizedBodyGets413) {
  std::string answer = RawExchange(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + std::string(5000, 'x'));
  EXPECT_EQ(answer.substr(0, 12), "HTTP/1.1 413") << answer;
}

TEST_F(HttpServerTest, ClientClosingEarlyIsHarmless) {
  {
    tcp::socket socket = Connect();
    boost::asio::write(socket, boost::asio::buffer(std::string("GET /hea")));
  }
  { tcp::socket socket = Connect(); }
  EXPECT_EQ(Get("/health").result_int(), 200u);
}

TEST_F(HttpServerTest, StopClosesIdleKeepAliveConnections) {
  tcp::socket socket = Connect();
  EXPECT_EQ(Request(socket, beast_http::verb::get, "/health").result_int(), 200u);
  auto start = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  char byte;
  boost::system::error_code error;
  socket.read_some(boost::asio::buffer(&byte, 1), error);
  EXPECT_TRUE(error);
}

TEST_F(HttpServerTest, PortInUseFailsToStart) {
  HttpServer other("127.0.0.1", server_->port(), Route);
  Status status = other.Start();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("Address already in use"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace stave::server::http
