#pragma once

#include <vector>

#include "common/value.h"
#include "planner/logical_plan.h"

namespace stave::executor {

/// Compares two rows' values of a window's ORDER BY (`a[i]`, `b[i]` for `keys[i]`) in the
/// window's order, NULLs placed as the key says: < 0, 0 (peers) or > 0. Shared by the batch
/// window functions and the streaming top-N, so both rank rows alike.
inline int CompareWindowOrder(const std::vector<Value>& a, const std::vector<Value>& b,
                              const std::vector<planner::WindowOrderKey>& keys) {
  for (size_t i = 0; i < keys.size(); ++i) {
    const Value& x = a[i];
    const Value& y = b[i];
    if (x.is_null() || y.is_null()) {
      if (x.is_null() && y.is_null()) continue;
      return x.is_null() == keys[i].nulls_first ? -1 : 1;
    }
    int c = CompareValues(x, y);
    if (c != 0) return keys[i].descending ? -c : c;
  }
  return 0;
}

}  // namespace stave::executor
