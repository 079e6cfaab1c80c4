#pragma once

#include <map>
#include <vector>

#include "executor/chunk.h"
#include "planner/logical_plan.h"

namespace stave::executor {

/// Runs the plans of subquery expressions for the expression evaluator. Subqueries that the
/// planner left as expressions (planner/subquery_planner.h) only appear in batch queries, so
/// the batch executor provides one; evaluating a subquery without one is an internal error.
class SubqueryRunner {
 public:
  virtual ~SubqueryRunner() = default;
  /// The first column of every row `plan` yields. Outer columns in it read the rows that
  /// EvaluateSubquery has pushed.
  virtual std::vector<Value> FirstColumn(const planner::PlanNode& plan) = 0;
};

/// While alive, subqueries evaluated on this thread run on `runner`; the results of
/// uncorrelated ones are kept until it goes (they run once per query). Not copyable;
/// scopes nest and end in reverse order on the thread that opened them.
class ScopedSubqueryRunner {
 public:
  explicit ScopedSubqueryRunner(SubqueryRunner* runner);
  ~ScopedSubqueryRunner();
  ScopedSubqueryRunner(const ScopedSubqueryRunner&) = delete;
  ScopedSubqueryRunner& operator=(const ScopedSubqueryRunner&) = delete;

  SubqueryRunner* runner() const { return runner_; }
  /// Uncorrelated subqueries' values, by subquery.
  std::map<const planner::BoundSubquery*, std::vector<Value>>& cache() { return cache_; }

 private:
  SubqueryRunner* runner_;
  ScopedSubqueryRunner* previous_;
  std::map<const planner::BoundSubquery*, std::vector<Value>> cache_;
};

/// A kSubquery expression over every row of `chunk` (a correlated subquery runs once per
/// row, with the row pushed as its outer row). Throws 21000 for a scalar subquery of more
/// than one row.
Column EvaluateSubquery(const planner::BoundExpr& expr, const Chunk& chunk);

/// A kOuterColumn expression: the value of the enclosing row, for every row of `chunk`.
Column EvaluateOuterColumn(const planner::BoundExpr& expr, const Chunk& chunk);

}  // namespace stave::executor
