#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/value.h"
#include "executor/chunk.h"
#include "planner/bound_expression.h"

namespace stave::executor {

/// The parts of an aggregate's state that few calls use, apart so that the common ones (a
/// count, a sum, a min or max) do not carry them in every group.
struct AggregateExtras {
  int64_t nan_count = 0;  ///< numeric: NaN inputs, then Infinity and -Infinity inputs.
  int64_t infinity_count = 0;
  int64_t negative_infinity_count = 0;
  Decimal wide_sum;  ///< numeric: the part of the sum that left 128 bits (usually 0).
  /// For an aggregate over DISTINCT values, and for min/max that keep their values: how
  /// many input rows hold each value (by its memcomparable encoding, so the map's first and
  /// last keys are the minimum and the maximum). A value is accumulated when its count goes
  /// from 0 to 1 and retracted when it drops back to 0, so deletes and updates keep the
  /// result exact. Kept in the group's state entry: a group with very many distinct values
  /// pays for their size.
  std::map<std::string, int64_t> distinct_values;
};

/// The running state of one aggregate call within one group. Sums of integers are kept in
/// 128 bits, so only the final result can overflow (and says so) — never an intermediate.
/// Sums of numerics are exact too: the unscaled sum at the largest scale seen, and counts
/// of the special values, so that every input can be retracted exactly.
struct AggregateState {
  AggregateState() = default;
  AggregateState(const AggregateState& other) { *this = other; }
  AggregateState(AggregateState&&) noexcept = default;
  AggregateState& operator=(const AggregateState& other);
  AggregateState& operator=(AggregateState&&) noexcept = default;

  /// The extras, all zero and empty until first written.
  const AggregateExtras& extras() const;
  AggregateExtras& mutable_extras();

  int64_t count = 0;  ///< Rows counted (count(*)) or non-NULL inputs.
  Int128 int_sum = 0;
  double float_sum = 0;
  Value extremum;         ///< min/max so far; NULL before the first input.
  int32_t sum_scale = 0;  ///< numeric: the scale of `int_sum`.

 private:
  std::unique_ptr<AggregateExtras> extras_;  // Allocated on the first write.
};

/// All aggregate states of one group, plus how many input rows the group holds (a keyed
/// group with no rows left disappears from the result).
struct GroupState {
  int64_t row_count = 0;
  std::vector<AggregateState> aggregates;
  /// The display scale of each group key of unconstrained numeric type, taken from the row
  /// that created the group: the key encoding drops trailing zeros (1.50 and 1.5 are one
  /// group), and this gives the group's key back as it was written, as PostgreSQL shows it.
  std::vector<int32_t> key_scales;
};

/// The columns an aggregate call reads from one chunk: its argument's values (none for
/// count(*)) and its FILTER condition's (none without FILTER).
struct AggregateInput {
  std::optional<Column> arg;
  std::optional<Column> filter;
  std::optional<Column> order;  ///< array_agg(x ORDER BY y)'s y; none without order_key.
};

/// Evaluates `call`'s argument and FILTER over `chunk`.
AggregateInput EvaluateAggregateInput(const planner::AggregateCall& call, const Chunk& chunk);

/// Adds (`sign` = +1) or retracts (-1) row `row` of `input`. A row its FILTER does not pass
/// (false or NULL) changes nothing, both ways: an insert and its later delete skip alike.
/// Throws 0A000 for a retraction that min/max without `keeps_values` cannot undo.
void Accumulate(const planner::AggregateCall& call, AggregateState* state,
                const AggregateInput& input, size_t row, int sign);

/// Whether a call's states add up a chunk at a time, so that the rows of a group in a chunk
/// can be combined into one partial row before the exchange (PartialAggregateOperator):
/// count(*) and count(x), sum and avg of integers, and min and max over rows that are never
/// retracted; none with DISTINCT or an ORDER BY.
bool CombinesPartially(const planner::AggregateCall& call);

/// The columns a call's partial state takes past its count: min and max, the extreme (of the
/// argument's type); sum and avg of integers, the sum's high and low 64 bits (BIGINT each).
std::vector<DataType> PartialExtraTypes(const planner::AggregateCall& call);

/// Appends a call's partial state past its count to `columns` (PartialExtraTypes' columns).
void AppendPartialExtras(const planner::AggregateCall& call, const AggregateState& state,
                         Column* columns);

/// Adds a partial state to `state`: `count` inputs counted, and what `extras` (the call's
/// PartialExtraTypes columns) hold at row `row`. The same as accumulating the rows it
/// combines, one by one. REQUIRES: CombinesPartially(call).
void MergePartial(const planner::AggregateCall& call, AggregateState* state, int64_t count,
                  const Column* extras, size_t row);

/// The aggregate's current result (NULL for sum/min/max/avg of no rows).
/// Throws 22003 if an integer sum no longer fits its result type.
Value AggregateResult(const planner::AggregateCall& call, const AggregateState& state);

/// Encodes one aggregate's group states for its state table, and back: a row of fields
/// (row_count; per call count, int_sum's high and low 64 bits, float_sum, extremum, and for a
/// numeric argument sum_scale, the three special-value counts and wide_sum; then the key
/// scales), followed by the values of DISTINCT aggregates when there are any. The field types
/// are worked out once, and the fields are written and read in place, without a row of
/// Values: every group an epoch changes is encoded at its barrier.
class GroupStateCodec {
 public:
  /// How the row of fields is written. A state keeps the layout it was first written with:
  /// the planner revision of its view decides (planner::kPlanVersion).
  enum class Layout : uint8_t {
    /// EncodeRow's: every field, 9 bytes an integer (before revision 7).
    kRow,
    /// EncodePackedRowFrom's, with a field that holds zero (the state of no rows) written as
    /// NULL: a count(*) and a sum(bigint) of a few thousand rows take about 10 bytes, not 83.
    kPacked,
  };

  GroupStateCodec(const std::vector<planner::AggregateCall>& calls, size_t key_scale_count,
                  Layout layout = Layout::kPacked);

  /// Appends the encoding of `state` to `*out`. REQUIRES: `state` holds one AggregateState
  /// per call and `key_scale_count` key scales.
  void Encode(const GroupState& state, std::string* out) const;
  /// Returns false if the bytes do not fit the calls and the key scales.
  bool Decode(std::string_view bytes, GroupState* state) const;

 private:
  /// Which part of a GroupState a field of the encoding holds.
  enum class Slot : uint8_t {
    kRowCount,
    kCount,
    kSumHigh,
    kSumLow,
    kFloatSum,
    kExtremum,
    kSumScale,
    kNanCount,
    kInfinityCount,
    kNegativeInfinityCount,
    kWideSum,
    kKeyScale,
  };
  struct Field {
    Slot slot;
    uint32_t index;  ///< The call (or, for kKeyScale, the key scale) the field belongs to.
  };

  Layout layout_;
  std::vector<DataType> types_;
  std::vector<Field> fields_;
  size_t call_count_;
  size_t key_scale_count_;
  std::vector<uint8_t> keeps_values_;  // Per call: its values follow the fixed fields.
  bool has_distinct_;
};

}  // namespace stave::executor
