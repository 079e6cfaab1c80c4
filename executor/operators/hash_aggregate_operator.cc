#include "executor/operators/hash_aggregate_operator.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "common/sql_error.h"
#include "executor/expression_evaluator.h"
#include "executor/runtime/partitioner.h"
#include "planner/event_time.h"
#include "storage/key_codec.h"
#include "storage/row_codec.h"

namespace stave::executor {
namespace {

// Prefetches a group's aggregate states, every cache line of them: a state is larger than a
// line (AggregateState, 112 bytes), so a group of two aggregates spans four, and the lines
// past the first are as far from cache as it is. `kForWrite`: the states are about to change.
template <bool kForWrite>
void PrefetchStates(const GroupState& state) {
  constexpr uintptr_t kLine = 64;
  auto begin = reinterpret_cast<uintptr_t>(state.aggregates.data()) & ~(kLine - 1);
  auto end = reinterpret_cast<uintptr_t>(state.aggregates.data() + state.aggregates.size());
  for (uintptr_t line = begin; line < end; line += kLine) {
    __builtin_prefetch(reinterpret_cast<const void*>(line), kForWrite ? 1 : 0);
  }
}

// `key` as groups_ looks it up (absl's string_view is a type of its own here).
absl::string_view Lookup(std::string_view key) { return {key.data(), key.size()}; }

// The group keys of unconstrained numeric type, whose scales GroupState::key_scales keeps.
std::vector<size_t> ScaledKeys(const planner::AggregateNode& node) {
  std::vector<size_t> scaled;
  for (size_t k = 0; k < node.group_keys.size(); ++k) {
    DataType type = node.group_keys[k]->type;
    if (type.IsDecimal() && !type.HasTypmod()) scaled.push_back(k);
  }
  return scaled;
}

// A row of a chunk seen through a choice of its columns (EncodeRowFrom's fields).
struct ChosenColumns {
  const Chunk& chunk;
  size_t row;
  const std::vector<size_t>& columns;
  const Column& At(size_t i) const { return chunk.columns[columns[i]]; }
  bool IsNull(size_t i) const { return At(i).IsNull(row); }
  int64_t Int(size_t i) const { return At(i).ints[row]; }
  double Double(size_t i) const { return At(i).doubles[row]; }
  std::string_view String(size_t i) const { return At(i).strings[row]; }
  const Decimal& Numeric(size_t i) const { return At(i).decimals[row]; }
};

// Reads past a row's fields (VisitRowPrefix's visitor).
struct SkipFields {
  void Null(size_t) {}
  void Int(size_t, int64_t) {}
  void Double(size_t, double) {}
  void String(size_t, std::string_view) {}
  void Numeric(size_t, const Decimal&) {}
};

}  // namespace

HashAggregateOperator::HashAggregateOperator(std::shared_ptr<const planner::AggregateNode> node,
                                             storage::StateTable state, bool owns_global_group,
                                             size_t cached_groups, size_t instance,
                                             size_t parallelism, std::optional<ViewRows> view_rows,
                                             GroupStateCodec::Layout state_layout,
                                             bool partial_input)
    : node_(std::move(node)),
      state_(std::move(state)),
      owns_global_group_(owns_global_group),
      cached_groups_(cached_groups),
      instance_(instance),
      parallelism_(parallelism),
      scaled_keys_(ScaledKeys(*node_)),
      codec_(node_->aggregates, scaled_keys_.size(), state_layout),
      view_rows_(std::move(view_rows)),
      partial_input_(partial_input) {
  for (const auto& key : node_->group_keys) key_types_.push_back(key->type);
  for (const auto& column : node_->output) output_types_.push_back(column.type);
  before_rows_ = Chunk::WithTypes(output_types_);
  view_row_ = Chunk::WithTypes(output_types_);
  if (partial_input_) {
    size_t column = node_->group_keys.size() + 1 + node_->aggregates.size();
    for (const planner::AggregateCall& call : node_->aggregates) {
      partial_extras_.push_back(column);
      column += PartialExtraTypes(call).size();
    }
  }
  if (node_->input && !node_->emit_on_window_close) {
    event_time_keys_ = planner::DeriveEventTimeColumns(*node_);
  }
}

bool HashAggregateOperator::ChangesRead() const {
  return !view_rows_ || !view_rows_->changes_read ||
         view_rows_->changes_read->load(std::memory_order_acquire);
}

void HashAggregateOperator::Start() {
  emitting_ = ChangesRead();
  if (node_->window_close) LoadOpenWindows();
  cache_complete_ = !node_->group_keys.empty() && !OwnsStoredGroups();
  if (!node_->group_keys.empty() || !owns_global_group_) return;
  // A global aggregate has one row from the start, as `SELECT count(*)` over no rows does.
  if (FindGroup("") != nullptr) return;
  Group* group = CreateGroup("");
  MarkDirty("", group);
  Chunk out = Chunk::WithTypes(output_types_);
  AppendResultRow("", group->state, &out, RowOp::kInsert);
  Emit(std::move(out));
}

bool HashAggregateOperator::OwnsStoredGroups() const {
  std::shared_ptr<const storage::Snapshot> snapshot = state_.store()->NewSnapshot().ValueOrThrow();
  bool found = false;
  for (uint32_t node = 0; node < storage::kVirtualNodeCount && !found; ++node) {
    if (InstanceOfVirtualNode(static_cast<uint16_t>(node), parallelism_) != instance_) continue;
    std::string prefix;
    storage::AppendBigEndian16(static_cast<uint16_t>(node), &prefix);
    Status status = snapshot->ScanStateTable(state_.table_id(), prefix,
                                             [&](std::string_view, std::string_view) {
                                               found = true;
                                               return false;
                                             });
    if (!status.ok()) throw SqlError(sqlstate::kIoError, status.message());
  }
  return found;
}

HashAggregateOperator::Group* HashAggregateOperator::FindGroup(std::string_view key) {
  auto it = groups_.find(Lookup(key));
  if (it != groups_.end()) return &it->second;
  auto listed = stored_uncached_.end();
  if (cache_complete_) {
    listed = stored_uncached_.find(groups_.hash_function()(Lookup(key)));
    if (listed == stored_uncached_.end()) return nullptr;
  }
  std::optional<std::string> stored = state_.Get(key).ValueOrThrow();
  if (!stored) return nullptr;
  // Cached from now on: no longer among the stored groups the cache lacks.
  if (listed != stored_uncached_.end() && --listed->second == 0) stored_uncached_.erase(listed);
  Group group;
  std::string_view state = *stored;
  SkipFields view_row;
  if ((view_rows_ && !storage::VisitRowPrefix(&state, view_rows_->types, view_row)) ||
      !codec_.Decode(state, &group.state)) {
    throw SqlError("XX001",
                   "corrupt aggregate state in table " + std::to_string(state_.table_id()));
  }
  return &groups_.emplace(std::string(key), std::move(group)).first->second;
}

HashAggregateOperator::Group* HashAggregateOperator::CreateGroup(std::string_view key) {
  Group group;
  group.state.aggregates.assign(node_->aggregates.size(), AggregateState());
  return &groups_.insert_or_assign(std::string(key), std::move(group)).first->second;
}

void HashAggregateOperator::MarkDirty(std::string_view key, Group* group) {
  if (group->dirty) return;
  group->dirty = true;
  changed_keys_.push_back(key);
}

void HashAggregateOperator::AppendResultRow(std::string_view key, const GroupState& state,
                                            Chunk* out, RowOp op) const {
  Value value;
  for (size_t k = 0; k < key_types_.size(); ++k) {
    storage::DecodeKeyValue(&key, key_types_[k], &value);
    out->columns[k].AppendValue(value);
  }
  for (size_t i = 0; i < scaled_keys_.size() && i < state.key_scales.size(); ++i) {
    Column& column = out->columns[scaled_keys_[i]];
    size_t row = column.size() - 1;
    if (column.IsNull(row) || !column.decimals[row].is_finite()) continue;
    // The key as the group's first row wrote it: its trailing zeros back.
    Decimal& written = column.decimals[row];
    if (state.key_scales[i] <= written.scale) continue;
    written = decimal::Rescale(written, state.key_scales[i]);
  }
  for (size_t i = 0; i < node_->aggregates.size(); ++i) {
    out->columns[key_types_.size() + i].AppendValue(
        AggregateResult(node_->aggregates[i], state.aggregates[i]));
  }
  out->ops.push_back(op);
}

std::optional<int64_t> HashAggregateOperator::CloseTime(std::string_view key) const {
  Value bound;
  for (size_t k = 0; k <= node_->window_close->key; ++k) {
    storage::DecodeKeyValue(&key, key_types_[k], &bound);
  }
  if (bound.is_null()) return std::nullopt;
  int64_t close = 0;
  // A window that would close past the end of time never closes.
  if (__builtin_add_overflow(bound.int_value(), node_->window_close->offset, &close)) {
    return std::nullopt;
  }
  return close;
}

void HashAggregateOperator::LoadOpenWindows() {
  std::shared_ptr<const storage::Snapshot> snapshot = state_.store()->NewSnapshot().ValueOrThrow();
  Status status =
      snapshot->ScanStateTable(state_.table_id(), [this](std::string_view key, std::string_view) {
        // Scanned keys start with their virtual node (big-endian).
        auto virtual_node = static_cast<uint16_t>((static_cast<uint8_t>(key[0]) << 8) |
                                                  static_cast<uint8_t>(key[1]));
        key.remove_prefix(2);
        if (InstanceOfVirtualNode(virtual_node, parallelism_) != instance_) return true;
        if (std::optional<int64_t> close = CloseTime(key)) {
          open_windows_[*close].push_back(key);
        }
        return true;
      });
  if (!status.ok()) throw SqlError(sqlstate::kIoError, status.message());
}

void HashAggregateOperator::OnWatermark(int64_t watermark) {
  Chunk out = Chunk::WithTypes(output_types_);
  AppendChangesBelow(watermark, &out);
  while (!open_windows_.empty() && open_windows_.begin()->first <= watermark) {
    // In key order, each once (a group dropped and created again is listed twice).
    const PackedKeys& listed = open_windows_.begin()->second;
    std::vector<std::string_view> keys;
    keys.reserve(listed.size());
    for (size_t i = 0; i < listed.size(); ++i) keys.push_back(listed[i]);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (std::string_view key : keys) {
      Group* group = FindGroup(key);
      if (!group) continue;  // Its rows were retracted.
      // The group's row stays in the output; only its state goes.
      if (group->pending) SettleChange(key, group, &out);
      if (node_->emit_on_window_close && group->state.row_count > 0) {
        AppendResultRow(key, group->state, &out, RowOp::kInsert);
      }
      groups_.erase(Lookup(key));
      state_.Delete(key);
    }
    open_windows_.erase(open_windows_.begin());
  }
  Emit(std::move(out));
  StreamOperator::OnWatermark(watermark);
}

void HashAggregateOperator::OnChunk(Chunk chunk) {
  // The group keys: evaluated over the input rows, or a partial row's first columns.
  std::vector<Column> evaluated;
  std::vector<const Column*> keys;
  std::vector<AggregateInput> inputs;
  if (partial_input_) {
    for (size_t k = 0; k < node_->group_keys.size(); ++k) keys.push_back(&chunk.columns[k]);
  } else {
    evaluated.reserve(node_->group_keys.size());
    for (const auto& key : node_->group_keys) {
      evaluated.push_back(Evaluate(*key, chunk));
      keys.push_back(&evaluated.back());
    }
    for (const auto& call : node_->aggregates) {
      inputs.push_back(EvaluateAggregateInput(call, chunk));
    }
  }

  row_keys_.resize(chunk.size());
  for (size_t row = 0; row < chunk.size(); ++row) {
    std::string& key = row_keys_[row];
    key.clear();
    for (size_t k = 0; k < keys.size(); ++k) {
      keys[k]->AppendKey(row, &key);
    }
  }
  // Groups are read at random. The rows' groups are found first, prefetching the slots of
  // the rows a few places ahead, then their states are updated, prefetching the states of
  // the rows ahead: each cache miss overlaps with others instead of waiting alone.
  constexpr size_t kPrefetchDistance = 8;
  row_groups_.resize(chunk.size());
  row_created_.assign(chunk.size(), 0);
  // Room for a new group per row, so that no insert below moves the slots (a rehash, which
  // may also happen at an unchanged capacity to clear erased slots) while row_groups_
  // points into them.
  groups_.reserve(groups_.size() + chunk.size());
  for (size_t row = 0; row < std::min(kPrefetchDistance, chunk.size()); ++row) {
    groups_.prefetch(row_keys_[row]);
  }
  for (size_t row = 0; row < chunk.size(); ++row) {
    if (row + kPrefetchDistance < chunk.size())
      groups_.prefetch(row_keys_[row + kPrefetchDistance]);
    const std::string& key = row_keys_[row];
    Group* group = FindGroup(key);
    if (group == nullptr) {
      group = CreateGroup(key);
      row_created_[row] = 1;
      for (size_t k : scaled_keys_) {
        group->state.key_scales.push_back(keys[k]->IsNull(row) ? 0 : keys[k]->decimals[row].scale);
      }
      if (node_->window_close) {
        if (std::optional<int64_t> close = CloseTime(key)) open_windows_[*close].push_back(key);
      }
    }
    row_groups_[row] = group;
  }
  for (size_t row = 0; row < chunk.size(); ++row) {
    if (row + kPrefetchDistance < chunk.size()) {
      PrefetchStates<true>(row_groups_[row + kPrefetchDistance]->state);
    }
    const std::string& key = row_keys_[row];
    Group* group = row_groups_[row];
    // With EMIT ON WINDOW CLOSE rows go out as their windows close, not at barriers.
    if (!group->pending && !node_->emit_on_window_close) {
      MarkPending(key, group, row_created_[row] == 0);
    }
    if (partial_input_) {
      MergePartialRow(chunk, row, &group->state);
    } else {
      int sign = RowSign(chunk.ops[row]);
      group->state.row_count += sign;
      for (size_t a = 0; a < node_->aggregates.size(); ++a) {
        Accumulate(node_->aggregates[a], &group->state.aggregates[a], inputs[a], row, sign);
      }
    }
    MarkDirty(key, group);
  }
}

void HashAggregateOperator::MergePartialRow(const Chunk& chunk, size_t row, GroupState* state) {
  // PartialAggregateOperator::OutputColumns: keys, row count, counts, then each call's extras.
  size_t counts = node_->group_keys.size() + 1;
  state->row_count += chunk.columns[counts - 1].ints[row];
  for (size_t a = 0; a < node_->aggregates.size(); ++a) {
    MergePartial(node_->aggregates[a], &state->aggregates[a], chunk.columns[counts + a].ints[row],
                 chunk.columns.data() + partial_extras_[a], row);
  }
}

void HashAggregateOperator::MarkPending(std::string_view key, Group* group, bool existed) {
  group->pending = true;
  group->before_row = kNoRow;
  if (existed && (node_->group_keys.empty() || group->state.row_count > 0)) {
    if (!emitting_) {
      // Nothing will be emitted: neither the row nor when it must go out is needed.
      group->before_row = kRowNotKept;
      return;
    }
    group->before_row = static_cast<uint32_t>(before_rows_.size());
    AppendResultRow(key, group->state, &before_rows_, RowOp::kUpdateDelete);
  }
  if (event_time_keys_.empty() || !emitting_) return;
  // A key value v promises v >= w + delta for the watermarks w it may wait behind.
  std::optional<int64_t> wait;
  std::string_view rest = key;
  Value value;
  for (size_t k = 0; k <= event_time_keys_.rbegin()->first && k < key_types_.size(); ++k) {
    storage::DecodeKeyValue(&rest, key_types_[k], &value);
    auto delta = event_time_keys_.find(k);
    if (delta == event_time_keys_.end() || value.is_null()) continue;
    int64_t bound = 0;
    if (__builtin_sub_overflow(value.int_value(), delta->second, &bound)) continue;
    wait = wait ? std::min(*wait, bound) : bound;
  }
  if (wait) pending_by_time_[*wait].push_back(key);
}

size_t HashAggregateOperator::AppendChange(std::string_view key, Group* group, Chunk* out) {
  bool now = node_->group_keys.empty() || group->state.row_count > 0;
  size_t row_now = kNoRow;
  if (group->before_row != kNoRow) {
    size_t at = out->size();
    out->AppendRange(before_rows_, group->before_row, group->before_row + 1);
    if (now) {
      out->ops[at] = RowOp::kUpdateDelete;
      AppendResultRow(key, group->state, out, RowOp::kUpdateInsert);
      row_now = at + 1;
      if (out->SameValues(at, at + 1)) {
        out->Truncate(at);  // Changed back: no change.
        row_now = kNoRow;
      }
    } else {
      out->ops[at] = RowOp::kDelete;
    }
  } else if (now) {
    row_now = out->size();
    AppendResultRow(key, group->state, out, RowOp::kInsert);
  }
  group->pending = false;
  group->before_row = kNoRow;
  return row_now;
}

size_t HashAggregateOperator::SettleChange(std::string_view key, Group* group, Chunk* out) {
  if (emitting_) return AppendChange(key, group, out);
  CountChange(key, group);
  return kNoRow;
}

void HashAggregateOperator::CountChange(std::string_view key, Group* group) {
  bool now = node_->group_keys.empty() || group->state.row_count > 0;
  uint64_t rows = (group->before_row != kNoRow ? 1 : 0) + (now ? 1 : 0);
  counted_rows_ += rows;
  // As Chunk::EstimatedBytes would count the rows: their kind, the key's columns (about the
  // encoded key's size) and 8 bytes per aggregate.
  counted_bytes_ += rows * (1 + key.size() + 8 * node_->aggregates.size());
  group->pending = false;
  group->before_row = kNoRow;
}

void HashAggregateOperator::EncodeStored(std::string_view key, const Group& group, const Chunk& out,
                                         size_t row, std::string* value) {
  if (view_rows_) {
    const Chunk* rows = &out;
    if (row == kNoRow) {
      view_row_.Truncate(0);
      AppendResultRow(key, group.state, &view_row_, RowOp::kInsert);
      rows = &view_row_;
      row = 0;
    }
    storage::EncodeRowFrom(ChosenColumns{*rows, row, view_rows_->columns}, view_rows_->types,
                           value);
  }
  codec_.Encode(group.state, value);
}

void HashAggregateOperator::AppendChangesBelow(int64_t watermark, Chunk* out) {
  while (!pending_by_time_.empty() && pending_by_time_.begin()->first < watermark) {
    const PackedKeys& keys = pending_by_time_.begin()->second;
    for (size_t i = 0; i < keys.size(); ++i) {
      auto it = groups_.find(Lookup(keys[i]));
      if (it != groups_.end() && it->second.pending) AppendChange(it->first, &it->second, out);
    }
    pending_by_time_.erase(pending_by_time_.begin());
  }
}

size_t HashAggregateOperator::BufferedBytes() const {
  // Each changed group is written to the epoch's batch at the barrier; estimate its size.
  constexpr size_t kBytesPerGroup = 64;
  constexpr size_t kBytesPerValue = 48;
  return state_.buffered_bytes() +
         changed_keys_.size() * (kBytesPerGroup + 40 * node_->aggregates.size() +
                                 kBytesPerValue * output_types_.size());
}

void HashAggregateOperator::OnBarrier(storage::EpochBatch* batch) {
  // The epoch's changes go out in the order the groups first changed, so the output is
  // deterministic; each changed group's state goes into the batch.
  // The changed groups are found first, prefetching their slots ahead, then their changes
  // and states are written, prefetching ahead in two steps: a group's slot (long evicted
  // when a million groups changed), then, once that is in cache, its aggregates' states.
  constexpr size_t kPrefetchDistance = 8;
  changed_groups_.resize(changed_keys_.size());
  for (size_t i = 0; i < std::min(kPrefetchDistance, changed_keys_.size()); ++i) {
    groups_.prefetch(Lookup(changed_keys_[i]));
  }
  for (size_t i = 0; i < changed_keys_.size(); ++i) {
    if (i + kPrefetchDistance < changed_keys_.size()) {
      groups_.prefetch(Lookup(changed_keys_[i + kPrefetchDistance]));
    }
    auto it = groups_.find(Lookup(changed_keys_[i]));
    // Dropped since, or listed again (dropped, then created anew): written once.
    bool write = it != groups_.end() && it->second.dirty;
    changed_groups_[i] = write ? &it->second : nullptr;
    if (write) it->second.dirty = false;
  }
  Chunk out = Chunk::WithTypes(output_types_);
  for (size_t i = 0; i < changed_keys_.size(); ++i) {
    if (i + 2 * kPrefetchDistance < changed_keys_.size() &&
        changed_groups_[i + 2 * kPrefetchDistance]) {
      const Group* ahead = changed_groups_[i + 2 * kPrefetchDistance];
      __builtin_prefetch(ahead);
      __builtin_prefetch(&ahead->state.key_scales);  // The slot may span two cache lines.
    }
    if (i + kPrefetchDistance < changed_keys_.size() && changed_groups_[i + kPrefetchDistance]) {
      PrefetchStates<false>(changed_groups_[i + kPrefetchDistance]->state);
    }
    Group* group = changed_groups_[i];
    if (group == nullptr) continue;
    std::string_view key = changed_keys_[i];
    size_t row_now = group->pending ? SettleChange(key, group, &out) : kNoRow;
    if (node_->group_keys.empty() || group->state.row_count > 0) {
      encoded_state_.clear();
      EncodeStored(key, *group, out, row_now, &encoded_state_);
      // Once per group: each changed group is written here, last in its epoch.
      state_.WriteOnce(key, encoded_state_);
    } else {
      // Erasing leaves the other slots where they are: the pointers ahead stay good.
      state_.WriteOnce(key, std::nullopt);
      groups_.erase(Lookup(key));
    }
    if (out.size() >= kChunkRows) {
      Emit(std::move(out));
      out = Chunk::WithTypes(output_types_);
    }
  }
  Emit(std::move(out));
  changed_keys_.clear();
  changed_groups_.clear();
  pending_by_time_.clear();
  before_rows_.Truncate(0);
  if (view_rows_ && counted_rows_ > 0) {
    if (view_rows_->rows_written) {
      view_rows_->rows_written->fetch_add(counted_rows_, std::memory_order_relaxed);
    }
    if (view_rows_->bytes_written) {
      view_rows_->bytes_written->fetch_add(counted_bytes_, std::memory_order_relaxed);
    }
    counted_rows_ = 0;
    counted_bytes_ = 0;
  }
  // As the view's materialization reads it, after it logged this epoch's changes.
  emitting_ = ChangesRead();
  state_.FlushTo(batch);
  if (groups_.size() > cached_groups_) {
    // Trim, not clear: every group kept spares a read from RocksDB when it is touched
    // again. After the barrier all groups are clean, so any may go.
    for (auto it = groups_.begin(); groups_.size() > cached_groups_ * 3 / 4;) {
      if (cache_complete_) ++stored_uncached_[groups_.hash_function()(it->first)];
      groups_.erase(it++);
    }
    if (stored_uncached_.size() > cached_groups_) {
      cache_complete_ = false;  // Too many to list: a group the cache lacks is read.
      absl::flat_hash_map<uint64_t, uint32_t>().swap(stored_uncached_);
    }
  }
  StreamOperator::OnBarrier(batch);
}

}  // namespace stave::executor
