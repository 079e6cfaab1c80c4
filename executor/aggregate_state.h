#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/value.h"
#include "executor/chunk.h"
#include "planner/bound_expression.h"

namespace stave::executor {

/// The running state of one aggregate call within one group. Sums of integers are kept in
/// 128 bits, so only the final result can overflow (and says so) — never an intermediate.
struct AggregateState {
  int64_t count = 0;  ///< Rows counted (count(*)) or non-NULL inputs.
  __int128 int_sum = 0;
  double float_sum = 0;
  Value extremum;  ///< min/max so far; NULL before the first input.
  /// For an aggregate over DISTINCT values: how many input rows hold each value (by its
  /// memcomparable encoding). A value is accumulated when its count goes from 0 to 1 and
  /// retracted when it drops back to 0, so deletes and updates keep the result exact. Kept
  /// in the group's state entry: a group with very many distinct values pays for their size.
  std::map<std::string, int64_t> distinct_values;
};

/// All aggregate states of one group, plus how many input rows the group holds (a keyed
/// group with no rows left disappears from the result).
struct GroupState {
  int64_t row_count = 0;
  std::vector<AggregateState> aggregates;
};

/// Adds (`sign` = +1) or retracts (-1) row `row` of `arg` (ignored for count(*)).
/// Throws 0A000 for a retraction that min/max cannot undo.
void Accumulate(const planner::AggregateCall& call, AggregateState* state, const Column* arg,
                size_t row, int sign);

/// The aggregate's current result (NULL for sum/min/max/avg of no rows).
/// Throws 22003 if an integer sum no longer fits its result type.
Value AggregateResult(const planner::AggregateCall& call, const AggregateState& state);

/// Encodes a group's state for a state table, and back. DecodeGroupState returns false if
/// the bytes do not fit `calls`.
std::string EncodeGroupState(const GroupState& state,
                             const std::vector<planner::AggregateCall>& calls);
bool DecodeGroupState(std::string_view bytes, const std::vector<planner::AggregateCall>& calls,
                      GroupState* state);

}  // namespace stave::executor
