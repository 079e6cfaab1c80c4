#include "planner/event_time.h"

namespace stave::planner {

EventTimeColumns DeriveEventTimeColumns(const PlanNode& plan) {
  EventTimeColumns columns;
  switch (plan.kind) {
    case PlanNodeKind::kScan: {
      const CatalogObjectPtr& object = static_cast<const ScanNode&>(plan).object;
      if (!object) return columns;
      if (object->type == ObjectType::kStream && object->watermark_column) {
        columns[*object->watermark_column] = 0;
      } else if (object->type == ObjectType::kMaterializedView) {
        columns = object->event_time_columns;
      }
      return columns;
    }
    case PlanNodeKind::kFilter:
      return DeriveEventTimeColumns(*plan.input);
    case PlanNodeKind::kProject:
      return ThroughColumnReferences(static_cast<const ProjectNode&>(plan).expressions,
                                     DeriveEventTimeColumns(*plan.input));
    case PlanNodeKind::kTimeWindow: {
      EventTimeColumns input = DeriveEventTimeColumns(*plan.input);
      const auto& window = static_cast<const TimeWindowNode&>(plan);
      // The window's columns sit after the first visible_columns of the input's.
      for (const auto& [column, delta] : input) {
        columns[column < window.visible_columns ? column : column + 2] = delta;
      }
      auto time = input.find(window.time_column);
      if (time != input.end()) {
        // A row still to come has a time t >= watermark + d; its earliest window starts
        // after t - size.
        columns[window.visible_columns] = time->second + 1 - window.size;
        columns[window.visible_columns + 1] = time->second + 1;
      }
      return columns;
    }
    case PlanNodeKind::kAggregate: {
      const auto& aggregate = static_cast<const AggregateNode&>(plan);
      if (aggregate.emit_on_window_close) return columns;
      return ThroughColumnReferences(aggregate.group_keys, DeriveEventTimeColumns(*plan.input));
    }
    default:
      return columns;
  }
}

std::map<size_t, int64_t> ThroughColumnReferences(const std::vector<BoundExprPtr>& expressions,
                                                  const std::map<size_t, int64_t>& input) {
  std::map<size_t, int64_t> output;
  for (size_t i = 0; i < expressions.size(); ++i) {
    if (expressions[i]->kind != BoundExpr::Kind::kColumn) continue;
    auto found = input.find(expressions[i]->column);
    if (found != input.end()) output[i] = found->second;
  }
  return output;
}

EventTimeColumns VisibleEventTimeColumns(const PlanNode& plan, size_t visible_columns) {
  EventTimeColumns columns = DeriveEventTimeColumns(plan);
  columns.erase(columns.lower_bound(visible_columns), columns.end());
  return columns;
}

}  // namespace stave::planner
