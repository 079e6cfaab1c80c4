#include "server/admin_handler.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <cctype>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/failpoint.h"
#include "common/password.h"
#include "common/sql_error.h"
#include "common/version.h"
#include "server/http/dashboard_page.h"

namespace stave::server {
namespace {

using nlohmann::json;

http::HttpResponse JsonResponse(int status, const json& body) {
  return http::HttpResponse::Json(status, body.dump() + "\n");
}

http::HttpResponse JsonError(int status, std::string message) {
  return JsonResponse(status, json{{"error", std::move(message)}});
}

// A value of a system table as JSON: numbers as numbers, NULL as null, the rest as text.
json ValueToJson(const Value& value, const DataType& type) {
  if (value.is_null()) return nullptr;
  switch (type.id) {
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
      return value.int_value();
    case TypeId::kFloat64:
      return value.double_value();
    default:
      return value.ToText(type);
  }
}

// Every row of system table `name` as an array of objects by column name.
json SystemTableJson(executor::Database* database, std::string_view name) {
  const planner::SystemTable* table =
      database->catalog().FindSystemTable(planner::kSystemSchema, name);
  json rows = json::array();
  if (!table) return rows;
  for (const std::vector<Value>& row : table->rows()) {
    json object = json::object();
    for (size_t i = 0; i < table->columns.size() && i < row.size(); ++i) {
      object[table->columns[i].name] = ValueToJson(row[i], table->columns[i].type);
    }
    rows.push_back(std::move(object));
  }
  return rows;
}

// Prometheus label values escape backslash, quote and newline.
std::string LabelValue(std::string_view text) {
  std::string escaped;
  for (char c : text) {
    if (c == '\\' || c == '"') escaped += '\\';
    if (c == '\n') {
      escaped += "\\n";
      continue;
    }
    escaped += c;
  }
  return escaped;
}

// One metric family rendered at scrape time: HELP, TYPE, then `samples` lines.
void AppendFamily(std::string* text, std::string_view name, std::string_view type,
                  std::string_view help, const std::string& samples) {
  if (samples.empty()) return;
  *text += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  *text += samples;
}

json LagJson(const std::vector<std::pair<int32_t, int64_t>>& lag) {
  json partitions = json::array();
  for (const auto& [partition, records] : lag) {
    partitions.push_back({{"partition", partition}, {"records", records}});
  }
  return partitions;
}

json RecoveryJson(const executor::RecoveryProgress::Status& status) {
  return {{"state", status.state},
          {"phase", status.phase},
          {"objects_done", status.objects_done},
          {"objects_total", status.objects_total},
          {"epoch", status.epoch},
          {"seconds", status.seconds}};
}

json BackfillJson(const std::optional<executor::BackfillStatus>& backfill) {
  if (!backfill) return nullptr;
  return {{"state", std::string(executor::BackfillStateName(backfill->state))},
          {"rows_done", backfill->rows_done},
          {"rows_total", backfill->rows_total},
          {"seconds", backfill->seconds}};
}

// The scheme name is case-insensitive (RFC 9110, 11.1); returns what follows "<scheme> ".
std::optional<std::string_view> Credentials(std::string_view authorization,
                                            std::string_view scheme) {
  if (authorization.size() <= scheme.size() || authorization[scheme.size()] != ' ') {
    return std::nullopt;
  }
  for (size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != scheme[i]) {
      return std::nullopt;
    }
  }
  return authorization.substr(scheme.size() + 1);
}

}  // namespace

bool IsLoopbackAddress(std::string_view address) {
  return address == "localhost" || address == "::1" || address.substr(0, 4) == "127.";
}

bool AuthorizationCarriesToken(std::string_view authorization, std::string_view token) {
  if (token.empty()) return false;
  if (std::optional<std::string_view> bearer = Credentials(authorization, "bearer")) {
    return password::ConstantTimeEquals(*bearer, token);
  }
  if (std::optional<std::string_view> basic = Credentials(authorization, "basic")) {
    std::optional<std::string> user_password = password::Base64Decode(*basic);
    if (!user_password) return false;
    size_t colon = user_password->find(':');
    if (colon == std::string::npos) return false;
    return password::ConstantTimeEquals(std::string_view(*user_password).substr(colon + 1), token);
  }
  return false;
}

AdminEndpoint::AdminEndpoint(AdminOptions options, const pgwire::PgServer* pg_server)
    : options_(std::move(options)), pg_server_(pg_server) {}

