#pragma once

#include <cstddef>
#include <map>

#include "planner/logical_plan.h"

namespace stave::planner {

/// Makes identical subplans of a materialized view's plan one node read by all their
/// parents, so that the dataflow computes them once (executor/plan_builder.cc gives such a
/// node's stage one branch per reader). Nexmark's q5 counts bids per auction and window
/// twice, in two subqueries of the same text: shared, the bids are read, windowed and
/// counted once.
///
/// Only subplans holding state are shared (an aggregation, over scans, filters,
/// projections and time windows): a stateless one is cheaper computed twice than sent
/// through an extra exchange. Two subplans are identical when their nodes are of the same
/// kinds with the same expressions (BoundExpr::ToString), output columns and inputs; a node
/// of another kind is never taken for another's twin. The result is a DAG; `root` is left
/// unchanged.
PlanNodePtr ShareIdenticalSubplans(const PlanNodePtr& root);

/// How many nodes of the plan under `root` read each of its nodes (the root itself, read by
/// none, is absent): a shared subplan is read by several.
std::map<const PlanNode*, size_t> CountReaders(const PlanNode& root);

}  // namespace stave::planner
