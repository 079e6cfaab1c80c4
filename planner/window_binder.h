#pragma once

#include <optional>
#include <vector>

#include "parser/ast.h"
#include "planner/expression_binder.h"
#include "planner/logical_plan.h"
#include "planner/unnest_binding.h"

namespace stave::planner {

/// Whether the expression calls a window function (a function with OVER).
bool ContainsWindowFunction(const parser::Expr& expr);

/// Throws 0A000: window functions in a query with GROUP BY or aggregates are not supported.
[[noreturn]] void RefuseWindowFunctionInGroupedQuery(const parser::FunctionCallExpr& call);

/// Binds the select list and ORDER BY of a query without grouping where window functions
/// may appear. Each window call becomes a reference to the column a WindowNode (built by
/// MakeWindowNode over the plan of `input_width` columns) appends for it; the calls are
/// collected in `functions`, in that order.
class WindowExpressionBinder : public ExpressionBinder {
 public:
  /// `unnests`, if not null, takes the select list's unnest calls.
  WindowExpressionBinder(const BindScope* scope, size_t input_width,
                         std::vector<WindowFunction>* functions,
                         SelectListUnnests* unnests = nullptr)
      : ExpressionBinder(scope),
        input_width_(input_width),
        functions_(functions),
        unnests_(unnests) {}

 protected:
  std::optional<BoundExprPtr> Intercept(const parser::Expr& expr) override;

 private:
  BoundExprPtr BindWindowFunction(const parser::FunctionCallExpr& call);

  size_t input_width_;
  std::vector<WindowFunction>* functions_;
  SelectListUnnests* unnests_;
};

/// `input` with a WindowNode computing `functions` over it; `input` itself if there are none.
/// `append_only_input`: whether `input` only ever grows.
PlanNodePtr MakeWindowNode(PlanNodePtr input, std::vector<WindowFunction> functions,
                           bool append_only_input);

/// DISTINCT ON: the first row of `input` (by `order`) for each value of the columns
/// `distinct_on`, as a top-1 TopNNode. Output: `input`'s columns, then the row number.
PlanNodePtr MakeDistinctOn(PlanNodePtr input, const std::vector<size_t>& distinct_on,
                           const std::vector<SortKey>& order, bool append_only_input);

}  // namespace stave::planner
