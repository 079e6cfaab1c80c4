#pragma once

#include "planner/logical_plan.h"
#include "planner/query_binder.h"

namespace stave::planner {

/// Plans a WHERE clause over `input` (its predicate bound over input's columns); the result
/// has input's columns. Subqueries in the predicate's top-level conjuncts become joins where
/// their form allows, in SELECT and in views alike:
///
/// - `EXISTS (q)` and `x IN (q)` become semi joins, `NOT EXISTS (q)` an anti join. A
///   correlated q must be a SELECT whose WHERE meets the outer row through equalities
///   (`inner = outer`: the join's keys) and other conditions over both rows (the join's
///   residual); without such an equality the sides meet on a constant key.
/// - an uncorrelated scalar subquery that yields at most one row (an aggregate without GROUP
///   BY) is joined as a column: a LEFT join on a constant key with its one row, so that the
///   filter over it (`price > (SELECT max(price) ...)`, a dynamic filter) is re-evaluated for
///   every row when that row changes.
/// - a correlated scalar subquery of one aggregate (not count) that meets the outer row
///   through equalities is that aggregate grouped by the correlation key, LEFT joined on it.
///
/// Anything else stays a subquery expression, evaluated per row by batch queries; a view
/// refuses it (RequireNoSubqueries). Sets `*joined` if a join was added.
PlanNodePtr PlanWhere(PlanNodePtr input, BoundExprPtr predicate, QueryPurpose purpose,
                      bool* joined);

/// Throws 0A000 if a subquery expression is left anywhere in `plan` (a view's plan):
/// `position` locates the query.
void RequireNoSubqueries(const PlanNode& plan, int position);

}  // namespace stave::planner
