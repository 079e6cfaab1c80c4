#pragma once

#include "planner/logical_plan.h"

namespace stave::planner {

/// Whether the rows `node` outputs only ever grow: no update or delete of a row ever comes
/// out of it (a stream's scan, and filters, projections, time windows and inner joins over
/// such inputs). False where unsure.
bool OnlyGrows(const PlanNode& node);

/// `root` with JoinNode::appends set on each join side whose input only grows (OnlyGrows).
/// Shared subplans stay shared; `root` is left unchanged.
PlanNodePtr MarkGrowingJoinSides(const PlanNodePtr& root);

}  // namespace stave::planner
