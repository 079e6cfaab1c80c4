#pragma once

#include <cstddef>
#include <vector>

#include "planner/logical_plan.h"

namespace stave::planner {

/// The visible columns of a materialized view's query that hold its rows' key, in key order
/// (CatalogObject::row_key_columns): a key column that is hidden (`_input_key_0`,
/// `_group_key_0`) counts when a visible column computes the same expression. Empty when the
/// rows have no key or part of it is not visible.
std::vector<size_t> VisibleRowKeyColumns(const BoundQuery& query);

}  // namespace stave::planner