http::HttpResponse AdminEndpoint::Handle(const http::HttpRequest& request) {
  const std::string& path = request.path;
  bool get = request.method == "GET" || request.method == "HEAD";
  bool post = request.method == "POST";
  if (path == "/healthz") return http::HttpResponse::Text(200, "ok\n");
  if (path == "/readyz") {
    bool ready = ready_.load(std::memory_order_acquire);
    if (ready) return http::HttpResponse::Text(200, "ready\n");
    // Still recovering: how far, on a second line (the first stays "recovering").
    std::string text = "recovering\n";
    if (options_.recovery) {
      executor::RecoveryProgress::Status status = options_.recovery->status();
      text += fmt::format("{} objects of {} planned{}\n", status.objects_done, status.objects_total,
                          status.phase.empty() ? "" : ", " + status.phase);
    }
    return http::HttpResponse::Text(503, text);
  }
  bool page = path == "/" || path == "/index.html";
  if (!options_.token.empty() &&
      !AuthorizationCarriesToken(request.Header("Authorization"), options_.token)) {
    http::HttpResponse response = JsonError(401, "the admin token is required");
    // A browser asks its user for Basic credentials and then sends them with the page's own
    // API calls too; programs send the token as a bearer token.
    response.headers.emplace_back(
        "WWW-Authenticate",
        page ? "Basic realm=\"stave admin\", charset=\"UTF-8\"" : "Bearer realm=\"stave admin\"");
    return response;
  }
  if (page) {
    if (!get) return JsonError(405, "method not allowed");
    http::HttpResponse response;
    response.content_type = "text/html; charset=utf-8";
    response.body = std::string(http::DashboardHtml());
    response.headers.emplace_back("Cache-Control", "no-cache");
    return response;
  }
  if (path == "/api/v1/failpoints") {
    // Absent, not forbidden, unless enabled: a production server has no such endpoint.
    if (!options_.enable_failpoints) return JsonError(404, "not found");
    if (!post) return JsonError(405, "method not allowed");
    return Failpoints(request);
  }
  executor::Database* database = database_.load(std::memory_order_acquire);
  bool known = path == "/metrics" || path == "/api/v1/jobs" || path == "/api/v1/checkpoints" ||
               path == "/api/v1/sinks" || path == "/api/v1/sources" ||
               path == "/api/v1/bad_records" || path == "/api/v1/backups";
  if (!known) return JsonError(404, "not found");
  if (!database) {
    http::HttpResponse response = JsonError(503, "the database is still recovering");
    if (options_.recovery) {
      json body = json::parse(response.body);
      body["recovery"] = RecoveryJson(options_.recovery->status());
      response.body = body.dump();
    }
    return response;
  }
  try {
    if (path == "/api/v1/checkpoints" && post) {
      uint64_t epoch = database->CheckpointNow();
      return JsonResponse(200, json{{"epoch", epoch}});
    }
    if (path == "/api/v1/backups")
      return post ? Backup(database, request) : JsonError(405, "method not allowed");
    if (!get) return JsonError(405, "method not allowed");
    if (path == "/metrics") return Metrics(database);
    if (path == "/api/v1/jobs") return Jobs(database);
    if (path == "/api/v1/checkpoints") return Checkpoints(database);
    if (path == "/api/v1/sinks") return Sinks(database);
    if (path == "/api/v1/sources") {
      return JsonResponse(200, json{{"sources", SystemTableJson(database, "sources")}});
    }
    return JsonResponse(200, json{{"bad_records", SystemTableJson(database, "bad_records")}});
  } catch (const SqlError& error) {
    return JsonError(500, error.what());
  }
}

double AdminEndpoint::Rate(const std::string& key, uint64_t value) {
  auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(rates_mutex_);
  auto [it, inserted] = rates_.try_emplace(key, RateSample{now, value, 0});
  RateSample& sample = it->second;
  if (inserted) return 0;
  std::chrono::duration<double> elapsed = now - sample.time;
  // Polls closer than a second apart keep the last rate: too short a window is noise.
  if (elapsed.count() >= 1.0) {
    sample.rate = value >= sample.value ? (value - sample.value) / elapsed.count() : 0;
    sample.time = now;
    sample.value = value;
  }
  return sample.rate;
}

