#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "executor/database.h"
#include "server/http/http_server.h"
#include "server/pgwire/pg_server.h"

namespace stave::server {

/// Who may use the admin endpoint and what it offers.
struct AdminOptions {
  /// The bearer token every endpoint but /healthz and /readyz requires; empty: none.
  std::string token;
  /// Whether POST /api/v1/failpoints exists (testing only: it can crash the server).
  bool enable_failpoints = false;
  /// The recovery at start, which /readyz and the API report on while the database opens.
  std::shared_ptr<const executor::RecoveryProgress> recovery;
};

/// Whether `address` is a loopback address (127.0.0.0/8, ::1, "localhost"), the only kind
/// the admin endpoint may listen on without a token.
bool IsLoopbackAddress(std::string_view address);

/// Whether a request's Authorization header carries `token`: as `Bearer <token>`, or as HTTP
/// Basic credentials whose password is the token (any user name), which is what a browser
/// sends for the dashboard after asking its user. Compared in constant time.
bool AuthorizationCarriesToken(std::string_view authorization, std::string_view token);

/// The HTTP admin endpoint's routes (see docs/admin.md):
/// - `GET /healthz`: the process is alive. `GET /readyz`: recovery finished, serving (503
///   before).
/// - `GET /metrics`: Prometheus text exposition, names prefixed `stave_`.
/// - `GET /api/v1/jobs`, `/api/v1/checkpoints`, `/api/v1/sinks`, `/api/v1/sources`,
///   `/api/v1/bad_records` (JSON); `POST /api/v1/checkpoints` takes a checkpoint and returns
///   its epoch; `POST /api/v1/backups` writes a backup (BACKUP TO) into the body's
///   `directory`; `POST /api/v1/failpoints` arms failpoints, only with `enable_failpoints`.
/// - `GET /`: the dashboard, a page that polls the JSON API.
/// With a token, everything but /healthz and /readyz answers 401 without
/// `Authorization: Bearer <token>`.
///
/// It is created before the database is opened, so /healthz answers during recovery; the
/// routes that need the database answer 503 until set_database. Thread-safe.
class AdminEndpoint {
 public:
  AdminEndpoint(AdminOptions options, const pgwire::PgServer* pg_server);

  /// Hands over the recovered database (which must outlive this endpoint's use).
  void set_database(executor::Database* database) {
    database_.store(database, std::memory_order_release);
  }
  /// Marks the server ready: recovered and accepting PostgreSQL connections.
  void set_ready(bool ready) { ready_.store(ready, std::memory_order_release); }

  http::HttpResponse Handle(const http::HttpRequest& request);
  /// A handler for HttpServer calling Handle; `this` must outlive the server.
  http::HttpHandler Handler() {
    return [this](const http::HttpRequest& request) { return Handle(request); };
  }

 private:
  /// Rows a second of one counter, from the sample taken at least a second before.
  double Rate(const std::string& key, uint64_t value);

  http::HttpResponse Metrics(executor::Database* database);
  http::HttpResponse Jobs(executor::Database* database);
  http::HttpResponse Checkpoints(executor::Database* database);
  http::HttpResponse Sinks(executor::Database* database);
  http::HttpResponse Backup(executor::Database* database, const http::HttpRequest& request);
  http::HttpResponse Failpoints(const http::HttpRequest& request);

  const AdminOptions options_;
  const pgwire::PgServer* pg_server_;
  std::atomic<executor::Database*> database_{nullptr};
  std::atomic<bool> ready_{false};

  struct RateSample {
    std::chrono::steady_clock::time_point time;
    uint64_t value = 0;
    double rate = 0;
  };
  std::mutex rates_mutex_;
  std::map<std::string, RateSample> rates_;  // GUARDED_BY(rates_mutex_)
};

}  // namespace stave::server
