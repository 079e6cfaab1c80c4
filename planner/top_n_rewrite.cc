#include "planner/top_n_rewrite.h"

#include <algorithm>
#include <map>
#include <optional>

#include "common/sql_error.h"

namespace stave::planner {
namespace {

// A column of a node's output that a filter above it bounds: every row that reaches the
// output has a value of at most `limit` there.
struct UpperBound {
  size_t column = 0;
  int64_t limit = 0;
};

// `column <= N`, `column < N`, `column = N` (either way round) over an integer column.
std::optional<UpperBound> BoundOf(const BoundExpr& conjunct) {
  if (conjunct.kind != BoundExpr::Kind::kFunction || conjunct.args.size() != 2) return {};
  const BoundExpr* column = conjunct.args[0].get();
  const BoundExpr* constant = conjunct.args[1].get();
  ScalarFunction function = conjunct.function;
  if (column->kind == BoundExpr::Kind::kConstant) {
    std::swap(column, constant);
    if (function == ScalarFunction::kGreaterEqual)
      function = ScalarFunction::kLessEqual;
    else if (function == ScalarFunction::kGreater)
      function = ScalarFunction::kLess;
    else if (function != ScalarFunction::kEqual)
      return {};
  }
  if (column->kind != BoundExpr::Kind::kColumn || constant->kind != BoundExpr::Kind::kConstant ||
      !constant->type.IsInteger() || constant->constant.is_null()) {
    return {};
  }
  int64_t value = constant->constant.int_value();
  switch (function) {
    case ScalarFunction::kLessEqual:
    case ScalarFunction::kEqual:
      return UpperBound{column->column, value};
    case ScalarFunction::kLess:
      return UpperBound{column->column, value == INT64_MIN ? value : value - 1};
    default:
      return {};
  }
}

// Column → the bound filters above put on it (at most that value reaches the output).
using UpperBounds = std::map<size_t, int64_t>;

// Rewrites the plan under `node`, knowing the bounds filters above put on its output.
PlanNodePtr Rewrite(const PlanNodePtr& node, const UpperBounds& bounds) {
  if (!node) return node;
  UpperBounds input_bounds;
  switch (node->kind) {
    case PlanNodeKind::kFilter: {
      // A filter keeps its input's columns: bounds from above still hold below it.
      input_bounds = bounds;
      std::vector<BoundExprPtr> conjuncts;
      SplitConjuncts(static_cast<const FilterNode&>(*node).predicate, &conjuncts);
      for (const BoundExprPtr& conjunct : conjuncts) {
        if (std::optional<UpperBound> own = BoundOf(*conjunct)) {
          auto [it, inserted] = input_bounds.emplace(own->column, own->limit);
          if (!inserted) it->second = std::min(it->second, own->limit);
        }
      }
      break;
    }
    case PlanNodeKind::kProject: {
      const auto& project = static_cast<const ProjectNode&>(*node);
      for (const auto& [column, limit] : bounds) {
        const BoundExpr& expr = *project.expressions[column];
        if (expr.kind != BoundExpr::Kind::kColumn) continue;
        auto [it, inserted] = input_bounds.emplace(expr.column, limit);
        if (!inserted) it->second = std::min(it->second, limit);
      }
      break;
    }
    case PlanNodeKind::kWindow: {
      const auto& window = static_cast<const WindowNode&>(*node);
      auto bound = bounds.find(node->input->output.size());
      if (bound != bounds.end() && window.functions.size() == 1 &&
          window.functions[0].IsRanking()) {
        auto top = std::make_shared<TopNNode>();
        top->function = window.functions[0];
        top->limit = std::max<int64_t>(bound->second, 0);
        top->append_only_input = window.append_only_input;
        top->output = node->output;
        top->input = Rewrite(node->input, {});
        return top;
      }
      break;
    }
    default:
      break;
  }
  PlanNodePtr input = Rewrite(node->input, input_bounds);
  PlanNodePtr second;
  const PlanNodePtr* old_second = SecondInput(*node);
  if (old_second) second = Rewrite(*old_second, {});
  if (input == node->input && (!old_second || second == *old_second)) return node;
  return WithInputs(*node, std::move(input), std::move(second));
}

void RefuseWindows(const PlanNode* node) {
  if (!node) return;
  if (node->kind == PlanNodeKind::kWindow) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "window functions in a materialized view are supported only as top-N")
        .WithHint(
            "Use one row_number(), rank() or dense_rank() in a subquery in FROM and filter it "
            "outside: SELECT ... FROM (SELECT ..., row_number() OVER (PARTITION BY ... ORDER "
            "BY ...) AS rn FROM t) AS s WHERE rn <= N.");
  }
  if (const PlanNodePtr* second = SecondInput(*node)) RefuseWindows(second->get());
  RefuseWindows(node->input.get());
}

}  // namespace

PlanNodePtr RewriteTopN(const PlanNodePtr& root) {
  PlanNodePtr rewritten = Rewrite(root, {});
  RefuseWindows(rewritten.get());
  return rewritten;
}

}  // namespace stave::planner
