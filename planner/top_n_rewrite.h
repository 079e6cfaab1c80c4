#pragma once

#include "planner/logical_plan.h"

namespace stave::planner {

/// Prepares a materialized view's plan for streaming: a WindowNode of one ranking function
/// (row_number, rank, dense_rank) under a filter bounding it (`rn <= N`, `rn < N`, `rn = N`,
/// as one conjunct of the filter, with only projections and filters in between) becomes a
/// TopNNode keeping the rows of rank up to N; the filter stays above it. Throws 0A000 for a
/// window function left over: a view cannot keep every row's rank up to date cheaply.
PlanNodePtr RewriteTopN(const PlanNodePtr& root);

}  // namespace stave::planner
