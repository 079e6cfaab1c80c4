#pragma once

#include <cstddef>

#include "planner/logical_plan.h"

namespace stave::planner {

/// Takes the temporal filters out of a streaming definition's WHERE predicate: conjuncts
/// `t > now() - k`, `t >= now() - k`, `t + k > now()`, `now() - k < t` and the like, where
/// `t` is over the row (not now()) and `k` an interval without months (or none). Returns one
/// TemporalFilterNode per conjunct (without input yet), leaves the other conjuncts in
/// `*predicate` (null if none remain) and adds to `*taken` the now() calls it took. Throws
/// 0A000 for a conjunct holding now() in another shape (an upper bound on time, now() in
/// another expression).
std::vector<std::shared_ptr<TemporalFilterNode>> TakeTemporalFilters(BoundExprPtr* predicate,
                                                                     size_t* taken);

/// Whether `expr` holds now() (ScalarFunction::kNow).
bool ContainsNow(const BoundExpr& expr);

}  // namespace stave::planner
