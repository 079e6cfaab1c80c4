// staved: the Stave server. Opens (and recovers) the data directory, then serves the
// PostgreSQL protocol and the HTTP admin endpoint until SIGTERM or SIGINT.

#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>

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
#include "server/log_format.h"
#include "server/pgwire/authentication.h"
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
  std::string http_listen = "127.0.0.1";
  std::string admin_token;
  uint16_t pg_port = 4566;
  uint16_t http_port = 4567;
  std::string checkpoint_interval = "1s";
  std::string log_level = "info";
  std::string log_format = "text";
  std::string state_memory = "256MB";
  std::string state_cache = "512MB";
  std::string query_memory = "1GB";
  std::string view_state_limit = "0";
  app.add_option("--data-dir", options.data_directory, "Where the RocksDB state lives")
      ->capture_default_str();
  app.add_option("--listen", listen, "Address to listen on")->capture_default_str();
  app.add_option("--pg-port", pg_port, "PostgreSQL protocol port (0 picks a free one)")
      ->capture_default_str();
  app.add_option("--http-port", http_port, "HTTP admin port (0 picks a free one)")
      ->capture_default_str();
  app.add_option("--http-listen", http_listen,
                 "Address the HTTP admin port listens on; other than loopback it needs a token")
      ->capture_default_str();
  app.add_option("--admin-token", admin_token,
                 "Bearer token the HTTP admin API requires (else $STAVE_ADMIN_TOKEN; none: "
                 "open on loopback)");
  app.add_option("--checkpoint-interval", checkpoint_interval,
                 "Time between checkpoints, e.g. 1s, 200ms; 0 = only on demand")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  app.add_option("--log-format", log_format, "text, or json: one JSON object per line")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--state-memory", state_memory,
                 "Uncommitted view state held in memory before a checkpoint is taken early")
      ->capture_default_str();
  app.add_option(
         "--state-cache", state_cache,
         "Committed state each view keeps cached in memory (an aggregate's groups, a join's keys)")
      ->capture_default_str();
  app.add_option("--query-memory-limit", query_memory,
                 "Memory an ad-hoc SELECT may hold (sorts, joins, groups, its result); more "
                 "fails it with 53200; 0 = no limit; SET query_memory_limit overrides it")
      ->capture_default_str();
  app.add_option("--view-state-limit", view_state_limit,
                 "Committed state each view may hold; past it the view stops with 54000 (other "
                 "views go on); 0 = no limit; ALTER SYSTEM SET view_state_limit changes it")
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
  std::string auth = "scram-sha-256";
  std::string local_auth = "trust";
  std::string password_file;
  app.add_option("--auth", auth,
                 "How clients not on loopback authenticate: scram-sha-256, md5, password or "
                 "trust")
      ->capture_default_str();
  app.add_option("--local-auth", local_auth,
                 "How clients on loopback (127.0.0.0/8, ::1) authenticate: trust, "
                 "scram-sha-256, md5 or password")
      ->capture_default_str();
  app.add_option("--password-file", password_file,
                 "File whose first line is the password of the user stave (else the "
                 "STAVE_PASSWORD environment variable, if set)");
  app.add_option(
      "--tls-cert", pg_options.tls_certificate_file,
      "PEM certificate (chain) for TLS; with --tls-key, clients may use sslmode=require");
  app.add_option("--tls-key", pg_options.tls_key_file, "PEM private key of --tls-cert");
  app.add_flag("--tls-required", pg_options.require_tls_remote,
               "Refuse clients not on loopback unless they use TLS");
  app.add_flag("--enable-failpoints", options.enable_failpoints,
               "Let clients arm failpoints with SET stave.failpoints and POST "
               "/api/v1/failpoints (testing only)");
  app.set_version_flag("--version", std::string(stave::kStaveVersion));
  CLI11_PARSE(app, argc, argv);

  spdlog::set_level(spdlog::level::from_str(log_level));
  if (log_format == "json") stave::server::UseJsonLogFormat();
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
  options.view_state_limit_explicit = app.count("--view-state-limit") > 0;
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
      !byte_size("--state-cache", state_cache, &options.state_cache_bytes) ||
      !byte_size("--query-memory-limit", query_memory, &options.query_memory_bytes) ||
      !byte_size("--view-state-limit", view_state_limit, &options.view_state_limit_bytes)) {
    return 2;
  }
  if (admin_token.empty()) {
    if (const char* token = std::getenv("STAVE_ADMIN_TOKEN")) admin_token = token;
  }
  if (!stave::server::IsLoopbackAddress(http_listen) && admin_token.empty()) {
    fmt::print(stderr,
               "staved: --http-listen {}: the admin port may listen beyond loopback only with a "
               "token (--admin-token or STAVE_ADMIN_TOKEN)\n",
               http_listen);
    return 2;
  }
  for (auto [flag, text, method] :
       {std::tuple{"--auth", &auth, &pg_options.remote_auth},
        std::tuple{"--local-auth", &local_auth, &pg_options.loopback_auth}}) {
    std::optional<stave::server::pgwire::AuthMethod> parsed =
        stave::server::pgwire::ParseAuthMethod(*text);
    if (!parsed) {
      fmt::print(stderr,
                 "staved: {}: unknown method \"{}\" (use scram-sha-256, md5, password or trust)\n",
                 flag, *text);
      return 2;
    }
    *method = *parsed;
  }
  std::optional<std::string> bootstrap_password;
  if (!password_file.empty()) {
    std::ifstream file(password_file);
    std::string line;
    if (!file || !std::getline(file, line)) {
      fmt::print(stderr, "staved: --password-file: cannot read \"{}\"\n", password_file);
      return 2;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    bootstrap_password = line;
  } else if (const char* from_environment = std::getenv("STAVE_PASSWORD")) {
    bootstrap_password = from_environment;
  }
  if (bootstrap_password && bootstrap_password->empty()) {
    fmt::print(stderr, "staved: the password of the user stave must not be empty\n");
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
  // Users are read when a client logs in, which is only once the database is open.
  pg_options.credentials =
      [&database](std::string_view user) -> std::optional<stave::server::pgwire::UserCredentials> {
    std::optional<stave::executor::Role> role = database->roles()->Find(user);
    if (!role) return std::nullopt;
    return stave::server::pgwire::UserCredentials{role->scram_verifier, role->md5_hash,
                                                  role->can_login};
  };
  bool loopback_only = stave::server::IsLoopbackAddress(listen);
  if (pg_options.remote_auth == stave::server::pgwire::AuthMethod::kTrust && !loopback_only) {
    spdlog::warn("--auth=trust: clients from any address that reaches {} log in without a password",
                 listen);
  }
  if (!loopback_only && pg_options.remote_auth != stave::server::pgwire::AuthMethod::kTrust &&
      !bootstrap_password) {
    spdlog::warn(
        "clients not on loopback need a password, and the user stave has none unless one was "
        "set before: give it one with --password-file or STAVE_PASSWORD");
  }
  if (pg_options.remote_auth == stave::server::pgwire::AuthMethod::kPassword &&
      pg_options.tls_certificate_file.empty()) {
    spdlog::warn("--auth=password without TLS: passwords cross the network in clear text");
  }
  stave::server::pgwire::PgServer pg_server(
      listen, pg_port,
      [&](const std::vector<std::pair<std::string, std::string>>& parameters) {
        return std::make_unique<stave::server::Session>(database.get(), parameters);
      },
      pg_options);

  // The admin port comes up first, so /healthz answers (and /readyz says 503) while the
  // database recovers; the PostgreSQL port only once it has.
  options.recovery_progress = std::make_shared<stave::executor::RecoveryProgress>();
  stave::server::AdminEndpoint admin(
      {admin_token, options.enable_failpoints, options.recovery_progress}, &pg_server);
  stave::server::http::HttpServer http_server(http_listen, http_port, admin.Handler());
  if (stave::Status status = http_server.Start(); !status.ok()) {
    spdlog::critical("cannot serve HTTP on {}:{}: {}", http_listen, http_port, status.ToString());
    return 1;
  }
  spdlog::info("HTTP admin on {}:{}{}; recovering \"{}\"", http_listen, http_server.port(),
               admin_token.empty() ? "" : " (bearer token required)", options.data_directory);
  try {
    database = stave::executor::Database::Open(options, &connectors);
  } catch (const stave::SqlError& error) {
    spdlog::critical("cannot open the database in \"{}\": {}", options.data_directory,
                     error.what());
    http_server.Stop();
    return 1;
  }
  admin.set_database(database.get());
  try {
    if (bootstrap_password) database->roles()->SetBootstrapPassword(*bootstrap_password);
  } catch (const stave::SqlError& error) {
    spdlog::critical("cannot store the password of the user stave: {}", error.what());
    http_server.Stop();
    return 1;
  }
  if (stave::Status status = pg_server.Start(); !status.ok()) {
    spdlog::critical("cannot serve PostgreSQL on {}:{}: {}", listen, pg_port, status.ToString());
    http_server.Stop();
    return 1;
  }
  admin.set_ready(true);
  spdlog::info("Stave {} ready: psql -h {} -p {} -d stave  (HTTP admin on {}:{}, data in {})",
               stave::kStaveVersion, listen, pg_server.port(), http_listen, http_server.port(),
               options.data_directory);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("received {}, shutting down", signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  admin.set_ready(false);
  pg_server.Stop();
  http_server.Stop();
  database->Shutdown();
  spdlog::info("stopped cleanly");
  return 0;
}
