#pragma once

#include "executor/operators/stream_operator.h"
#include "planner/bound_expression.h"

namespace stave::executor {

/// Keeps the rows for which a predicate is true. On a changelog, an update whose old row
/// passes but whose new row does not becomes a delete (and the reverse an insert), so the
/// output stays a consistent changelog.
class FilterOperator : public StreamOperator {
 public:
  explicit FilterOperator(planner::BoundExprPtr predicate) : predicate_(std::move(predicate)) {}

  void OnChunk(Chunk chunk) override;

  /// The filtering itself, shared with the batch engine.
  static Chunk Apply(const planner::BoundExpr& predicate, Chunk chunk);

 private:
  planner::BoundExprPtr predicate_;
};

}  // namespace stave::executor
