#include "executor/plan_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/sql_error.h"
#include "executor/connectors/connectors.h"
#include "executor/connectors/table/table_source.h"
#include "executor/connectors/view/view_source.h"
#include "executor/operators/filter_operator.h"
#include "executor/operators/hash_aggregate_operator.h"
#include "executor/operators/materialize_operator.h"
#include "executor/operators/project_operator.h"
#include "executor/operators/sink_operator.h"
#include "executor/runtime/partitioner.h"

namespace stave::executor {
namespace {

/// How the source's rows are routed to the first stage: all changes of one row of the
/// input (its key) must meet in one instance, in order. An input that never retracts has
/// no such pairs, so whole chunks go round-robin.
StageInput SourceRouting(const planner::CatalogObject& input) {
  StageInput routing;
  if (!input.Retracting()) return routing;
  routing.round_robin = false;
  std::vector<planner::Column> columns = input.ChangelogColumns();
  std::vector<size_t> key = input.primary_key;
  if (key.empty()) key.push_back(input.columns.size());  // The hidden _row_id or _row_key.
  for (size_t column : key) {
    routing.keys.push_back(planner::BoundExpr::MakeColumn(column, columns[column].type));
  }
  return routing;
}

/// The plan between the scan and the view, cut into stages: a new stage starts at every
/// aggregation, fed by an exchange on its group keys.
struct StagePlan {
  StageInput input;
  std::vector<const planner::PlanNode*> nodes;
};

/// A dataflow without its last operator: the reader of its input and its stages.
struct Dataflow {
  std::unique_ptr<SourceReader> source;
  std::vector<Stage> stages;
  Job::Counters counters;
};

/// Builds the reader and the stages of `owner`'s query, `parallelism` instances per stage.
/// State tables take the owner's slots from `first_slot` on.
Dataflow BuildDataflow(const planner::CatalogObject& owner, const planner::BoundQuery& query,
                       const storage::Store* store, Metrics* metrics,
                       const std::function<std::shared_ptr<Table>(uint32_t)>& tables,
                       size_t parallelism, size_t state_cache_bytes, uint32_t first_slot) {
  // An aggregate's instance keeps this many groups cached past a barrier.
  size_t cached_groups = std::max<size_t>(
      1024, state_cache_bytes / parallelism / HashAggregateOperator::kBytesPerCachedGroup);
  // The plan is a chain from the root down to one scan; operators run from the scan up.
  std::vector<const planner::PlanNode*> chain;
  for (const planner::PlanNode* node = query.root.get(); node; node = node->input.get()) {
    chain.push_back(node);
  }
  const planner::PlanNode* leaf = chain.back();
  if (leaf->kind != planner::PlanNodeKind::kScan) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("a {} must read a stream, a table or a view",
                               planner::ObjectTypeName(owner.type)));
  }
  const auto& scan = static_cast<const planner::ScanNode&>(*leaf);
  Dataflow dataflow;
  if (scan.object->type == planner::ObjectType::kTable) {
    dataflow.source = std::make_unique<TableSource>(tables(scan.object->id), store);
  } else if (scan.object->type == planner::ObjectType::kMaterializedView) {
    dataflow.source = std::make_unique<ViewSource>(scan.object, store);
  } else {
    dataflow.source = OpenSourceReader(*scan.object);
  }
  std::vector<StagePlan> plans(1);
  plans[0].input = SourceRouting(*scan.object);
  for (auto it = chain.rbegin() + 1; it != chain.rend(); ++it) {
    const planner::PlanNode* node = *it;
    if (node->kind == planner::PlanNodeKind::kAggregate) {
      // Route by the group keys, evaluated over the aggregate's input. With nothing before
      // the aggregate in this stage, the upstream exchange routes by them directly.
      const auto& aggregate = static_cast<const planner::AggregateNode&>(*node);
      if (!plans.back().nodes.empty()) plans.emplace_back();
      plans.back().input.round_robin = false;
      plans.back().input.keys = aggregate.group_keys;
    }
    plans.back().nodes.push_back(node);
  }
  size_t global_owner = InstanceOfKey("", parallelism);
  uint32_t next_slot = first_slot;
  for (size_t s = 0; s < plans.size(); ++s) {
    Stage stage;
    stage.input = plans[s].input;
    uint32_t stage_slot = next_slot;
    for (uint32_t instance = 0; instance < parallelism; ++instance) {
      // Every instance of an operator shares its state table; keys never overlap, as each
      // instance sees only the keys of its virtual nodes.
      uint32_t slot = stage_slot;
      std::vector<std::unique_ptr<StreamOperator>> operators;
      for (const planner::PlanNode* node : plans[s].nodes) {
        switch (node->kind) {
          case planner::PlanNodeKind::kFilter:
            operators.push_back(std::make_unique<FilterOperator>(
                static_cast<const planner::FilterNode*>(node)->predicate));
            break;
          case planner::PlanNodeKind::kProject:
            operators.push_back(std::make_unique<ProjectOperator>(
                static_cast<const planner::ProjectNode*>(node)->expressions));
            break;
          case planner::PlanNodeKind::kAggregate: {
            // Share ownership with the plan: find the shared_ptr of this node.
            planner::PlanNodePtr node_owner = query.root;
            while (node_owner.get() != node) node_owner = node_owner->input;
            operators.push_back(std::make_unique<HashAggregateOperator>(
                std::static_pointer_cast<const planner::AggregateNode>(node_owner),
                storage::StateTable(store, StateTableId(owner.id, slot++)),
                instance == global_owner, cached_groups, instance, parallelism));
            break;
          }
          default:
            throw SqlError(sqlstate::kFeatureNotSupported,
                           fmt::format("this query cannot run as a {} yet",
                                       planner::ObjectTypeName(owner.type)));
        }
      }
      next_slot = slot;
      stage.instances.push_back(std::move(operators));
    }
    dataflow.stages.push_back(std::move(stage));
  }
  std::string kind = owner.type == planner::ObjectType::kSink ? "sink" : "view";
  dataflow.counters.rows_in = metrics->Counter(
      fmt::format("stave_{}_rows_in_total", kind), {{kind, owner.name}},
      fmt::format("Rows a {} read from its input.", planner::ObjectTypeName(owner.type)));
  dataflow.counters.stream_rows =
      scan.object->type == planner::ObjectType::kTable
          ? metrics->Counter("stave_table_rows_read_total", {{"table", scan.object->name}},
                             "Row changes read from a table's log, over all views reading it.")
      : scan.object->type == planner::ObjectType::kMaterializedView
          ? metrics->Counter("stave_view_changes_read_total", {{"view", scan.object->name}},
                             "Row changes read from a view's changelog by views over it.")
          : metrics->Counter("stave_stream_rows_read_total", {{"stream", scan.object->name}},
                             "Rows read from a stream, over all views reading it.");
  if (scan.object->type == planner::ObjectType::kStream) {
    dataflow.counters.bad_records = metrics->Counter(
        "stave_source_bad_records_total", {{"stream", scan.object->name}, {kind, owner.name}},
        "Records a stream's reader could not decode (skipped, dead-lettered or failed on).");
    if (scan.object->watermark) {
      dataflow.counters.late_rows = metrics->Counter(
          "stave_source_late_rows_total", {{"stream", scan.object->name}, {kind, owner.name}},
          "Rows a stream dropped for arriving below its watermark.");
    }
  }
  return dataflow;
}

