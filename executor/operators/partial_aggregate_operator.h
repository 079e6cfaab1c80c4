#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "executor/aggregate_state.h"
#include "executor/operators/stream_operator.h"
#include "planner/logical_plan.h"

namespace stave::executor {

/// Combines the rows of one group within a chunk into one partial row, before the exchange
/// that routes the rows to their HashAggregateOperator, which then merges partial rows
/// (its `partial_input`) instead of adding input rows. Where a chunk holds many rows of a
/// group (bids on a few hot auctions, a count per window, a global sum), the exchange and
/// the aggregate's table see a row per group of the chunk, not one per input row.
///
/// Only aggregates whose calls all combine (Combinable) are pre-aggregated. It holds nothing
/// past a chunk, so it has no state: barriers and watermarks pass as they come, after the
/// chunks before them.
///
/// A partial row (OutputColumns): the group's keys, as the group's first row in the chunk has
/// them (so the aggregate takes a new group's key scales from the row that created it, as it
/// would from the rows themselves); the change of the group's row count; each call's change
/// of its count; then each call's extras (PartialExtraTypes: a min's or max's extreme of the
/// chunk's values, NULL for none; an integer sum's change, in two halves). Its op is
/// kInsert: the changes are in the counts and sums. A group whose rows of the chunk cancel
/// out (inserted and deleted) gets its row too: with its first row, it may create the group,
/// whose key scales then come from that row, as without the partial step.
///
/// By slide (`by_slide`, where CombinesBySlide): the aggregate's input is a HOP, and the
/// operator takes the HOP's own input rows. Its windows overlap, size / slide of them over
/// every instant; cut at every slide, the time line falls into slices of which each lies
/// whole in the same size / slide windows. So each row goes into its slice only, where the
/// HOP would copy it into every window: the rows of a group are combined per slice, and each
/// slice's partial row then goes out once per window holding the slice, its window bounds
/// filled in. The aggregate gets the partial rows it would get from the windows' rows (more
/// of them where a chunk spans several slices, which it merges alike), for a fraction of the
/// work: q5's HOP of 10 s every 2 s copies each bid five times.
class PartialAggregateOperator : public StreamOperator {
 public:
  /// `by_slide`: `node`'s input HOP is taken a slice at a time here (REQUIRES:
  /// CombinesBySlide(*node)); the input rows are then the HOP's input.
  explicit PartialAggregateOperator(std::shared_ptr<const planner::AggregateNode> node,
                                    bool by_slide = false);

  /// Whether every call of `node` combines (CombinesPartially).
  static bool Combinable(const planner::AggregateNode& node);
  /// Whether `node` combines and its input HOP can be taken a slice at a time: the size is a
  /// multiple of the slide, and nothing but whole group keys reads the window's bounds (a
  /// slice's rows have the slice's bounds, not each window's).
  static bool CombinesBySlide(const planner::AggregateNode& node);
  /// The columns of `node`'s partial rows, the keys named as the expressions they are, so
  /// that EXPLAIN shows the exchange's keys as over the rows themselves.
  static std::vector<planner::Column> OutputColumns(const planner::AggregateNode& node);

  void OnChunk(Chunk chunk) override;

 private:
  /// Which window bound a group key is, by slide (the HOP's window_start or window_end).
  enum class Bound : uint8_t { kNone, kStart, kEnd };
  /// Which bound `key` is, read whole, of a window whose start is column `start`.
  static Bound BoundOf(const planner::BoundExpr& key, size_t start);

  std::shared_ptr<const planner::AggregateNode> node_;
  std::vector<DataType> output_types_;
  // By slide: the HOP cut into its slices (a window as long as the slide), the windows
  // holding each slice, and which window bound each group key is.
  std::optional<planner::TimeWindowNode> slices_;
  int64_t window_size_ = 0;
  int64_t windows_per_slice_ = 1;
  std::vector<Bound> key_bounds_;
  // OnChunk's, kept for their room: the rows' encoded keys end to end, where each ends,
  // the chunk's groups by key (views into `keys_`), each group's first row, its row count's
  // change, and its calls' partial states (a group's calls side by side).
  std::string keys_;
  std::vector<uint32_t> key_ends_;
  absl::flat_hash_map<std::string_view, uint32_t> groups_;
  std::vector<uint32_t> first_rows_;
  std::vector<int64_t> row_counts_;
  std::vector<AggregateState> states_;
  std::vector<uint32_t> repeated_first_rows_;  // By slide: each group's first row per window.
};

}  // namespace stave::executor