http::HttpResponse AdminEndpoint::Jobs(executor::Database* database) {
  json jobs = json::array();
  for (const executor::Database::JobDescription& job : database->DescribeJobs()) {
    json nodes = json::array();
    for (const executor::JobGraphNode& node : job.graph.nodes) {
      std::string key = fmt::format("{}/{}/", job.graph.id, node.id);
      nodes.push_back({{"id", node.id},
                       {"kind", node.kind},
                       {"label", node.label},
                       {"operators", node.operators},
                       {"parallelism", node.parallelism},
                       {"rows_in", node.rows_in},
                       {"rows_out", node.rows_out},
                       {"bytes_in", node.bytes_in},
                       {"bytes_out", node.bytes_out},
                       {"rows_in_per_second", Rate(key + "in", node.rows_in)},
                       {"rows_out_per_second", Rate(key + "out", node.rows_out)},
                       {"backpressured_tasks", node.backpressured},
                       // The share of the node's instances blocked by a full output now.
                       {"backpressure", static_cast<double>(node.backpressured) /
                                            static_cast<double>(std::max<size_t>(
                                                1, node.kind == "source" ? 1 : node.parallelism))},
                       {"buffered_bytes", node.buffered_bytes},
                       {"lag", LagJson(node.lag)},
                       {"backfill", BackfillJson(node.backfill)}});
    }
    json edges = json::array();
    for (const executor::JobGraphEdge& edge : job.graph.edges) {
      edges.push_back({{"from", edge.from}, {"to", edge.to}, {"routing", edge.routing}});
    }
    json entry = {{"id", job.graph.id},
                  {"name", job.graph.name},
                  {"kind", job.kind},
                  {"state", job.graph.failed ? "failed" : "running"},
                  {"parallelism", job.parallelism},
                  {"state_bytes", job.state_bytes},
                  {"backfill", BackfillJson(job.backfill)},
                  {"error", job.graph.error.empty() ? json(nullptr) : json(job.graph.error)},
                  {"nodes", std::move(nodes)},
                  {"edges", std::move(edges)}};
    if (!job.definition.empty()) entry["definition"] = job.definition;
    jobs.push_back(std::move(entry));
  }
  return JsonResponse(200,
                      json{{"jobs", std::move(jobs)},
                           {"recovery", RecoveryJson(database->recovery_progress().status())}});
}

http::HttpResponse AdminEndpoint::Checkpoints(executor::Database* database) {
  json checkpoints = json::array();
  for (const executor::CheckpointRecord& record : database->engine()->CheckpointHistory()) {
    auto started_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(record.started.time_since_epoch())
            .count();
    checkpoints.push_back(
        {{"epoch", record.epoch},
         {"started", fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z",
                                 fmt::gmtime(std::chrono::system_clock::to_time_t(record.started)),
                                 started_ms % 1000)},
         {"started_ms", started_ms},
         {"duration_ms", executor::CheckpointRecord::Milliseconds(record.duration)},
         {"bytes", record.bytes},
         {"state", executor::CheckpointRecord::kState},
         {"barrier_cpu_ms", executor::CheckpointRecord::Milliseconds(record.barrier_cpu)},
         {"commit_cpu_ms", executor::CheckpointRecord::Milliseconds(record.commit_cpu)},
         {"write_ms", executor::CheckpointRecord::Milliseconds(record.write)}});
  }
  return JsonResponse(200, json{{"committed_epoch", database->store().committed_epoch()},
                                {"interval_ms", database->engine()->checkpoint_interval().count()},
                                {"checkpoints", std::move(checkpoints)}});
}

http::HttpResponse AdminEndpoint::Sinks(executor::Database* database) {
  json sinks = json::array();
  for (const executor::Database::SinkDescription& sink : database->DescribeSinks()) {
    sinks.push_back(
        {{"name", sink.name},
         {"connector", sink.connector},
         {"from", sink.input},
         {"target", sink.target},
         {"requested_delivery", std::string(planner::DeliveryName(sink.requested))},
         {"derived_delivery", std::string(planner::DeliveryName(sink.derived))},
         {"state", sink.status.state},
         {"committed_epoch", sink.status.committed_epoch},
         {"finished_epoch", sink.status.finished_epoch},
         {"owed_epochs", sink.status.owed_epochs},
         {"last_error",
          sink.status.last_error.empty() ? json(nullptr) : json(sink.status.last_error)}});
  }
  return JsonResponse(200, json{{"sinks", std::move(sinks)}});
}

