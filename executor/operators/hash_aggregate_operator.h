#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "executor/aggregate_state.h"
#include "executor/operators/stream_operator.h"
#include "executor/packed_keys.h"
#include "planner/logical_plan.h"
#include "storage/row_codec.h"
#include "storage/state_table.h"

namespace stave::executor {

/// Grouped aggregation over a changelog, with its groups in a state table keyed by the
/// memcomparable group key. At each barrier it emits, per group the epoch changed, the
/// change of that group's result row over the epoch: an insert for a new group, an update
/// pair for a changed one, a delete for a group whose last row was retracted. Emitting once
/// per epoch rather than per input chunk costs no freshness (views and sinks show an epoch
/// only once it commits) and spares the operators downstream every intermediate row of a
/// group that changes many times in an epoch. Without group keys there is exactly one
/// group, whose row exists from the start (count 0).
/// Groups are cached in memory; past its size the cache is trimmed after each barrier.
///
/// Grouped by a window over event time (`node->window_close`), a group is dropped from state
/// once the watermark closes its window, so state stays bounded on an endless stream; with
/// EMIT ON WINDOW CLOSE nothing is emitted as rows arrive, and each group's final row is
/// inserted when its window closes. The open windows are indexed in memory by closing time;
/// Start rebuilds the index from the state this instance owns.
///
/// Feeding a grouped view column for column (ViewRows), the aggregate keeps each group's
/// state in the view's rows table, after the group's row: one entry per group where there
/// would be two, and the view's materialization writes no rows of its own. While nothing
/// reads the view's changes (no view or sink over it), the aggregate emits none: it keeps no
/// group's row from before the epoch, builds no update pair, and only counts the changes.
class HashAggregateOperator : public StreamOperator {
 public:
  /// The view whose rows table holds the groups' states.
  struct ViewRows {
    /// For each of the view's columns, the aggregate's output column it shows.
    std::vector<size_t> columns;
    storage::RowTypes types;  ///< The view's column types.
    /// Whether views or sinks read the view's changes (its MaterializeOperator's
    /// `log_changes`; null: always), read at Start and after each barrier as the
    /// materialization reads it. While it is off the changes are not emitted, only counted
    /// into the view's metrics (MaterializeOperator's `rows_written` and `bytes_written`;
    /// either may be null).
    std::shared_ptr<const std::atomic<bool>> changes_read;
    std::atomic<uint64_t>* rows_written = nullptr;
    std::atomic<uint64_t>* bytes_written = nullptr;
  };

  /// `owns_global_group`: for an aggregate without group keys, whether this parallel
  /// instance holds the one group (the instance owning the empty key's virtual node).
  /// `cached_groups`: how many groups stay cached past a barrier. `instance` of
  /// `parallelism`: whose virtual nodes' groups this instance holds (windowed groups only).
  /// `view_rows`: set when `state` is a view's rows table (not for windows that close).
  /// `state_layout`: how the groups' states are written (the view's planner revision's).
  /// `partial_input`: the input is PartialAggregateOperator's partial rows, merged into the
  /// groups, not the node's input rows.
  HashAggregateOperator(std::shared_ptr<const planner::AggregateNode> node,
                        storage::StateTable state, bool owns_global_group = true,
                        size_t cached_groups = size_t{1} << 18, size_t instance = 0,
                        size_t parallelism = 1, std::optional<ViewRows> view_rows = std::nullopt,
                        GroupStateCodec::Layout state_layout = GroupStateCodec::Layout::kPacked,
                        bool partial_input = false);

  /// What a cached group costs in memory, roughly (for sizing the cache from a budget).
  static constexpr size_t kBytesPerCachedGroup = 256;

  void Start() override;
  void OnChunk(Chunk chunk) override;
  void OnWatermark(int64_t watermark) override;
  void OnBarrier(storage::EpochBatch* batch) override;
  size_t BufferedBytes() const override;

  /// Windows not closed yet (for tests: the state a watermark will clean).
  size_t open_windows() const { return open_windows_.size(); }

 private:
  // Past the key in its slot of groups_: the flags every input row reads come first, so
  // that they share the key's cache line.
  struct Group {
    bool dirty = false;
    // Changed since its row was last emitted; that row is before_rows_'s row `before_row`
    // (kNoRow: the group had no row).
    bool pending = false;
    uint32_t before_row = kNoRow;
    GroupState state;
  };
  static constexpr uint32_t kNoRow = UINT32_MAX;
  // Group::before_row of a group that had a row, not kept: its changes are not emitted.
  static constexpr uint32_t kRowNotKept = UINT32_MAX - 1;

