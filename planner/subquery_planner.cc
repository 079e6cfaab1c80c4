#include "planner/subquery_planner.h"

#include <fmt/format.h>

#include <functional>
#include <optional>

#include "common/sql_error.h"
#include "planner/expression_binder.h"

namespace stave::planner {
namespace {

bool PlanReadsOuter(const PlanNode& node, size_t depth);

// Whether `expr` reads a row `depth` or more queries out (a subquery inside counts one
// level deeper).
bool ReadsOuter(const BoundExpr& expr, size_t depth) {
  if (expr.kind == BoundExpr::Kind::kOuterColumn) return expr.outer_depth >= depth;
  if (expr.kind == BoundExpr::Kind::kSubquery && PlanReadsOuter(*expr.subquery->plan, depth + 1)) {
    return true;
  }
  for (const BoundExprPtr& arg : expr.args) {
    if (ReadsOuter(*arg, depth)) return true;
  }
  return false;
}

bool HasSubquery(const BoundExpr& expr) {
  if (expr.kind == BoundExpr::Kind::kSubquery) return true;
  for (const BoundExprPtr& arg : expr.args) {
    if (HasSubquery(*arg)) return true;
  }
  return false;
}

// The first subquery expression in `expr`, or null.
const BoundExpr* FirstSubquery(const BoundExpr& expr) {
  if (expr.kind == BoundExpr::Kind::kSubquery) return &expr;
  for (const BoundExprPtr& arg : expr.args) {
    if (const BoundExpr* found = FirstSubquery(*arg)) return found;
  }
  return nullptr;
}

bool HasColumn(const BoundExpr& expr) {
  if (expr.kind == BoundExpr::Kind::kColumn) return true;
  for (const BoundExprPtr& arg : expr.args) {
    if (HasColumn(*arg)) return true;
  }
  return false;
}

// Calls `visit` on every expression a node holds (not those of its inputs).
void ForEachExpression(const PlanNode& node, const std::function<void(const BoundExpr&)>& visit) {
  switch (node.kind) {
    case PlanNodeKind::kFilter:
      visit(*static_cast<const FilterNode&>(node).predicate);
      break;
    case PlanNodeKind::kProject:
      for (const BoundExprPtr& expr : static_cast<const ProjectNode&>(node).expressions) {
        visit(*expr);
      }
      break;
    case PlanNodeKind::kAggregate: {
      const auto& aggregate = static_cast<const AggregateNode&>(node);
      for (const BoundExprPtr& key : aggregate.group_keys) visit(*key);
      for (const AggregateCall& call : aggregate.aggregates) {
        if (call.arg) visit(*call.arg);
        if (call.filter) visit(*call.filter);
        if (call.order_key) visit(*call.order_key);
      }
      break;
    }
    case PlanNodeKind::kJoin: {
      const auto& join = static_cast<const JoinNode&>(node);
      for (const BoundExprPtr& key : join.left_keys) visit(*key);
      for (const BoundExprPtr& key : join.right_keys) visit(*key);
      if (join.residual) visit(*join.residual);
      break;
    }
    default:
      break;
  }
}

bool PlanReadsOuter(const PlanNode& node, size_t depth) {
  bool reads = false;
  ForEachExpression(node, [&](const BoundExpr& expr) { reads = reads || ReadsOuter(expr, depth); });
  if (reads) return true;
  if (const PlanNodePtr* second = SecondInput(node); second && PlanReadsOuter(**second, depth)) {
    return true;
  }
  return node.input && PlanReadsOuter(*node.input, depth);
}

// `expr` with every part rebuilt by `replace` (which returns null to keep a leaf as is and
// recurse into a function).
BoundExprPtr Rewrite(const BoundExprPtr& expr,
                     const std::function<BoundExprPtr(const BoundExprPtr&)>& replace) {
  if (BoundExprPtr replaced = replace(expr)) return replaced;
  if (expr->kind != BoundExpr::Kind::kFunction) return expr;
  std::vector<BoundExprPtr> args;
  for (const BoundExprPtr& arg : expr->args) args.push_back(Rewrite(arg, replace));
  return BoundExpr::MakeFunction(expr->function, expr->type, std::move(args));
}

// The enclosing row's columns (depth 1) as columns of this input.
BoundExprPtr OuterAsColumns(const BoundExprPtr& expr) {
  return Rewrite(expr, [](const BoundExprPtr& e) -> BoundExprPtr {
    if (e->kind == BoundExpr::Kind::kOuterColumn) return BoundExpr::MakeColumn(e->column, e->type);
    return nullptr;
  });
}

BoundExprPtr ShiftColumns(const BoundExprPtr& expr, size_t delta) {
  return Rewrite(expr, [delta](const BoundExprPtr& e) -> BoundExprPtr {
    if (e->kind == BoundExpr::Kind::kColumn)
      return BoundExpr::MakeColumn(e->column + delta, e->type);
    return nullptr;
  });
}

// `expr` over a projection's output, rewritten over the projection's input.
BoundExprPtr Substitute(const BoundExprPtr& expr, const std::vector<BoundExprPtr>& projection) {
  return Rewrite(expr, [&](const BoundExprPtr& e) -> BoundExprPtr {
    if (e->kind == BoundExpr::Kind::kColumn) return projection[e->column];
    return nullptr;
  });
}

PlanNodePtr MakeFilter(PlanNodePtr input, BoundExprPtr predicate) {
  auto filter = std::make_shared<FilterNode>();
  filter->predicate = std::move(predicate);
  filter->output = input->output;
  filter->input = std::move(input);
  return filter;
}

// Equal hash keys need equal types: both sides of a key pair take one.
void UnifyKeyPair(BoundExprPtr* left, BoundExprPtr* right) {
  DataType a = (*left)->type;
  DataType b = (*right)->type;
  if (a.id == b.id) return;
  DataType target = a;
  if (a.IsInteger() && b.IsInteger()) {
    target = TypeId::kInt64;
  } else if (a.IsNumeric() && b.IsNumeric()) {
    target = TypeId::kFloat64;
  } else if (a.IsString() && b.IsString()) {
    target = TypeId::kVarchar;
  }
  *left = ExpressionBinder::Coerce(*left, target, 0);
  *right = ExpressionBinder::Coerce(*right, target, 0);
}

/// A subquery as the right side of a join with the enclosing query's rows.
struct Decorrelated {
  PlanNodePtr right;
  /// The subquery's select list over `right`'s columns; null where it reads the outer row.
  std::vector<BoundExprPtr> values;
  std::vector<BoundExprPtr> outer_keys;  ///< Over the enclosing query's columns.
  std::vector<BoundExprPtr> inner_keys;  ///< Over `right`'s columns.
  /// Over the enclosing query's `left_width` columns followed by `right`'s.
  std::vector<BoundExprPtr> residual;
};

// Splits a (maybe correlated) subquery into a plan of its own rows and the conditions that
// meet the outer row; nullopt if its form does not allow it (see PlanWhere).
std::optional<Decorrelated> Decorrelate(const BoundSubquery& subquery, size_t left_width) {
  Decorrelated result;
  PlanNodePtr plan = subquery.plan;
  for (size_t i = 0; i < plan->output.size(); ++i) {
    result.values.push_back(BoundExpr::MakeColumn(i, plan->output[i].type));
  }
  if (!subquery.correlated) {
    result.right = plan;
    return result;
  }
  while (plan->kind == PlanNodeKind::kProject) {
    const auto& project = static_cast<const ProjectNode&>(*plan);
    for (BoundExprPtr& value : result.values) {
      if (value) value = Substitute(value, project.expressions);
    }
    plan = plan->input;
  }
  std::vector<BoundExprPtr> conjuncts;
  if (plan->kind == PlanNodeKind::kFilter) {
    SplitConjuncts(static_cast<const FilterNode&>(*plan).predicate, &conjuncts);
    plan = plan->input;
  }
  if (PlanReadsOuter(*plan, 1)) return std::nullopt;
  for (BoundExprPtr& value : result.values) {
    if (value && ReadsOuter(*value, 1)) value = nullptr;
  }
  std::vector<BoundExprPtr> kept;
  for (const BoundExprPtr& conjunct : conjuncts) {
    if (!ReadsOuter(*conjunct, 1)) {
      kept.push_back(conjunct);
      continue;
    }
    if (ReadsOuter(*conjunct, 2) || HasSubquery(*conjunct)) return std::nullopt;
    if (conjunct->kind == BoundExpr::Kind::kFunction &&
        conjunct->function == ScalarFunction::kEqual) {
      const BoundExprPtr& a = conjunct->args[0];
      const BoundExprPtr& b = conjunct->args[1];
      auto outer_only = [](const BoundExprPtr& e) { return !HasColumn(*e) && ReadsOuter(*e, 1); };
      auto inner_only = [](const BoundExprPtr& e) { return !ReadsOuter(*e, 1); };
      if ((outer_only(a) && inner_only(b)) || (outer_only(b) && inner_only(a))) {
        BoundExprPtr outer = OuterAsColumns(outer_only(a) ? a : b);
        BoundExprPtr inner = outer_only(a) ? b : a;
        UnifyKeyPair(&outer, &inner);
        result.outer_keys.push_back(outer);
        result.inner_keys.push_back(inner);
        continue;
      }
    }
    result.residual.push_back(OuterAsColumns(ShiftColumns(conjunct, left_width)));
  }
  result.right = kept.empty() ? plan : MakeFilter(plan, AndOf(kept));
  return result;
}

// Whether a plan yields at most one row: an aggregate without GROUP BY, maybe filtered
// (HAVING) and projected.
bool AtMostOneRow(const PlanNode& plan) {
  const PlanNode* node = &plan;
  while (node->kind == PlanNodeKind::kProject || node->kind == PlanNodeKind::kFilter) {
    node = node->input.get();
  }
  return node->kind == PlanNodeKind::kAggregate &&
         static_cast<const AggregateNode*>(node)->group_keys.empty();
}

/// A correlated scalar subquery as a grouped aggregate to LEFT join on its correlation key.
struct GroupedScalar {
  PlanNodePtr right;  ///< The correlation's inner keys, then the aggregate.
  std::vector<BoundExprPtr> outer_keys;
};

// `(SELECT agg(x) FROM f WHERE f.k = outer.k AND ...)`, with agg other than count (whose
// value over no rows is 0, not the NULL a LEFT join pads with) and the outer row met only
// through equalities: the aggregate grouped by f.k, one row per key, so that a LEFT join
// on outer.k finds a row's value (or NULL, as the subquery over no rows). Nullopt for any
// other form.
std::optional<GroupedScalar> DecorrelateScalar(const BoundSubquery& subquery) {
  if (subquery.plan->kind != PlanNodeKind::kProject) return std::nullopt;
  const auto& project = static_cast<const ProjectNode&>(*subquery.plan);
  const BoundExprPtr& value = project.expressions[0];
  const PlanNodePtr& input = subquery.plan->input;
  if (value->kind != BoundExpr::Kind::kColumn || input->kind != PlanNodeKind::kAggregate) {
    return std::nullopt;
  }
  const auto& aggregate = static_cast<const AggregateNode&>(*input);
  if (!aggregate.group_keys.empty() || value->column >= aggregate.aggregates.size()) {
    return std::nullopt;
  }
  const AggregateCall& call = aggregate.aggregates[value->column];
  if (call.kind == AggregateKind::kCount || call.kind == AggregateKind::kCountStar ||
      (call.arg && ReadsOuter(*call.arg, 1)) || (call.filter && ReadsOuter(*call.filter, 1)) ||
      (call.order_key && ReadsOuter(*call.order_key, 1))) {
    return std::nullopt;
  }
  BoundSubquery rows;
  rows.plan = aggregate.input;
  rows.correlated = true;
  std::optional<Decorrelated> decorrelated = Decorrelate(rows, 0);
  if (!decorrelated || !decorrelated->residual.empty() || decorrelated->outer_keys.empty()) {
    return std::nullopt;
  }
  auto grouped = std::make_shared<AggregateNode>();
  grouped->input = decorrelated->right;
  grouped->group_keys = decorrelated->inner_keys;
  grouped->aggregates = {call};
  for (size_t i = 0; i < grouped->group_keys.size(); ++i) {
    grouped->output.push_back({fmt::format("_key_{}", i), grouped->group_keys[i]->type});
  }
  grouped->output.push_back({project.output[0].name, call.result_type});
  return GroupedScalar{grouped, decorrelated->outer_keys};
}

BoundExprPtr ConstantKey() { return BoundExpr::MakeConstant(Value::Int(0), TypeId::kInt64); }

std::shared_ptr<JoinNode> MakeJoin(JoinType type, PlanNodePtr left, PlanNodePtr right) {
  auto join = std::make_shared<JoinNode>();
  join->join_type = type;
  join->output = left->output;
  if (!join->FiltersLeft()) {
    for (Column column : right->output) {
      column.not_null = false;
      join->output.push_back(column);
    }
  }
  join->input = std::move(left);
  join->right = std::move(right);
  return join;
}

// A semi join (EXISTS, IN) or anti join (NOT EXISTS) of `plan` with a subquery; null if
// the subquery cannot be joined.
PlanNodePtr SemiOrAntiJoin(const PlanNodePtr& plan, const BoundExpr& condition, bool anti) {
  const BoundSubquery& subquery = *condition.subquery;
  std::optional<Decorrelated> decorrelated = Decorrelate(subquery, plan->output.size());
  if (!decorrelated) return nullptr;
  auto join = MakeJoin(anti ? JoinType::kAnti : JoinType::kSemi, plan, decorrelated->right);
  join->left_keys = decorrelated->outer_keys;
  join->right_keys = decorrelated->inner_keys;
  if (subquery.kind == SubqueryKind::kAny) {
    BoundExprPtr operand = condition.args[0];
    BoundExprPtr value = decorrelated->values[0];
    if (!value || HasSubquery(*operand)) return nullptr;
    UnifyKeyPair(&operand, &value);
    join->left_keys.push_back(operand);
    join->right_keys.push_back(value);
  }
  if (join->left_keys.empty()) {
    join->left_keys.push_back(ConstantKey());
    join->right_keys.push_back(ConstantKey());
  }
  join->residual = AndOf(decorrelated->residual);
  return join;
}

}  // namespace

PlanNodePtr PlanWhere(PlanNodePtr input, BoundExprPtr predicate, QueryPurpose purpose,
                      bool* joined) {
  if (!HasSubquery(*predicate)) return MakeFilter(std::move(input), std::move(predicate));
  size_t width = input->output.size();
  PlanNodePtr plan = input;
  std::vector<BoundExprPtr> conjuncts;
  SplitConjuncts(predicate, &conjuncts);
  std::vector<BoundExprPtr> remaining;
  for (const BoundExprPtr& conjunct : conjuncts) {
    bool negated = conjunct->kind == BoundExpr::Kind::kFunction &&
                   conjunct->function == ScalarFunction::kNot &&
                   conjunct->args[0]->kind == BoundExpr::Kind::kSubquery;
    const BoundExpr& condition = negated ? *conjunct->args[0] : *conjunct;
    if (condition.kind == BoundExpr::Kind::kSubquery) {
      const BoundSubquery& subquery = *condition.subquery;
      bool exists = subquery.kind == SubqueryKind::kExists;
      bool in =
          subquery.kind == SubqueryKind::kAny && subquery.comparison == ScalarFunction::kEqual;
      if (in && negated && purpose == QueryPurpose::kMaterializedView) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       "NOT IN (subquery) is not supported in a materialized view")
            .WithHint(
                "NOT IN is NULL, not true, once the subquery yields a NULL. Write NOT EXISTS "
                "(SELECT ... WHERE inner = outer), which ignores NULLs, if that is what you mean.");
      }
      if (exists || (in && !negated)) {
        if (PlanNodePtr joined = SemiOrAntiJoin(plan, condition, negated)) {
          plan = joined;
          continue;
        }
      }
    }
    remaining.push_back(conjunct);
  }
  // Uncorrelated scalar subqueries of at most one row become columns of a LEFT join.
  std::vector<BoundExprPtr> rewritten;
  for (const BoundExprPtr& conjunct : remaining) {
    rewritten.push_back(Rewrite(conjunct, [&](const BoundExprPtr& e) -> BoundExprPtr {
      if (e->kind != BoundExpr::Kind::kSubquery) return nullptr;
      const BoundSubquery& subquery = *e->subquery;
      if (subquery.kind == SubqueryKind::kScalar && subquery.correlated) {
        std::optional<GroupedScalar> grouped = DecorrelateScalar(subquery);
        if (!grouped) return e;
        size_t keys = grouped->outer_keys.size();
        size_t column = plan->output.size() + keys;
        auto join = MakeJoin(JoinType::kLeft, plan, grouped->right);
        join->left_keys = grouped->outer_keys;
        for (size_t i = 0; i < keys; ++i) {
          join->right_keys.push_back(BoundExpr::MakeColumn(i, grouped->right->output[i].type));
        }
        plan = join;
        return BoundExpr::MakeColumn(column, e->type);
      }
      if (subquery.kind != SubqueryKind::kScalar || subquery.correlated ||
          !AtMostOneRow(*subquery.plan)) {
        return e;
      }
      size_t column = plan->output.size();
      auto join = MakeJoin(JoinType::kLeft, plan, subquery.plan);
      join->left_keys = {ConstantKey()};
      join->right_keys = {ConstantKey()};
      join->scalar_subquery = true;
      plan = join;
      return BoundExpr::MakeColumn(column, e->type);
    }));
  }
  *joined = plan != input;
  if (!rewritten.empty()) plan = MakeFilter(plan, AndOf(rewritten));
  if (plan->output.size() != width) {
    auto project = std::make_shared<ProjectNode>();
    for (size_t i = 0; i < width; ++i) {
      project->expressions.push_back(BoundExpr::MakeColumn(i, input->output[i].type));
    }
    project->output = input->output;
    project->input = plan;
    plan = project;
  }
  return plan;
}

void RequireNoSubqueries(const PlanNode& plan, int position) {
  ForEachExpression(plan, [&](const BoundExpr& expr) {
    const BoundExpr* subquery = FirstSubquery(expr);
    if (subquery && subquery->subquery->kind == SubqueryKind::kScalar &&
        subquery->subquery->correlated) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "correlated scalar subqueries are not supported in a materialized view yet",
                     position)
          .WithHint(
              "Join a grouped subquery in FROM on the correlation key instead, such as "
              "JOIN (SELECT k, max(x) AS m FROM t GROUP BY k) AS g ON g.k = outer.k.");
    }
    if (subquery) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "this subquery is not supported in a materialized view", position)
          .WithHint(
              "A view takes EXISTS, NOT EXISTS and IN (subquery) as conditions of its WHERE "
              "clause (correlated through equalities), and uncorrelated scalar subqueries of "
              "one aggregate row (such as (SELECT max(x) FROM t)) in WHERE.");
    }
  });
  if (const PlanNodePtr* second = SecondInput(plan)) RequireNoSubqueries(**second, position);
  if (plan.input) RequireNoSubqueries(*plan.input, position);
}

}  // namespace stave::planner