http::HttpResponse AdminEndpoint::Backup(executor::Database* database,
                                         const http::HttpRequest& request) {
  // The body: {"directory": "/absolute/path"}, a new or empty directory on the server.
  json parsed = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || !parsed.contains("directory") || !parsed["directory"].is_string()) {
    return JsonError(400, "expected {\"directory\": \"/absolute/path\"}");
  }
  std::string directory = parsed["directory"].get<std::string>();
  try {
    uint64_t epoch = database->Backup(directory);
    return JsonResponse(200, json{{"directory", directory}, {"epoch", epoch}});
  } catch (const SqlError& error) {
    // The client's mistakes are 4xx (an existing target is a conflict), the server's 5xx.
    std::string_view code = error.sqlstate();
    int status = code == "58P02"                                                   ? 409
                 : code.substr(0, 2) == "42" || code == "58P01" || code == "22023" ? 400
                                                                                   : 500;
    return JsonResponse(status, json{{"error", error.what()}, {"sqlstate", code}});
  }
}

http::HttpResponse AdminEndpoint::Failpoints(const http::HttpRequest& request) {
  // The body: {"spec": "epoch_before_commit=crash;..."}, or the specification as plain text.
  // An empty specification disarms every failpoint.
  std::string spec = request.body;
  json parsed = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) {
    if (!parsed.contains("spec") || !parsed["spec"].is_string()) {
      return JsonError(400, "expected {\"spec\": \"name=action;...\"}");
    }
    spec = parsed["spec"].get<std::string>();
  }
  if (spec.empty()) {
    failpoint::DisarmAll();
    return JsonResponse(200, json{{"armed", ""}});
  }
  std::string error;
  if (!failpoint::ArmFromSpec(spec, &error)) return JsonError(400, error);
  spdlog::warn("failpoints armed over HTTP: {}", spec);
  return JsonResponse(200, json{{"armed", spec}});
}

