#pragma once

#include <memory>
#include <string>
#include <vector>

#include "parser/ast.h"
#include "planner/bound_expression.h"
#include "planner/logical_plan.h"

namespace stave::planner {

class ExpressionBinder;

/// The `unnest(array, …)` calls of a select list (and of ORDER BY, in a SELECT), as
/// PostgreSQL runs set-returning functions there: each call becomes a column of one
/// UnnestNode under the projection, and all calls expand side by side, the shorter arrays
/// padded with NULLs, so a single call gives one row per element.
class SelectListUnnests {
 public:
  /// `input_width`: the columns of the plan the UnnestNode will sit on.
  explicit SelectListUnnests(size_t input_width) : input_width_(input_width) {}

  /// Binds `call` (an unnest call) with `binder` and returns the reference to its element
  /// column. A call repeated with the same argument shares one column. Throws 42883 for an
  /// argument that is not an array, 0A000 for several arguments or a nested unnest.
  BoundExprPtr Bind(const parser::FunctionCallExpr& call, ExpressionBinder* binder);

  bool empty() const { return arrays_.empty(); }

  /// `input` with the UnnestNode computing every call bound so far; `input` if there are none.
  PlanNodePtr MakeNode(PlanNodePtr input) const;

 private:
  size_t input_width_;
  /// generate_subscripts(array, dimension): the array's subscripts, side by side with the
  /// unnest calls.
  BoundExprPtr BindSubscripts(const parser::FunctionCallExpr& call, ExpressionBinder* binder);
  /// information_schema._pg_expandarray(array): the record (element, subscript) as text.
  BoundExprPtr BindExpandArray(const parser::FunctionCallExpr& call, ExpressionBinder* binder);
  /// The column of `array` (its elements, or its subscripts), shared by repeated calls.
  BoundExprPtr Column(BoundExprPtr array, bool subscripts, DataType type);

  std::vector<BoundExprPtr> arrays_;
  std::vector<bool> subscripts_;
  std::vector<std::string> texts_;  // Each array's ToString, to share repeated calls.
};

/// Whether `name` (a function's name, lower-case) is a set-returning function of select
/// lists: unnest, generate_subscripts, information_schema._pg_expandarray.
bool IsSetReturningFunction(const parser::QualifiedName& name);

/// The UnnestNode of `unnest(arrays…)` over `input`, with the element (and ordinality)
/// columns named `names`. Throws 42883 for an argument that is not an array.
std::shared_ptr<UnnestNode> MakeUnnestNode(PlanNodePtr input, std::vector<BoundExprPtr> arrays,
                                           const std::vector<int>& positions, bool with_ordinality,
                                           const std::vector<std::string>& names);

}  // namespace stave::planner
