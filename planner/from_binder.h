#pragma once

#include <map>
#include <vector>

#include "parser/ast.h"
#include "planner/catalog.h"
#include "planner/expression_binder.h"
#include "planner/logical_plan.h"
#include "planner/query_binder.h"

namespace stave::planner {

/// A bound FROM clause: its plan, the scope its columns are named in, and what the query
/// binder needs to know about its inputs.
struct BoundFrom {
  PlanNodePtr plan;
  /// One column per plan output column (hidden helpers included, marked in `sources`), or,
  /// for a single table, view or stream, the object's visible columns (`sources` empty).
  BindScope scope;
  /// The columns an unqualified `*` expands to, in PostgreSQL's order (USING columns first).
  std::vector<size_t> star;
  /// Plan columns identifying an input row (a single table or view; empty for joins).
  std::vector<size_t> input_key;
  bool retracting = false;  ///< The rows may be updated or deleted.
  bool has_join = false;
  std::vector<CatalogObjectPtr> inputs;
  /// Plan columns that bound event-time windows (window_start, window_end of TUMBLE or HOP
  /// over an event-time column: a stream's watermark column, or one a view carries) → how
  /// far past a column's value the watermark must be for no row of that window to come any
  /// more (over a stream's watermark column: the window's size for window_start, 0 for
  /// window_end).
  std::map<size_t, int64_t> window_close_offsets;
  /// The WHERE clause's predicate bound over the plan's output, less the equalities moved
  /// into inner joins as their keys; null if nothing remains.
  BoundExprPtr where;
};

/// Binds a FROM clause and its WHERE clause (`where` may be null). Throws SqlError: 42P01
/// for an unknown relation, 42712 for a name given twice, 42702/42703 in join conditions,
/// and 0A000 for a materialized view's join without an equality between its two sides.
BoundFrom BindFrom(const parser::TableRef& from, const parser::Expr* where, const Catalog& catalog,
                   QueryPurpose purpose);

/// BindQuery for a subquery in FROM: output names may repeat.
BoundQuery BindNestedQuery(const parser::SelectStatement& select, const Catalog& catalog,
                           QueryPurpose purpose);

}  // namespace stave::planner