http::HttpResponse AdminEndpoint::Metrics(executor::Database* database) {
  std::string body = database->metrics()->RenderPrometheus();
  AppendFamily(&body, "stave_connections", "gauge", "Open PostgreSQL protocol connections.",
               fmt::format("stave_connections {}\n", pg_server_->connection_count()));
  AppendFamily(
      &body, "stave_connections_accepted_total", "counter",
      "PostgreSQL protocol connections accepted.",
      fmt::format("stave_connections_accepted_total {}\n", pg_server_->accepted_connections()));
  AppendFamily(
      &body, "stave_connections_refused_total", "counter",
      "PostgreSQL protocol connections refused because max_connections were open.",
      fmt::format("stave_connections_refused_total {}\n", pg_server_->refused_connections()));
  AppendFamily(&body, "stave_build_info", "gauge", "Build information.",
               fmt::format("stave_build_info{{version=\"{}\",compiler=\"{}\"}} 1\n", kStaveVersion,
                           LabelValue(__VERSION__)));
  AppendFamily(&body, "stave_state_disk_bytes", "gauge",
               "Approximate bytes of committed state on disk.",
               fmt::format("stave_state_disk_bytes {}\n", database->ApproximateStateBytes()));
  executor::Engine::CheckpointCpu checkpoint_cpu = database->engine()->checkpoint_cpu();
  AppendFamily(&body, "stave_checkpoint_cpu_seconds_total", "counter",
               "CPU time of checkpoints: the dataflows' barrier work, and the commit.",
               fmt::format("stave_checkpoint_cpu_seconds_total{{phase=\"barrier\"}} {:.6f}\n"
                           "stave_checkpoint_cpu_seconds_total{{phase=\"commit\"}} {:.6f}\n",
                           static_cast<double>(checkpoint_cpu.barrier.count()) / 1e6,
                           static_cast<double>(checkpoint_cpu.commit.count()) / 1e6));
  AppendFamily(&body, "stave_compaction_cpu_seconds_total", "counter",
               "CPU time of RocksDB's compactions of the state since the start.",
               fmt::format("stave_compaction_cpu_seconds_total {:.6f}\n",
                           static_cast<double>(database->store().compaction_cpu_micros()) / 1e6));

  // Per job and per vertex of its dataflow (a source, or a stage of fused operators).
  std::string rows_in, rows_out, bytes_in, bytes_out, backpressured, buffered, job_state, lag;
  std::string state_bytes;
  for (const executor::Database::JobDescription& job : database->DescribeJobs()) {
    std::string job_labels =
        fmt::format("job=\"{}\",kind=\"{}\"", LabelValue(job.graph.name), LabelValue(job.kind));
    size_t job_buffered = 0;
    for (const executor::JobGraphNode& node : job.graph.nodes) {
      std::string labels = fmt::format(
          "{{{},node=\"{}\",operators=\"{}\"}}", job_labels, node.id,
          LabelValue(node.kind == "source" ? node.label
                                           : fmt::format("{}", fmt::join(node.operators, " -> "))));
      rows_in += fmt::format("stave_operator_rows_in_total{} {}\n", labels, node.rows_in);
      rows_out += fmt::format("stave_operator_rows_out_total{} {}\n", labels, node.rows_out);
      bytes_in += fmt::format("stave_operator_in_bytes_total{} {}\n", labels, node.bytes_in);
      bytes_out += fmt::format("stave_operator_out_bytes_total{} {}\n", labels, node.bytes_out);
      backpressured +=
          fmt::format("stave_operator_backpressured_tasks{} {}\n", labels, node.backpressured);
      job_buffered += node.buffered_bytes;
      for (const auto& [partition, records] : node.lag) {
        lag += fmt::format("stave_source_lag_records{{{},source=\"{}\",partition=\"{}\"}} {}\n",
                           job_labels, LabelValue(node.label), partition, records);
      }
    }
    buffered += fmt::format("stave_job_buffered_state_bytes{{{}}} {}\n", job_labels, job_buffered);
    job_state += fmt::format("stave_job_failed{{{}}} {}\n", job_labels, job.graph.failed ? 1 : 0);
    state_bytes += fmt::format("stave_job_state_bytes{{{}}} {}\n", job_labels, job.state_bytes);
  }
  AppendFamily(&body, "stave_operator_rows_in_total", "counter",
               "Row changes a dataflow vertex received (a source: read).", rows_in);
  AppendFamily(&body, "stave_operator_rows_out_total", "counter",
               "Row changes a dataflow vertex sent downstream.", rows_out);
  AppendFamily(&body, "stave_operator_in_bytes_total", "counter",
               "Estimated bytes of the row changes a dataflow vertex received.", bytes_in);
  AppendFamily(&body, "stave_operator_out_bytes_total", "counter",
               "Estimated bytes of the row changes a dataflow vertex sent downstream.", bytes_out);
  AppendFamily(&body, "stave_job_state_bytes", "gauge",
               "Approximate bytes of a job's committed state in RocksDB (a view's rows included).",
               state_bytes);
  AppendFamily(&body, "stave_operator_backpressured_tasks", "gauge",
               "Instances of a vertex whose output waits on a full downstream channel.",
               backpressured);
  AppendFamily(&body, "stave_job_buffered_state_bytes", "gauge",
               "Uncommitted state a job's operators hold in memory.", buffered);
  AppendFamily(&body, "stave_job_failed", "gauge", "1 if a job stopped on an error.", job_state);
  AppendFamily(&body, "stave_source_lag_records", "gauge",
               "Records a job's source is behind the end of a partition (Kafka), as last fetched.",
               lag);

  std::string committed, finished, owed;
  for (const executor::Database::SinkDescription& sink : database->DescribeSinks()) {
    std::string labels = fmt::format("{{sink=\"{}\",connector=\"{}\"}}", LabelValue(sink.name),
                                     LabelValue(sink.connector));
    committed +=
        fmt::format("stave_sink_committed_epoch{} {}\n", labels, sink.status.committed_epoch);
    finished += fmt::format("stave_sink_finished_epoch{} {}\n", labels, sink.status.finished_epoch);
    owed += fmt::format("stave_sink_owed_epochs{} {}\n", labels, sink.status.owed_epochs);
  }
  AppendFamily(&body, "stave_sink_committed_epoch", "gauge",
               "The last checkpoint that holds a sink's share.", committed);
  AppendFamily(&body, "stave_sink_finished_epoch", "gauge", "The last epoch a sink's target has.",
               finished);
  AppendFamily(&body, "stave_sink_owed_epochs", "gauge",
               "Committed epochs a sink's target does not have yet.", owed);

  http::HttpResponse response = http::HttpResponse::Text(200, std::move(body));
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return response;
}

}  // namespace stave::server
