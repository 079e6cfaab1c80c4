#include "executor/plan_builder.h"

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

}  // namespace

std::unique_ptr<Job> BuildJob(const planner::CatalogObject& view, const planner::BoundQuery& query,
                              const storage::Store* store, Metrics* metrics,
                              const std::function<std::shared_ptr<Table>(uint32_t)>& tables,
                              const JobOptions& options) {
  size_t parallelism = std::clamp<size_t>(options.parallelism, 1, kMaxParallelism);
  // An aggregate's instance keeps this many groups cached past a barrier.
  size_t cached_groups = std::max<size_t>(
      1024, options.state_cache_bytes / parallelism / HashAggregateOperator::kBytesPerCachedGroup);
  // The plan is a chain from the root down to one scan; operators run from the scan up.
  std::vector<const planner::PlanNode*> chain;
  for (const planner::PlanNode* node = query.root.get(); node; node = node->input.get()) {
    chain.push_back(node);
  }
  const planner::PlanNode* leaf = chain.back();
  if (leaf->kind != planner::PlanNodeKind::kScan) {
    throw SqlError(sqlstate::kFeatureNotSupported, "a materialized view must read a stream");
  }
  const auto& scan = static_cast<const planner::ScanNode&>(*leaf);
  std::unique_ptr<SourceReader> source;
  if (scan.object->type == planner::ObjectType::kTable) {
    source = std::make_unique<TableSource>(tables(scan.object->id), store);
  } else if (scan.object->type == planner::ObjectType::kMaterializedView) {
    source = std::make_unique<ViewSource>(scan.object, store);
  } else {
    source = OpenSourceReader(*scan.object);
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

  storage::RowTypes visible_types;
  for (const planner::Column& column : view.columns) visible_types.push_back(column.type);
  std::atomic<uint64_t>* rows_out =
      metrics->Counter("stave_view_rows_out_total", {{"view", view.name}},
                       "Row changes applied to a materialized view.");
  auto log_changes = std::make_shared<std::atomic<bool>>(false);
  size_t global_owner = InstanceOfKey("", parallelism);

  std::vector<Stage> stages;
  uint32_t next_slot = kViewRowsSlot + 2;  // 0: view rows, 1: materialization counters.
  for (size_t s = 0; s < plans.size(); ++s) {
    Stage stage;
    stage.input = plans[s].input;
    uint32_t first_slot = next_slot;
    for (uint32_t instance = 0; instance < parallelism; ++instance) {
      // Every instance of an operator shares its state table; keys never overlap, as each
      // instance sees only the keys of its virtual nodes.
      uint32_t slot = first_slot;
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
            planner::PlanNodePtr owner = query.root;
            while (owner.get() != node) owner = owner->input;
            operators.push_back(std::make_unique<HashAggregateOperator>(
                std::static_pointer_cast<const planner::AggregateNode>(owner),
                storage::StateTable(store, StateTableId(view.id, slot++)), instance == global_owner,
                cached_groups));
            break;
          }
          default:
            throw SqlError(sqlstate::kFeatureNotSupported,
                           "this query cannot run as a materialized view yet");
        }
      }
      if (s + 1 == plans.size()) {
        operators.push_back(std::make_unique<MaterializeOperator>(
            view.id, instance, visible_types, query.keyed, query.key_columns,
            storage::StateTable(store, StateTableId(view.id, kViewRowsSlot)),
            storage::StateTable(store, StateTableId(view.id, kViewRowsSlot + 1)), log_changes,
            rows_out));
      }
      next_slot = slot;
      stage.instances.push_back(std::move(operators));
    }
    stages.push_back(std::move(stage));
  }

  Job::Counters counters;
  counters.rows_in = metrics->Counter("stave_view_rows_in_total", {{"view", view.name}},
                                      "Rows a materialized view read from its stream.");
  counters.stream_rows =
      scan.object->type == planner::ObjectType::kTable
          ? metrics->Counter("stave_table_rows_read_total", {{"table", scan.object->name}},
                             "Row changes read from a table's log, over all views reading it.")
      : scan.object->type == planner::ObjectType::kMaterializedView
          ? metrics->Counter("stave_view_changes_read_total", {{"view", scan.object->name}},
                             "Row changes read from a view's changelog by views over it.")
          : metrics->Counter("stave_stream_rows_read_total", {{"stream", scan.object->name}},
                             "Rows read from a stream, over all views reading it.");
  return std::make_unique<Job>(view.id, view.name, std::move(source), std::move(stages),
                               std::move(log_changes), counters, options.throttle);
}

}  // namespace stave::executor
