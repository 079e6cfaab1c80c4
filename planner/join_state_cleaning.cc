#include "planner/join_state_cleaning.h"

#include <optional>

#include "common/temporal.h"
#include "planner/plan_printer.h"

namespace stave::planner {
namespace {

/// `column + offset`, in the column's physical units.
struct LinearTime {
  size_t column = 0;
  int64_t offset = 0;
};

/// A constant shift of event time: an integer, or an interval of fixed length (no months:
/// a month has no fixed number of microseconds).
std::optional<int64_t> ConstantShift(const BoundExpr& expr) {
  if (expr.kind == BoundExpr::Kind::kFunction && expr.function == ScalarFunction::kCast &&
      expr.type.IsInteger() && expr.args.size() == 1) {
    return ConstantShift(*expr.args[0]);
  }
  if (expr.kind != BoundExpr::Kind::kConstant || expr.constant.is_null()) return std::nullopt;
  if (expr.type.IsInteger()) return expr.constant.int_value();
  if (expr.type.id == TypeId::kInterval) {
    temporal::Interval interval = temporal::DecodeInterval(expr.constant.string_value());
    if (interval.months != 0) return std::nullopt;
    int64_t micros = 0;
    if (__builtin_mul_overflow(int64_t{interval.days}, temporal::kMicrosPerDay, &micros) ||
        __builtin_add_overflow(micros, interval.micros, &micros)) {
      return std::nullopt;
    }
    return micros;
  }
  return std::nullopt;
}

/// `column`, `column + k`, `k + column` or `column - k` over an event-time type.
std::optional<LinearTime> AsLinearTime(const BoundExpr& expr) {
  if (expr.kind == BoundExpr::Kind::kColumn) return LinearTime{expr.column, 0};
  if (expr.kind != BoundExpr::Kind::kFunction || expr.args.size() != 2) return std::nullopt;
  bool add = expr.function == ScalarFunction::kAdd;
  if (!add && expr.function != ScalarFunction::kSubtract) return std::nullopt;
  if (!expr.type.IsTimestamp() && !expr.type.IsInteger()) return std::nullopt;
  const BoundExpr* column = expr.args[0].get();
  const BoundExpr* shift = expr.args[1].get();
  if (add && column->kind != BoundExpr::Kind::kColumn) std::swap(column, shift);
  if (column->kind != BoundExpr::Kind::kColumn) return std::nullopt;
  std::optional<int64_t> k = ConstantShift(*shift);
  if (!k) return std::nullopt;
  if (!add) {
    if (*k == INT64_MIN) return std::nullopt;
    *k = -*k;
  }
  return LinearTime{column->column, *k};
}

ScalarFunction Flip(ScalarFunction comparison) {
  switch (comparison) {
    case ScalarFunction::kLess:
      return ScalarFunction::kGreater;
    case ScalarFunction::kLessEqual:
      return ScalarFunction::kGreaterEqual;
    case ScalarFunction::kGreater:
      return ScalarFunction::kLess;
    case ScalarFunction::kGreaterEqual:
      return ScalarFunction::kLessEqual;
    default:
      return comparison;
  }
}

class CleaningPlanner {
 public:
  CleaningPlanner(JoinNode* join, const EventTimeColumns* left, const EventTimeColumns* right)
      : join_(join), columns_{left, right}, left_width_(join->input->output.size()) {}

  /// `a op b`, where `a` and `b` are over the join's output columns; `text` for EXPLAIN.
  void AddComparison(ScalarFunction op, const BoundExpr& a, const BoundExpr& b,
                     const std::string& text) {
    std::optional<LinearTime> first = AsLinearTime(a);
    std::optional<LinearTime> second = AsLinearTime(b);
    if (!first || !second) return;
    // Puts the left side's term first: l.x + p op r.y + q.
    if (first->column >= left_width_ && second->column < left_width_) {
      std::swap(first, second);
      op = Flip(op);
    }
    if (first->column >= left_width_ || second->column < left_width_) return;
    second->column -= left_width_;
    // A bound needs event time only on the side whose rows still to come it limits: a
    // stored row's own column may be any value (`b.ts <= a.expires` cleans auctions by
    // the bids' watermark, whatever `expires` is).
    auto left_delta = columns_[0]->find(first->column);
    auto right_delta = columns_[1]->find(second->column);
    bool left_is_time = left_delta != columns_[0]->end();
    bool right_is_time = right_delta != columns_[1]->end();
    if (!left_is_time && !right_is_time) return;
    if (join_->input->output[first->column].type.id !=
        join_->right->output[second->column].type.id) {
      return;
    }
    // r.y op' l.x + k, with k = p - q.
    int64_t k = 0;
    if (__builtin_sub_overflow(first->offset, second->offset, &k)) return;
    ScalarFunction right_op = Flip(op);
    bool strict = right_op == ScalarFunction::kLess || right_op == ScalarFunction::kGreater;
    if (right_is_time &&
        (right_op == ScalarFunction::kLessEqual || right_op == ScalarFunction::kLess ||
         right_op == ScalarFunction::kEqual)) {
      // The right rows still to come have r.y >= wm_r + delta_r, and need r.y <= l.x + k
      // (< for strict): a left row is done once wm_r + delta_r > l.x + k.
      AddTerm(0, first->column, k, right_delta->second, strict, text);
    }
    if (left_is_time &&
        (right_op == ScalarFunction::kGreaterEqual || right_op == ScalarFunction::kGreater ||
         right_op == ScalarFunction::kEqual)) {
      // l.x <= r.y - k: a right row is done once wm_l + delta_l > r.y - k.
      if (k == INT64_MIN) return;
      AddTerm(1, second->column, -k, left_delta->second, strict, text);
    }
  }

