#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/event_time.h"
#include "planner/logical_plan.h"

namespace stave::planner {

/// Fills `join->expiry` from the time bounds its keys and residual put between the two
/// sides: a conjunct `r.y op l.x + k` (op one of = < <= > >=, k a constant, an interval
/// without months for timestamps) bounds the times of the rows of one side that can still
/// meet a stored row of the other: where r.y is an event-time column of the right input,
/// `r.y <= l.x + k` (or = or <) lets a left row go once the right watermark passes l.x + k,
/// whatever l.x is; where l.x is one of the left input, `r.y >= l.x + k` (or = or >) lets a
/// right row go once the left watermark passes r.y - k. `qualified_names` names the join's output
/// columns for EXPLAIN.
void PlanJoinStateCleaning(JoinNode* join, const std::vector<std::string>& qualified_names);

/// For EXPLAIN: "left by <bound>, right by <bound>", or empty when no side is cleaned.
std::string DescribeJoinStateCleaning(const JoinNode& join);

}  // namespace stave::planner
