#include "planner/temporal_filter.h"

#include <optional>

#include "common/sql_error.h"
#include "common/temporal.h"

namespace stave::planner {
namespace {

void SplitAnd(const BoundExprPtr& expr, std::vector<BoundExprPtr>* conjuncts) {
  if (expr->kind == BoundExpr::Kind::kFunction && expr->function == ScalarFunction::kAnd) {
    for (const auto& arg : expr->args) SplitAnd(arg, conjuncts);
    return;
  }
  conjuncts->push_back(expr);
}

bool IsNow(const BoundExpr& expr) {
  return expr.kind == BoundExpr::Kind::kFunction && expr.function == ScalarFunction::kNow;
}

/// A fixed length of time in microseconds: an interval constant without months.
std::optional<int64_t> FixedInterval(const BoundExpr& expr) {
  if (expr.kind != BoundExpr::Kind::kConstant || expr.type.id != TypeId::kInterval ||
      expr.constant.is_null()) {
    return std::nullopt;
  }
  temporal::Interval interval = temporal::DecodeInterval(expr.constant.string_value());
  if (interval.months != 0) return std::nullopt;
  int64_t micros = 0;
  if (__builtin_mul_overflow(int64_t{interval.days}, temporal::kMicrosPerDay, &micros) ||
      __builtin_add_overflow(micros, interval.micros, &micros)) {
    return std::nullopt;
  }
  return micros;
}

/// `now()`, `now() + k`, `now() - k`, `k + now()`: the shift k in microseconds.
std::optional<int64_t> NowShift(const BoundExpr& expr) {
  if (IsNow(expr)) return 0;
  if (expr.kind != BoundExpr::Kind::kFunction || expr.args.size() != 2) return std::nullopt;
  bool add = expr.function == ScalarFunction::kAdd;
  if (!add && expr.function != ScalarFunction::kSubtract) return std::nullopt;
  const BoundExpr* now = expr.args[0].get();
  const BoundExpr* shift = expr.args[1].get();
  if (add && !IsNow(*now)) std::swap(now, shift);
  if (!IsNow(*now)) return std::nullopt;
  std::optional<int64_t> k = FixedInterval(*shift);
  if (!k || *k == INT64_MIN) return std::nullopt;
  return add ? *k : -*k;
}

/// `t + k` or `t - k` with a fixed k: (t, k in microseconds); else (expr, 0).
std::pair<BoundExprPtr, int64_t> TimeAndShift(const BoundExprPtr& expr) {
  if (expr->kind == BoundExpr::Kind::kFunction && expr->args.size() == 2 &&
      (expr->function == ScalarFunction::kAdd || expr->function == ScalarFunction::kSubtract)) {
    std::optional<int64_t> k = FixedInterval(*expr->args[1]);
    if (k && *k != INT64_MIN && !ContainsNow(*expr->args[0])) {
      return {expr->args[0], expr->function == ScalarFunction::kAdd ? *k : -*k};
    }
  }
  return {expr, 0};
}

[[noreturn]] void RefuseShape() {
  throw SqlError(sqlstate::kFeatureNotSupported,
                 "now() in a materialized view or sink is supported only in a temporal filter: "
                 "WHERE time > now() - INTERVAL '…' (or >=), as a condition of its own")
      .WithHint(
          "A row then stays in the view while it is recent and is retracted as time passes. "
          "The interval must not be in months or years.");
}

}  // namespace

bool ContainsNow(const BoundExpr& expr) {
  if (IsNow(expr)) return true;
  for (const auto& arg : expr.args) {
    if (ContainsNow(*arg)) return true;
  }
  return false;
}

std::vector<std::shared_ptr<TemporalFilterNode>> TakeTemporalFilters(BoundExprPtr* predicate,
                                                                     size_t* taken) {
  std::vector<std::shared_ptr<TemporalFilterNode>> filters;
  if (!*predicate || !ContainsNow(**predicate)) return filters;
  std::vector<BoundExprPtr> conjuncts;
  SplitAnd(*predicate, &conjuncts);
  std::vector<BoundExprPtr> remaining;
  for (const BoundExprPtr& conjunct : conjuncts) {
    if (!ContainsNow(*conjunct)) {
      remaining.push_back(conjunct);
      continue;
    }
    if (conjunct->kind != BoundExpr::Kind::kFunction || conjunct->args.size() != 2) {
      RefuseShape();
    }
    ScalarFunction op = conjunct->function;
    BoundExprPtr row_side = conjunct->args[0];
    BoundExprPtr now_side = conjunct->args[1];
    if (ContainsNow(*row_side)) {
      std::swap(row_side, now_side);
      // now() op t is t op' now().
      if (op == ScalarFunction::kLess) {
        op = ScalarFunction::kGreater;
      } else if (op == ScalarFunction::kLessEqual) {
        op = ScalarFunction::kGreaterEqual;
      } else if (op == ScalarFunction::kGreater) {
        op = ScalarFunction::kLess;
      } else if (op == ScalarFunction::kGreaterEqual) {
        op = ScalarFunction::kLessEqual;
      }
    }
    std::optional<int64_t> now_shift = NowShift(*now_side);
    if (ContainsNow(*row_side) || !now_shift ||
        (op != ScalarFunction::kGreater && op != ScalarFunction::kGreaterEqual) ||
        !row_side->type.IsTimestamp()) {
      RefuseShape();
    }
    // t + k op now() + s holds while now() < t + k - s (<= for >=).
    auto [time, shift] = TimeAndShift(row_side);
    int64_t offset = 0;
    if (__builtin_sub_overflow(shift, *now_shift, &offset)) RefuseShape();
    auto filter = std::make_shared<TemporalFilterNode>();
    filter->time = time;
    filter->offset = offset;
    filter->inclusive = op == ScalarFunction::kGreaterEqual;
    filter->condition = conjunct;
    filters.push_back(filter);
    ++*taken;
  }
  *predicate = nullptr;
  for (const BoundExprPtr& conjunct : remaining) {
    *predicate = *predicate ? BoundExpr::MakeFunction(ScalarFunction::kAnd, TypeId::kBoolean,
                                                      {*predicate, conjunct})
                            : conjunct;
  }
  return filters;
}

}  // namespace stave::planner
