#pragma once

#include "executor/database.h"
#include "server/http/http_server.h"
#include "server/pgwire/pg_server.h"

namespace stave::server {

/// The HTTP admin endpoint's routes: `GET /healthz` (alive), `GET /metrics` (Prometheus
/// text format, names prefixed `stave_`). Everything else is 404.
http::HttpHandler MakeAdminHandler(executor::Database* database, const pgwire::PgServer* pg_server);

}  // namespace stave::server
