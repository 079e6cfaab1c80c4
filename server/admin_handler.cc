#include "server/admin_handler.h"

#include <fmt/format.h>

#include "common/version.h"

namespace stave::server {

http::HttpHandler MakeAdminHandler(executor::Database* database,
                                   const pgwire::PgServer* pg_server) {
  return [database, pg_server](const http::HttpRequest& request) {
    if (request.method != "GET" && request.method != "HEAD") {
      return http::HttpResponse::Text(405, "method not allowed\n");
    }
    if (request.path == "/healthz") return http::HttpResponse::Text(200, "ok\n");
    if (request.path == "/metrics") {
      std::string body = database->metrics()->RenderPrometheus();
      body += "# HELP stave_connections Open PostgreSQL protocol connections.\n";
      body += "# TYPE stave_connections gauge\n";
      body += fmt::format("stave_connections {}\n", pg_server->connection_count());
      body += "# HELP stave_build_info Build information.\n# TYPE stave_build_info gauge\n";
      body += fmt::format("stave_build_info{{version=\"{}\"}} 1\n", kStaveVersion);
      http::HttpResponse response = http::HttpResponse::Text(200, std::move(body));
      response.content_type = "text/plain; version=0.0.4; charset=utf-8";
      return response;
    }
    return http::HttpResponse::Text(404, "not found\n");
  };
}

}  // namespace stave::server
