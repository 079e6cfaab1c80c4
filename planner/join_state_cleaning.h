#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "planner/logical_plan.h"

namespace stave::planner {

/// The event-time columns of a plan's output: column → `delta`, such that every change
/// still to come (insert or retraction) has a value of at least `watermark + delta` in that
/// column (NULL aside), the watermark being the one that flows out of the plan.
using EventTimeColumns = std::map<size_t, int64_t>;

/// Derives them: a stream's watermark column has delta 0 (rows below the watermark are
/// dropped as late); a TUMBLE or HOP window over it gives window_start 1 - size and
/// window_end 1 (the window of a row still to come ends after its time); filters, column
/// references in projections, and the group keys of an aggregate that updates its groups
/// as rows arrive (a group changes only while rows of it may come) keep them. Joins and
/// unions, whose rows pair or mix inputs of different watermarks, and EMIT ON WINDOW CLOSE,
/// which emits rows below the watermark, have none.
EventTimeColumns DeriveEventTimeColumns(const PlanNode& plan);

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
