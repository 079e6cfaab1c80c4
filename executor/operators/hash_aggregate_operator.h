#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "executor/aggregate_state.h"
#include "executor/operators/stream_operator.h"
#include "planner/logical_plan.h"
#include "storage/state_table.h"

namespace stave::executor {

/// Grouped aggregation over a changelog, with its groups in a state table keyed by the
/// memcomparable group key. For each input chunk it emits, per group the chunk touched, the
/// change of that group's result row: an insert for a new group, an update pair for a
/// changed one, a delete for a group whose last row was retracted. Without group keys
/// there is exactly one group, whose row exists from the start (count 0).
/// Groups are cached in memory; past its size the cache is trimmed after each barrier.
///
/// Grouped by a window over event time (`node->window_close`), a group is dropped from state
/// once the watermark closes its window, so state stays bounded on an endless stream; with
/// EMIT ON WINDOW CLOSE nothing is emitted as rows arrive, and each group's final row is
/// inserted when its window closes. The open windows are indexed in memory by closing time;
/// Start rebuilds the index from the state this instance owns.
class HashAggregateOperator : public StreamOperator {
 public:
  /// `owns_global_group`: for an aggregate without group keys, whether this parallel
  /// instance holds the one group (the instance owning the empty key's virtual node).
  /// `cached_groups`: how many groups stay cached past a barrier. `instance` of
  /// `parallelism`: whose virtual nodes' groups this instance holds (windowed groups only).
  HashAggregateOperator(std::shared_ptr<const planner::AggregateNode> node,
                        storage::StateTable state, bool owns_global_group = true,
                        size_t cached_groups = size_t{1} << 18, size_t instance = 0,
                        size_t parallelism = 1);

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
  struct Group {
    GroupState state;
    bool dirty = false;
    // The last chunk (of chunks_seen_) that touched the group: the first touch in a chunk
    // takes the group's result row before the chunk.
    uint64_t touched_by_chunk = 0;
  };

  /// Finds a group in the cache or the state table; nullptr if it does not exist.
  Group* FindGroup(const std::string& key);
  Group* CreateGroup(const std::string& key);
  std::vector<Value> ResultRow(const std::string& key, const GroupState& state) const;
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
  std::vector<DataType> key_types_;
  /// The group keys of unconstrained numeric type, whose scales GroupState::key_scales keeps.
  std::vector<size_t> scaled_keys_;
  std::vector<DataType> output_types_;
  std::unordered_map<std::string, Group> groups_;
  size_t dirty_groups_ = 0;  // Groups changed in this epoch, for the memory estimate.
  uint64_t chunks_seen_ = 0;
  // Closing time → keys of the groups of windows still open (window_close only).
  std::map<int64_t, std::set<std::string>> open_windows_;
};

}  // namespace stave::executor
