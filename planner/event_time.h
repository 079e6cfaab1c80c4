#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "planner/logical_plan.h"

namespace stave::planner {

/// The event-time columns of a plan's output: column → `delta`, such that every change
/// still to come (insert or retraction) has a value of at least `watermark + delta` in that
/// column (NULL aside), the watermark being the one that flows out of the plan.
using EventTimeColumns = std::map<size_t, int64_t>;

/// Derives them: a stream's watermark column has delta 0 (rows below the watermark are
/// dropped as late); a materialized view's are those its own plan derived (the view tells
/// its readers the watermark that flows out of its plan); a TUMBLE or HOP window over a
/// time column of delta d gives window_start d + 1 - size and window_end d + 1 (the window
/// of a row still to come ends after its time); filters, column references in projections,
/// and the group keys of an aggregate that updates its groups as rows arrive (a group
/// changes only while rows of it may come, and the operator sends a change it holds for the
/// barrier before a watermark past it) keep them. Joins and unions, whose rows pair or
/// mix inputs of different watermarks, and EMIT ON WINDOW CLOSE, which emits rows below the
/// watermark, have none.
EventTimeColumns DeriveEventTimeColumns(const PlanNode& plan);

/// What `input` (facts about the columns of a node's input) says of the node's outputs that
/// are plain references to those columns: output position → the referenced column's fact. For a
/// projection's expressions or an aggregate's group keys.
std::map<size_t, int64_t> ThroughColumnReferences(const std::vector<BoundExprPtr>& expressions,
                                                  const std::map<size_t, int64_t>& input);

/// The event-time columns among the first `visible_columns` of `plan`'s output: what a
/// materialized view over `plan` records (CatalogObject::event_time_columns).
EventTimeColumns VisibleEventTimeColumns(const PlanNode& plan, size_t visible_columns);

}  // namespace stave::planner
