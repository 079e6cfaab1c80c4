// staved: the Stave server. Opens (and recovers) the data directory, then serves the
// PostgreSQL protocol and the HTTP admin endpoint until SIGTERM or SIGINT.

#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "common/failpoint.h"
#include "common/sql_error.h"
#include "common/version.h"
#include "executor/connectors/connectors.h"
#include "executor/database.h"
#include "server/admin_handler.h"
#include "server/flag_values.h"
#include "server/http/http_server.h"
#include "server/pgwire/pg_server.h"
#include "server/session.h"

namespace {

// Every connection holds a socket, and RocksDB keeps its files open: a soft limit of 1024
// descriptors (the usual default) would end well before --max-connections. The soft limit
// is raised to the hard one, which needs no privilege. Returns the limit in force.
rlim_t RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return RLIM_INFINITY;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) return raised.rlim_cur;
  }
  return limit.rlim_cur;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"staved — the Stave streaming SQL database server"};
  stave::executor::DatabaseOptions options;
  options.data_directory = "stave-data";
  std::string listen = "127.0.0.1";
  uint16_t pg_port = 4566;
  uint16_t http_port = 4567;
  std::string checkpoint_interval = "1s";
  std::string log_level = "info";
  std::string state_memory = "256MB";
  std::string state_cache = "512MB";
  app.add_option("--data-dir", options.data_directory, "Where the RocksDB state lives")
      ->capture_default_str();
  app.add_option("--listen", listen, "Address to listen on")->capture_default_str();
  app.add_option("--pg-port", pg_port, "PostgreSQL protocol port (0 picks a free one)")
      ->capture_default_str();
  app.add_option("--http-port", http_port, "HTTP admin port (0 picks a free one)")
      ->capture_default_str();
  app.add_option("--checkpoint-interval", checkpoint_interval,
                 "Time between checkpoints, e.g. 1s, 200ms; 0 = only on demand")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  app.add_option("--state-memory", state_memory,
                 "Uncommitted view state held in memory before a checkpoint is taken early")
      ->capture_default_str();
  app.add_option("--state-cache", state_cache,
                 "Committed state each view keeps cached in memory (an aggregate's groups)")
      ->capture_default_str();
  stave::server::pgwire::PgServerOptions pg_options;
  std::string max_message_size = "64MB";
  app.add_option("--max-connections", pg_options.max_connections,
                 "Client connections served at once; more get FATAL 53300")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--max-message-size", max_message_size,
                 "Largest Query, Parse or Bind message accepted (at most 1GB); a larger one "
                 "ends its connection with FATAL 08P01")
      ->capture_default_str();
  app.add_option("--workers", options.workers, "Threads running the dataflows (0 = one per core)")
      ->capture_default_str();
  app.add_option("--streaming-parallelism", options.streaming_parallelism,
                 "Parallel instances per stage of a view (0 = one per worker); "
                 "SET streaming_parallelism overrides it for a session's new views")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_flag("--enable-failpoints", options.enable_failpoints,
               "Let clients arm failpoints with SET stave.failpoints (testing only)");
  app.set_version_flag("--version", std::string(stave::kStaveVersion));
  CLI11_PARSE(app, argc, argv);

  spdlog::set_level(spdlog::level::from_str(log_level));
  std::optional<std::chrono::milliseconds> interval =
      stave::server::ParseDuration(checkpoint_interval);
  if (!interval) {
    fmt::print(stderr,
               "staved: --checkpoint-interval: cannot read \"{}\" (use e.g. 1s, 200ms, 0)\n",
               checkpoint_interval);
    return 2;
  }
  options.checkpoint_interval = *interval;
  options.checkpoint_interval_explicit = app.count("--checkpoint-interval") > 0;
  auto byte_size = [](const std::string& flag, const std::string& text, size_t* out) {
    std::optional<size_t> bytes = stave::server::ParseByteSize(text);
    if (!bytes) {
      fmt::print(stderr, "staved: {}: cannot read \"{}\" (use e.g. 256MB, 1GB)\n", flag, text);
      return false;
    }
    *out = *bytes;
    return true;
  };
  if (!byte_size("--state-memory", state_memory, &options.state_memory_bytes) ||
      !byte_size("--state-cache", state_cache, &options.state_cache_bytes)) {
    return 2;
  }
  std::optional<size_t> message_bytes = stave::server::ParseByteSize(max_message_size);
  if (!message_bytes || *message_bytes < 1024 ||
      *message_bytes > stave::server::pgwire::kMaxMessageLength) {
    fmt::print(stderr, "staved: --max-message-size: \"{}\" is not a size from 1kB to 1GB\n",
               max_message_size);
    return 2;
  }
  pg_options.max_message_length = static_cast<uint32_t>(*message_bytes);
  rlim_t open_files = RaiseOpenFileLimit();
  // Each connection takes one descriptor; RocksDB, the listeners and sinks need some more.
  constexpr rlim_t kDescriptorsBesidesConnections = 256;
  if (open_files != RLIM_INFINITY &&
      open_files < pg_options.max_connections + kDescriptorsBesidesConnections) {
    spdlog::warn(
        "only {} file descriptors may be open (ulimit -n): fewer than --max-connections={} "
        "connections can be served",
        open_files, pg_options.max_connections);
  }
  std::string failpoint_error;
  if (!stave::failpoint::ArmFromEnvironment(&failpoint_error)) {
    fmt::print(stderr, "staved: STAVE_FAILPOINTS: {}\n", failpoint_error);
    return 2;
  }

  // Signals are taken by sigwait below; every thread started from here inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  stave::planner::ConnectorRegistry connectors;
  stave::executor::RegisterBuiltinConnectors(&connectors);
  std::unique_ptr<stave::executor::Database> database;
  try {
    database = stave::executor::Database::Open(options, &connectors);
  } catch (const stave::SqlError& error) {
    spdlog::critical("cannot open the database in \"{}\": {}", options.data_directory,
                     error.what());
    return 1;
  }

  stave::server::pgwire::PgServer pg_server(
      listen, pg_port,
      [&](const std::vector<std::pair<std::string, std::string>>& parameters) {
        return std::make_unique<stave::server::Session>(database.get(), parameters);
      },
      pg_options);
  stave::server::http::HttpServer http_server(
      listen, http_port, stave::server::MakeAdminHandler(database.get(), &pg_server));
  if (stave::Status status = pg_server.Start(); !status.ok()) {
    spdlog::critical("cannot serve PostgreSQL on {}:{}: {}", listen, pg_port, status.ToString());
    return 1;
  }
  if (stave::Status status = http_server.Start(); !status.ok()) {
    spdlog::critical("cannot serve HTTP on {}:{}: {}", listen, http_port, status.ToString());
    pg_server.Stop();
    return 1;
  }
  spdlog::info("Stave {} ready: psql -h {} -p {} -d stave  (HTTP admin on {}:{}, data in {})",
               stave::kStaveVersion, listen, pg_server.port(), listen, http_server.port(),
               options.data_directory);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("received {}, shutting down", signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  pg_server.Stop();
  http_server.Stop();
  database->Shutdown();
  spdlog::info("stopped cleanly");
  return 0;
}