bool HasAggregate(const planner::BoundQuery& query) {
  for (const planner::PlanNode* node = query.root.get(); node; node = node->input.get()) {
    if (node->kind == planner::PlanNodeKind::kAggregate) return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<Job> BuildJob(const planner::CatalogObject& view, const planner::BoundQuery& query,
                              const storage::Store* store, Metrics* metrics,
                              const std::function<std::shared_ptr<Table>(uint32_t)>& tables,
                              const JobOptions& options) {
  size_t parallelism = std::clamp<size_t>(options.parallelism, 1, kMaxParallelism);
  Dataflow dataflow = BuildDataflow(view, query, store, metrics, tables, parallelism,
                                    options.state_cache_bytes, kViewRowsSlot + 2);
  storage::RowTypes visible_types;
  for (const planner::Column& column : view.columns) visible_types.push_back(column.type);
  std::atomic<uint64_t>* rows_out =
      metrics->Counter("stave_view_rows_out_total", {{"view", view.name}},
                       "Row changes applied to a materialized view.");
  auto log_changes = std::make_shared<std::atomic<bool>>(false);
  std::vector<std::vector<std::unique_ptr<StreamOperator>>>& last =
      dataflow.stages.back().instances;
  for (uint32_t instance = 0; instance < last.size(); ++instance) {
    // Slot 0: the view's rows; 1: the materialization's counters.
    last[instance].push_back(std::make_unique<MaterializeOperator>(
        view.id, instance, visible_types, query.keyed, query.key_columns,
        storage::StateTable(store, StateTableId(view.id, kViewRowsSlot)),
        storage::StateTable(store, StateTableId(view.id, kViewRowsSlot + 1)), log_changes,
        rows_out));
  }
  return std::make_unique<Job>(view.id, view.name, std::move(dataflow.source),
                               std::move(dataflow.stages), std::move(log_changes),
                               dataflow.counters, options.throttle);
}

std::unique_ptr<Job> BuildSinkJob(const planner::CatalogObject& sink,
                                  const planner::BoundQuery& query, const storage::Store* store,
                                  Metrics* metrics,
                                  const std::function<std::shared_ptr<Table>(uint32_t)>& tables,
                                  const JobOptions& options, std::shared_ptr<SinkWriter> writer,
                                  std::vector<size_t> key_columns) {
  // Stateless plans gain nothing from parallel instances before the one writer.
  size_t parallelism =
      HasAggregate(query) ? std::clamp<size_t>(options.parallelism, 1, kMaxParallelism) : 1;
  Dataflow dataflow =
      BuildDataflow(sink, query, store, metrics, tables, parallelism, options.state_cache_bytes, 0);
  storage::RowTypes types;
  for (const planner::Column& column : sink.columns) types.push_back(column.type);
  auto sink_operator = std::make_unique<SinkOperator>(
      writer, types, std::move(key_columns),
      metrics->Counter("stave_sink_rows_out_total", {{"sink", sink.name}},
                       "Row changes a sink handed to its target (after compaction per key)."));
  if (parallelism == 1) {
    dataflow.stages.back().instances[0].push_back(std::move(sink_operator));
  } else {
    // One writer per sink, so that each epoch reaches the target as one transaction. Each
    // key's changes come from one upstream instance, in order.
    Stage stage;
    stage.instances.emplace_back();
    stage.instances[0].push_back(std::move(sink_operator));
    dataflow.stages.push_back(std::move(stage));
  }
  auto job = std::make_unique<Job>(
      sink.id, sink.name, std::move(dataflow.source), std::move(dataflow.stages),
      std::make_shared<std::atomic<bool>>(false), dataflow.counters, options.throttle);
  job->set_on_commit([writer](uint64_t epoch) { writer->OnEpochCommitted(epoch); });
  return job;
}

}  // namespace stave::executor
