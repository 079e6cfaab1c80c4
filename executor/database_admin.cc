// What the admin API, SHOW JOBS and the system tables of the engine's jobs show of a running
// database. Kept apart from database.cc: none of it changes anything.

#include <algorithm>

#include "common/redact.h"
#include "common/sql_error.h"
#include "executor/database.h"
#include "executor/plan_builder.h"

namespace stave::executor {
namespace {

std::string JoinLabels(const std::vector<std::string>& labels) {
  std::string text;
  for (const std::string& label : labels) text += (text.empty() ? "" : " -> ") + label;
  return text;
}

}  // namespace

std::vector<Database::SinkDescription> Database::DescribeSinks() const {
  std::vector<SinkDescription> sinks;
  std::lock_guard lock(sinks_mutex_);
  for (const auto& [id, sink] : sinks_) {
    planner::CatalogObjectPtr object = catalog_.FindById(id);
    if (!object) continue;
    sinks.push_back({id, object->name, object->connector, sink.input, sink.description,
                     sink.requested, sink.derived, sink.writer->status()});
  }
  std::sort(sinks.begin(), sinks.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return sinks;
}

std::vector<Database::JobDescription> Database::DescribeJobs() {
  std::vector<JobDescription> jobs;
  for (JobGraph& graph : engine_->DescribeJobs()) {
    planner::CatalogObjectPtr object = catalog_.FindById(graph.id);
    if (!object) continue;  // Dropped meanwhile.
    JobDescription job;
    job.kind = std::string(planner::ObjectTypeName(object->type));
    if (object->type == planner::ObjectType::kMaterializedView) {
      job.definition = RedactSqlSecrets(object->definition);
    }
    for (const JobGraphNode& node : graph.nodes) {
      job.parallelism = std::max(job.parallelism, node.parallelism);
    }
    if (!graph.failed) {
      // A job the engine stopped on an error reports it there.
      if (std::optional<SqlError> error = engine_->JobError(graph.id)) {
        graph.failed = true;
        graph.error = error->what();
      }
    }
    // The last stage's output is what the view or the sink applied: its own counter.
    if (!graph.nodes.empty()) {
      bool sink = object->type == planner::ObjectType::kSink;
      graph.nodes.back().rows_out =
          metrics_
              .Counter(sink ? "stave_sink_rows_out_total" : "stave_view_rows_out_total",
                       {{sink ? "sink" : "view", object->name}})
              ->load(std::memory_order_relaxed);
      graph.nodes.back().bytes_out =
          metrics_
              .Counter(sink ? "stave_sink_out_bytes_total" : "stave_view_out_bytes_total",
                       {{sink ? "sink" : "view", object->name}})
              ->load(std::memory_order_relaxed);
    }
    // Every state table of an object has an id in [StateTableId(id, 0), StateTableId(id+1, 0)).
    // Counted as view_state_limit counts it: exactly enough to compare with the limit.
    uint64_t limit = engine_->view_state_limit();
    job.state_bytes = store_->ApproximateStateTablesSize(
        StateTableId(graph.id, 0), StateTableId(graph.id + 1, 0), limit > 0 ? limit : UINT64_MAX);
    for (const JobGraphNode& node : graph.nodes) {
      if (!node.backfill) continue;
      if (!job.backfill) {
        job.backfill = node.backfill;
        continue;
      }
      job.backfill->rows_done += node.backfill->rows_done;
      job.backfill->rows_total += node.backfill->rows_total;
      job.backfill->seconds = std::max(job.backfill->seconds, node.backfill->seconds);
      // Running while any runs; else pending while any waits; else done.
      if (node.backfill->state == BackfillStatus::State::kRunning ||
          job.backfill->state == BackfillStatus::State::kDone) {
        job.backfill->state = node.backfill->state;
      }
    }
    job.graph = std::move(graph);
    jobs.push_back(std::move(job));
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const auto& a, const auto& b) { return a.graph.name < b.graph.name; });
  return jobs;
}

uint64_t Database::CheckpointNow() {
  CheckpointCoveringWrites();
  return store_->committed_epoch();
}

void Database::RegisterJobSystemTables() {
  // One row per running job: a materialized view's or a sink's dataflow.
  planner::SystemTable jobs;
  jobs.name = "jobs";
  jobs.columns = {{"name", TypeId::kVarchar},         {"kind", TypeId::kVarchar},
                  {"state", TypeId::kVarchar},        {"parallelism", TypeId::kInt32},
                  {"rows_in", TypeId::kInt64},        {"rows_out", TypeId::kInt64},
                  {"buffered_bytes", TypeId::kInt64}, {"backpressured_tasks", TypeId::kInt32},
                  {"error", TypeId::kVarchar},        {"bytes_in", TypeId::kInt64},
                  {"bytes_out", TypeId::kInt64},      {"state_bytes", TypeId::kInt64}};
  jobs.rows = [this] {
    std::vector<std::vector<Value>> rows;
    for (const JobDescription& job : DescribeJobs()) {
      uint64_t rows_in = 0;
      uint64_t bytes_in = 0;
      size_t buffered = 0;
      size_t backpressured = 0;
      for (const JobGraphNode& node : job.graph.nodes) {
        if (node.kind == "source") rows_in += node.rows_in;
        if (node.kind == "source") bytes_in += node.bytes_in;
        buffered += node.buffered_bytes;
        backpressured += node.backpressured;
      }
      // Rows out: the row changes the view or the sink applied.
      uint64_t rows_out = job.graph.nodes.empty() ? 0 : job.graph.nodes.back().rows_out;
      rows.push_back({Value::String(job.graph.name), Value::String(job.kind),
                      Value::String(job.graph.failed ? "failed" : "running"),
                      Value::Int(static_cast<int32_t>(job.parallelism)),
                      Value::Int(static_cast<int64_t>(rows_in)),
                      Value::Int(static_cast<int64_t>(rows_out)),
                      Value::Int(static_cast<int64_t>(buffered)),
                      Value::Int(static_cast<int32_t>(backpressured)),
                      job.graph.error.empty() ? Value::Null() : Value::String(job.graph.error),
                      Value::Int(static_cast<int64_t>(bytes_in)),
                      Value::Int(static_cast<int64_t>(
                          job.graph.nodes.empty() ? 0 : job.graph.nodes.back().bytes_out)),
                      Value::Int(static_cast<int64_t>(job.state_bytes))});
    }
    return rows;
  };
  catalog_.RegisterSystemTable(std::move(jobs));

  // One row per vertex of each job's dataflow: its sources and its stages of operators.
  planner::SystemTable operators;
  operators.name = "operators";
  operators.columns = {{"job", TypeId::kVarchar},          {"node", TypeId::kVarchar},
                       {"kind", TypeId::kVarchar},         {"operators", TypeId::kVarchar},
                       {"parallelism", TypeId::kInt32},    {"rows_in", TypeId::kInt64},
                       {"rows_out", TypeId::kInt64},       {"backpressured", TypeId::kInt32},
                       {"buffered_bytes", TypeId::kInt64}, {"output_to", TypeId::kVarchar},
                       {"bytes_in", TypeId::kInt64},       {"bytes_out", TypeId::kInt64}};
  operators.rows = [this] {
    std::vector<std::vector<Value>> rows;
    for (const JobDescription& job : DescribeJobs()) {
      for (const JobGraphNode& node : job.graph.nodes) {
        std::string output;
        for (const JobGraphEdge& edge : job.graph.edges) {
          if (edge.from == node.id)
            output += (output.empty() ? "" : ", ") + edge.to + " by " + edge.routing;
        }
        rows.push_back(
            {Value::String(job.graph.name), Value::String(node.id), Value::String(node.kind),
             Value::String(node.kind == "source" ? node.label : JoinLabels(node.operators)),
             Value::Int(static_cast<int32_t>(node.parallelism)),
             Value::Int(static_cast<int64_t>(node.rows_in)),
             Value::Int(static_cast<int64_t>(node.rows_out)),
             Value::Int(static_cast<int32_t>(node.backpressured)),
             Value::Int(static_cast<int64_t>(node.buffered_bytes)),
             output.empty() ? Value::Null() : Value::String(output),
             Value::Int(static_cast<int64_t>(node.bytes_in)),
             Value::Int(static_cast<int64_t>(node.bytes_out))});
      }
    }
    return rows;
  };
  catalog_.RegisterSystemTable(std::move(operators));

  // Long work and how far it has come: the recovery at start, and each backfill of a job's
  // source over a table's or a view's existing rows.
  planner::SystemTable progress;
  progress.name = "progress";
  progress.columns = {{"kind", TypeId::kVarchar},   {"job", TypeId::kVarchar},
                      {"source", TypeId::kVarchar}, {"state", TypeId::kVarchar},
                      {"done", TypeId::kInt64},     {"total", TypeId::kInt64},
                      {"unit", TypeId::kVarchar},   {"seconds", TypeId::kFloat64}};
  progress.rows = [this] {
    std::vector<std::vector<Value>> rows;
    RecoveryProgress::Status recovery = recovery_progress().status();
    rows.push_back({Value::String("recovery"), Value::Null(), Value::Null(),
                    Value::String(recovery.state),
                    Value::Int(static_cast<int64_t>(recovery.objects_done)),
                    Value::Int(static_cast<int64_t>(recovery.objects_total)),
                    Value::String("objects"), Value::Double(recovery.seconds)});
    for (const JobDescription& job : DescribeJobs()) {
      for (const JobGraphNode& node : job.graph.nodes) {
        if (!node.backfill) continue;
        rows.push_back({Value::String("backfill"), Value::String(job.graph.name),
                        Value::String(node.label),
                        Value::String(std::string(BackfillStateName(node.backfill->state))),
                        Value::Int(static_cast<int64_t>(node.backfill->rows_done)),
                        Value::Int(static_cast<int64_t>(node.backfill->rows_total)),
                        Value::String("rows"), Value::Double(node.backfill->seconds)});
      }
    }
    return rows;
  };
  catalog_.RegisterSystemTable(std::move(progress));
}

QueryResult Database::ShowSystemTable(const parser::ShowSystemTableStatement& show) {
  const planner::SystemTable* table = catalog_.FindSystemTable(planner::kSystemSchema, show.table);
  if (!table) {
    throw SqlError(sqlstate::kInternalError, "no system table stave_catalog." + show.table,
                   show.position);
  }
  QueryResult result;
  result.returns_rows = true;
  for (const planner::Column& column : table->columns) {
    result.columns.push_back({column.name, column.type});
  }
  result.rows = table->rows();
  // The newest checkpoint first, as one looks for it.
  if (show.table == "checkpoints") std::reverse(result.rows.begin(), result.rows.end());
  result.command_tag = "SHOW";
  return result;
}

}  // namespace stave::executor