 private:
  // A row of `side` expires when the other side's watermark reaches value + bound -
  // other_delta (+ 1 unless strict).
  void AddTerm(size_t side, size_t column, int64_t bound, int64_t other_delta, bool strict,
               const std::string& text) {
    int64_t offset = 0;
    if (__builtin_sub_overflow(bound, other_delta, &offset)) return;
    if (!strict && __builtin_add_overflow(offset, 1, &offset)) return;
    join_->expiry[side].push_back(JoinNode::Expiry{column, offset, text});
  }

  JoinNode* join_;
  const EventTimeColumns* columns_[2];
  size_t left_width_;
};

void SplitAnd(const BoundExprPtr& expr, std::vector<BoundExprPtr>* conjuncts) {
  if (expr->kind == BoundExpr::Kind::kFunction && expr->function == ScalarFunction::kAnd) {
    for (const auto& arg : expr->args) SplitAnd(arg, conjuncts);
    return;
  }
  conjuncts->push_back(expr);
}

BoundExprPtr ShiftColumns(const BoundExprPtr& expr, size_t delta) {
  if (expr->kind == BoundExpr::Kind::kColumn) {
    return BoundExpr::MakeColumn(expr->column + delta, expr->type);
  }
  if (expr->kind == BoundExpr::Kind::kConstant) return expr;
  std::vector<BoundExprPtr> args;
  for (const auto& arg : expr->args) args.push_back(ShiftColumns(arg, delta));
  return BoundExpr::MakeFunction(expr->function, expr->type, std::move(args));
}

bool IsComparison(ScalarFunction function) {
  return function == ScalarFunction::kEqual || function == ScalarFunction::kLess ||
         function == ScalarFunction::kLessEqual || function == ScalarFunction::kGreater ||
         function == ScalarFunction::kGreaterEqual;
}

}  // namespace

void PlanJoinStateCleaning(JoinNode* join, const std::vector<std::string>& qualified_names) {
  EventTimeColumns left = DeriveEventTimeColumns(*join->input);
  EventTimeColumns right = DeriveEventTimeColumns(*join->right);
  join->expiry[0].clear();
  join->expiry[1].clear();
  std::vector<Column> named = join->output;
  for (size_t i = 0; i < named.size() && i < qualified_names.size(); ++i) {
    named[i].name = qualified_names[i];
  }
  size_t left_width = join->input->output.size();
  CleaningPlanner planner(join, &left, &right);
  for (size_t i = 0; i < join->left_keys.size(); ++i) {
    // Keys are over each side's own columns; the comparison takes the join's output's.
    BoundExprPtr right_in_output = ShiftColumns(join->right_keys[i], left_width);
    std::string text = ExplainExpression(*join->left_keys[i], named) + " = " +
                       ExplainExpression(*right_in_output, named);
    planner.AddComparison(ScalarFunction::kEqual, *join->left_keys[i], *right_in_output, text);
  }
  if (join->residual) {
    std::vector<BoundExprPtr> conjuncts;
    SplitAnd(join->residual, &conjuncts);
    for (const BoundExprPtr& conjunct : conjuncts) {
      if (conjunct->kind != BoundExpr::Kind::kFunction || !IsComparison(conjunct->function) ||
          conjunct->args.size() != 2) {
        continue;
      }
      planner.AddComparison(conjunct->function, *conjunct->args[0], *conjunct->args[1],
                            ExplainExpression(*conjunct, named));
    }
  }
}

std::string DescribeJoinStateCleaning(const JoinNode& join) {
  std::string text;
  const char* sides[2] = {"left rows", "right rows"};
  for (size_t side = 0; side < 2; ++side) {
    if (join.expiry[side].empty()) continue;
    text += text.empty() ? "" : "; ";
    text += sides[side];
    text += " by ";
    for (size_t i = 0; i < join.expiry[side].size(); ++i) {
      if (i > 0) text += ", ";
      text += join.expiry[side][i].bound;
    }
  }
  return text;
}

}  // namespace stave::planner
