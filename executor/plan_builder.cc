#include "executor/plan_builder.h"

#include <vector>

#include "common/sql_error.h"
#include "executor/connectors/connectors.h"
#include "executor/connectors/table/table_source.h"
#include "executor/connectors/view/view_source.h"
#include "executor/operators/filter_operator.h"
#include "executor/operators/hash_aggregate_operator.h"
#include "executor/operators/materialize_operator.h"
#include "executor/operators/project_operator.h"

namespace stave::executor {

std::unique_ptr<Job> BuildJob(const planner::CatalogObject& view, const planner::BoundQuery& query,
                              const storage::Store* store, Metrics* metrics,
                              const std::function<std::shared_ptr<Table>(uint32_t)>& tables) {
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

  std::vector<std::unique_ptr<StreamOperator>> operators;
  uint32_t next_slot = kViewRowsSlot + 2;  // 0: view rows, 1: materialization counters.
  for (auto it = chain.rbegin() + 1; it != chain.rend(); ++it) {
    const planner::PlanNode* node = *it;
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
            storage::StateTable(store, StateTableId(view.id, next_slot++))));
        break;
      }
      default:
        throw SqlError(sqlstate::kFeatureNotSupported,
                       "this query cannot run as a materialized view yet");
    }
  }
  storage::RowTypes visible_types;
  for (const planner::Column& column : view.columns) visible_types.push_back(column.type);
  std::atomic<uint64_t>* rows_out =
      metrics->Counter("stave_view_rows_out_total", {{"view", view.name}},
                       "Row changes applied to a materialized view.");
  operators.push_back(std::make_unique<MaterializeOperator>(
      view.id, visible_types, query.keyed, query.key_columns,
      storage::StateTable(store, StateTableId(view.id, kViewRowsSlot)),
      storage::StateTable(store, StateTableId(view.id, kViewRowsSlot + 1)), rows_out));

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
  return std::make_unique<Job>(view.id, view.name, std::move(source), std::move(operators),
                               counters);
}

}  // namespace stave::executor
