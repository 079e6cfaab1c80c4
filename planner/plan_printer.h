#pragma once

#include <string>
#include <vector>

#include "planner/logical_plan.h"

namespace stave::planner {

/// EXPLAIN's logical plan: one line per node from the output down, a node's input indented
/// under it, expressions written with column names rather than positions. A subplan several
/// nodes read (planner/shared_subplans.h) is written once, marked, and named again under its
/// other readers.
std::vector<std::string> ExplainPlan(const PlanNode& root);

/// One node alone, as ExplainPlan writes it ("HashAggregate: group by k; count(*)").
std::string ExplainNode(const PlanNode& node);

/// An aggregate's keys and calls, as ExplainNode writes them ("group by k; count(*)").
std::string ExplainGrouping(const AggregateNode& aggregate);

/// `expr` (bound over `columns`) as text, its column references by name.
std::string ExplainExpression(const BoundExpr& expr, const std::vector<Column>& columns);

}  // namespace stave::planner