  /// Finds a group in the cache or the state table; nullptr if it does not exist.
  Group* FindGroup(std::string_view key);
  /// Adds a group with no rows to the cache (not yet marked dirty).
  Group* CreateGroup(std::string_view key);
  /// Merges partial row `row` of `chunk` (PartialAggregateOperator's) into a group's state.
  void MergePartialRow(const Chunk& chunk, size_t row, GroupState* state);
  /// Marks a group changed in this epoch, keeping the row it had before the change
  /// (`existed`: the group was there before; a new group had no row).
  void MarkPending(std::string_view key, Group* group, bool existed);
  /// Appends the change of a pending group's row since it was last emitted; the group is
  /// then no longer pending. Returns the position in `out` of the group's row as it is now,
  /// if the change ends with it (kNoRow: deleted, or changed back to the row it had).
  size_t AppendChange(std::string_view key, Group* group, Chunk* out);
  /// In place of AppendChange while the changes are not emitted: counts the change of a
  /// pending group's row (an update pair whose row changed back counts too).
  void CountChange(std::string_view key, Group* group);
  /// AppendChange while the changes are emitted, else CountChange (returning kNoRow).
  size_t SettleChange(std::string_view key, Group* group, Chunk* out);
  /// Whether the epoch's changes are emitted (ViewRows::changes_read).
  bool ChangesRead() const;
  /// Appends the value a group's state is stored as: with view_rows_, the view's row
  /// (`out`'s row `row` if not kNoRow, else computed), then the state.
  void EncodeStored(std::string_view key, const Group& group, const Chunk& out, size_t row,
                    std::string* value);
  /// Marks a group changed in this epoch: its state is written at the barrier.
  void MarkDirty(std::string_view key, Group* group);
  /// Whether the state table holds groups of this instance (read at Start).
  bool OwnsStoredGroups() const;
  /// Appends the changes of the pending groups that a watermark must not pass: those with
  /// an event-time key below what the watermark promises of the rows still to come.
  void AppendChangesBelow(int64_t watermark, Chunk* out);
  /// Appends a group's result row: its key's columns, then its aggregates' results.
  void AppendResultRow(std::string_view key, const GroupState& state, Chunk* out, RowOp op) const;
  /// When the window of a group key closes (nullopt: never, its bound is NULL).
  std::optional<int64_t> CloseTime(std::string_view key) const;
  /// Indexes the windows of the groups in state that this instance owns.
  void LoadOpenWindows();

  std::shared_ptr<const planner::AggregateNode> node_;
  storage::StateTable state_;
  bool owns_global_group_;
  size_t cached_groups_;
  size_t instance_;
  size_t parallelism_;
  /// The group keys of unconstrained numeric type, whose scales GroupState::key_scales keeps.
  std::vector<size_t> scaled_keys_;
  GroupStateCodec codec_;
  std::vector<DataType> key_types_;
  std::vector<DataType> output_types_;
  // The rows the groups pending in this epoch had when they became pending (Group::before_row),
  // kept in columns so that a changed group costs no allocation of its own. Emptied at the
  // barrier, when no group is pending any more.
  Chunk before_rows_;
  std::string encoded_state_;  // OnBarrier's scratch.
  std::optional<ViewRows> view_rows_;
  bool partial_input_;
  std::vector<size_t> partial_extras_;  // With partial_input_: where each call's extras start.
  Chunk view_row_;                      // EncodeStored's scratch: a row computed for the view.
  bool emitting_ = true;                // ChangesRead() as of the epoch's start.
  // The changes counted instead of emitted in this epoch: rows and estimated bytes, added to
  // the view's metrics at the barrier.
  uint64_t counted_rows_ = 0;
  uint64_t counted_bytes_ = 0;
  // Open addressing: a lookup touches the control bytes and the slot, which OnChunk
  // prefetches a few rows ahead, where a node-based map chases a bucket and then a node.
  absl::flat_hash_map<std::string, Group> groups_;
  std::vector<std::string> row_keys_;  // OnChunk's encoded group key of each row,
  std::vector<Group*> row_groups_;     // its group,
  std::vector<uint8_t> row_created_;   // and whether the row created the group.
  // Keys of the groups changed in this epoch, in the order they first changed. A key may
  // repeat, or name a group dropped since (a closed window).
  PackedKeys changed_keys_;
  std::vector<Group*> changed_groups_;  // OnBarrier's: the group of each changed key.
  // Whether every group of this instance that exists is in groups_ or listed in
  // stored_uncached_: true from a start with no stored groups until the list outgrows the
  // cache's size in groups, so that a new group costs no read of RocksDB.
  bool cache_complete_ = false;
  // The stored groups that trims took out of groups_, counted per hash of their keys (the
  // map's own, 64 bits; 16 bytes a group where groups_ spends about kBytesPerCachedGroup): a
  // key whose hash is not listed has no stored group; one sharing the hash of a listed key
  // costs a read, no more. A group read back is unlisted. A group is stored from its first
  // barrier on, so a trim after a barrier only takes stored groups.
  absl::flat_hash_map<uint64_t, uint32_t> stored_uncached_;
  // The group keys that carry event time: key index → delta (planner/event_time.h). Every
  // change the operator emits after a watermark w must have such a key of at least
  // w + delta, as for the rows that made it: a pending group's change goes out before a
  // watermark past its key does.
  std::map<size_t, int64_t> event_time_keys_;
  // For the pending groups with event-time keys: the greatest watermark the group's change
  // may wait behind → their keys, in the order they became pending. Keys of groups emitted
  // since are skipped. A list per time, not an entry per group: q5's pending groups, a few
  // hundred thousand an epoch, share the five times of the windows they are in.
  std::map<int64_t, PackedKeys> pending_by_time_;
  // Closing time → keys of the groups of windows still open (window_close only).
  // A list, not a set: a group costs its key's bytes, not also a tree node.
  std::map<int64_t, PackedKeys> open_windows_;
};

}  // namespace stave::executor
