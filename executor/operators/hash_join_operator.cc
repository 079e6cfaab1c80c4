#include "executor/operators/hash_join_operator.h"

#include <algorithm>

#include "common/sql_error.h"
#include "executor/expression_evaluator.h"
#include "executor/runtime/partitioner.h"
#include "storage/key_codec.h"

namespace stave::executor {

HashJoinOperator::HashJoinOperator(std::shared_ptr<const planner::JoinNode> node,
                                   storage::StateTable left_state, storage::StateTable right_state,
                                   size_t instance, size_t parallelism)
    : node_(std::move(node)),
      states_{std::move(left_state), std::move(right_state)},
      instance_(instance),
      parallelism_(parallelism) {
  for (const auto& column : node_->input->output) types_[0].push_back(column.type);
  for (const auto& column : node_->right->output) types_[1].push_back(column.type);
  for (const auto& column : node_->output) output_types_.push_back(column.type);
  joined_types_ = types_[0];
  joined_types_.insert(joined_types_.end(), types_[1].begin(), types_[1].end());
  null_rows_[0].resize(types_[0].size());
  null_rows_[1].resize(types_[1].size());
  output_ = Chunk::WithTypes(output_types_);
}

std::string HashJoinOperator::EncodeEntries(const std::vector<Entry>& entries) {
  std::string bytes;
  for (const Entry& entry : entries) {
    storage::AppendBigEndian32(static_cast<uint32_t>(entry.row.size()), &bytes);
    bytes += entry.row;
    storage::AppendBigEndian64(static_cast<uint64_t>(entry.count), &bytes);
    storage::AppendBigEndian64(static_cast<uint64_t>(entry.matches), &bytes);
  }
  return bytes;
}

std::vector<HashJoinOperator::Entry> HashJoinOperator::DecodeEntries(std::string_view bytes) {
  std::vector<Entry> entries;
  while (!bytes.empty()) {
    if (bytes.size() < 4) throw SqlError("XX001", "corrupt join state");
    uint32_t size = storage::ReadBigEndian32(bytes);
    bytes.remove_prefix(4);
    if (bytes.size() < size + 16u) throw SqlError("XX001", "corrupt join state");
    Entry entry;
    entry.row = std::string(bytes.substr(0, size));
    bytes.remove_prefix(size);
    entry.count = static_cast<int64_t>(storage::ReadBigEndian64(bytes));
    entry.matches = static_cast<int64_t>(storage::ReadBigEndian64(bytes.substr(8)));
    bytes.remove_prefix(16);
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::vector<HashJoinOperator::Entry> HashJoinOperator::Load(size_t side, const std::string& key) {
  std::optional<std::string> stored = states_[side].Get(key).ValueOrThrow();
  if (!stored) return {};
  return DecodeEntries(*stored);
}

void HashJoinOperator::Store(size_t side, const std::string& key,
                             const std::vector<Entry>& entries) {
  if (entries.empty()) {
    states_[side].Delete(key);
  } else {
    states_[side].Put(key, EncodeEntries(entries));
  }
}

void HashJoinOperator::EmitRow(const std::vector<Value>& left, const std::vector<Value>& right,
                               int64_t times) {
  RowOp op = times > 0 ? RowOp::kInsert : RowOp::kDelete;
  for (int64_t i = 0; i < (times > 0 ? times : -times); ++i) {
    size_t c = 0;
    for (const Value& value : left) output_.columns[c++].AppendValue(value);
    if (!node_->FiltersLeft()) {
      for (const Value& value : right) output_.columns[c++].AppendValue(value);
    }
    output_.ops.push_back(op);
  }
}

void HashJoinOperator::EmitFilteredLeft(const std::vector<Value>& left, int64_t before_matches,
                                        int64_t after_matches, int64_t times) {
  // A semi join shows a left row while it has a match, an anti join while it has none.
  bool semi = node_->join_type == planner::JoinType::kSemi;
  bool shown_before = (before_matches > 0) == semi;
  bool shown_after = (after_matches > 0) == semi;
  if (shown_before && !shown_after) EmitRow(left, {}, -times);
  if (!shown_before && shown_after) EmitRow(left, {}, times);
}

void HashJoinOperator::OnInputChunk(size_t side, Chunk chunk) {
  const auto& keys = side == 0 ? node_->left_keys : node_->right_keys;
  std::vector<Column> key_columns;
  for (const auto& key : keys) key_columns.push_back(Evaluate(*key, chunk));
  std::string key;
  for (size_t r = 0; r < chunk.size(); ++r) {
    key.clear();
    bool null_key = false;
    for (size_t k = 0; k < keys.size(); ++k) {
      if (key_columns[k].IsNull(r)) null_key = true;
      storage::EncodeKeyValue(key_columns[k].GetValue(r), keys[k]->type, &key);
    }
    ApplyRow(side, chunk.GetRow(r), RowSign(chunk.ops[r]), key, null_key);
  }
  if (!output_.empty()) {
    Chunk out = std::move(output_);
    output_ = Chunk::WithTypes(output_types_);
    Emit(std::move(out));
  }
}

void HashJoinOperator::ApplyRow(size_t side, const std::vector<Value>& row, int sign,
                                const std::string& key, bool null_key) {
  size_t other = 1 - side;
  bool pads_self = side == 0 ? node_->PadsLeft() : node_->PadsRight();
  bool pads_other = side == 0 ? node_->PadsRight() : node_->PadsLeft();
  // A semi or anti join keeps the left rows' match counts as a left join does, but emits
  // only the left rows, by whether they have a match (EmitFilteredLeft).
  bool filters_self = side == 0 && node_->FiltersLeft();
  bool filters_other = side == 1 && node_->FiltersLeft();
  auto emit = [&](const std::vector<Value>& mine, const std::vector<Value>& theirs, int64_t times) {
    if (side == 0) {
      EmitRow(mine, theirs, times);
    } else {
      EmitRow(theirs, mine, times);
    }
  };
  // Rows of a side cleaned by watermark: when this one expires (it is stored only until).
  std::optional<int64_t> expiry;
  bool cleaned = !node_->expiry[side].empty();
  if (cleaned && !null_key) {
    expiry = RowExpiry(side, row);
    null_key = !expiry;  // A NULL time meets nothing either.
  }
  if (null_key) {
    // NULL equals nothing: the row never matches and is not kept.
    if (pads_self) emit(row, null_rows_[other], sign);
    if (filters_self && node_->join_type == planner::JoinType::kAnti) EmitRow(row, {}, sign);
    return;
  }
  std::vector<Entry> others = Load(other, key);
  // The other side's rows under this key that meet the residual condition too.
  std::vector<std::vector<Value>> other_rows;
  std::vector<uint8_t> matching(others.size(), 1);
  for (const Entry& entry : others) {
    std::optional<std::vector<Value>> decoded = storage::DecodeRow(entry.row, types_[other]);
    if (!decoded) throw SqlError("XX001", "corrupt join state");
    other_rows.push_back(std::move(*decoded));
  }
  if (node_->residual && !others.empty()) {
    Chunk candidates = Chunk::WithTypes(joined_types_);
    std::vector<Value> joined;
    for (const auto& other_row : other_rows) {
      joined.clear();
      const auto& left = side == 0 ? row : other_row;
      const auto& right = side == 0 ? other_row : row;
      joined.insert(joined.end(), left.begin(), left.end());
      joined.insert(joined.end(), right.begin(), right.end());
      candidates.AppendRow(joined, RowOp::kInsert);
    }
    matching = EvaluatePredicate(*node_->residual, candidates);
  }
  int64_t matches = 0;
  bool others_changed = false;
  for (size_t i = 0; i < others.size(); ++i) {
    if (!matching[i]) continue;
    Entry& entry = others[i];
    matches += entry.count;
    if (filters_other) {
      int64_t before = entry.matches;
      entry.matches += sign;
      others_changed = true;
      EmitFilteredLeft(other_rows[i], before, entry.matches, entry.count);
      continue;
    }
    if (pads_other) {
      // The other row's padded form exists exactly while it has no match.
      int64_t before = entry.matches;
      entry.matches += sign;
      others_changed = true;
      if (before == 0 && entry.matches > 0) emit(null_rows_[side], other_rows[i], -entry.count);
      if (before > 0 && entry.matches == 0) emit(null_rows_[side], other_rows[i], entry.count);
    }
    if (filters_self) continue;
    emit(row, other_rows[i], sign * entry.count);
  }
  if (others_changed) Store(other, key, others);

  if (cleaned && *expiry <= watermarks_[other]) {
    // Expired on arrival: it met what the other side still holds, and nothing to come.
    if (pads_self && matches == 0) emit(row, null_rows_[other], sign);
    return;
  }
  if (cleaned) expiry_index_[side][*expiry].insert(key);
  std::vector<Entry> mine = Load(side, key);
  std::string encoded;
  storage::EncodeRow(row, types_[side], &encoded);
  auto it = std::find_if(mine.begin(), mine.end(),
                         [&](const Entry& entry) { return entry.row == encoded; });
  if (it == mine.end()) {
    mine.push_back(Entry{std::move(encoded), 0, matches});
    it = mine.end() - 1;
  }
  it->count += sign;
  it->matches = matches;
  if (it->count == 0) mine.erase(it);
  Store(side, key, mine);
  if (pads_self && matches == 0) emit(row, null_rows_[other], sign);
  // An arriving (leaving) left row is shown (retracted) if its matches say it is shown.
  if (filters_self && (matches > 0) == (node_->join_type == planner::JoinType::kSemi)) {
    EmitRow(row, {}, sign);
  }
}

void HashJoinOperator::OnBarrier(storage::EpochBatch* batch) {
  states_[0].FlushTo(batch);
  states_[1].FlushTo(batch);
  StreamOperator::OnBarrier(batch);
}

// State cleaning by watermark.

void HashJoinOperator::Start() {
  for (size_t side = 0; side < 2; ++side) {
    if (!node_->expiry[side].empty()) LoadExpiryIndex(side);
  }
}

size_t HashJoinOperator::indexed_expiries(size_t side) const {
  size_t keys = 0;
  for (const auto& [expiry, indexed] : expiry_index_[side]) keys += indexed.size();
  return keys;
}

std::optional<int64_t> HashJoinOperator::RowExpiry(size_t side,
                                                   const std::vector<Value>& row) const {
  int64_t earliest = INT64_MAX;
  for (const planner::JoinNode::Expiry& term : node_->expiry[side]) {
    const Value& time = row[term.column];
    if (time.is_null()) return std::nullopt;
    int64_t expiry = 0;
    if (__builtin_add_overflow(time.int_value(), term.offset, &expiry)) {
      // Past either end of time: never, or at once.
      expiry = term.offset > 0 ? INT64_MAX : INT64_MIN;
    }
    earliest = std::min(earliest, expiry);
  }
  return earliest;
}

void HashJoinOperator::LoadExpiryIndex(size_t side) {
  std::shared_ptr<const storage::Snapshot> snapshot = states_[side].store()->NewSnapshot();
  Status status = snapshot->ScanStateTable(states_[side].table_id(), [&](std::string_view key,
                                                                         std::string_view value) {
    // Scanned keys start with their virtual node (big-endian).
    auto virtual_node =
        static_cast<uint16_t>((static_cast<uint8_t>(key[0]) << 8) | static_cast<uint8_t>(key[1]));
    key.remove_prefix(2);
    if (InstanceOfVirtualNode(virtual_node, parallelism_) != instance_) return true;
    for (const Entry& entry : DecodeEntries(value)) {
      std::optional<std::vector<Value>> row = storage::DecodeRow(entry.row, types_[side]);
      if (!row) throw SqlError("XX001", "corrupt join state");
      if (std::optional<int64_t> expiry = RowExpiry(side, *row)) {
        expiry_index_[side][*expiry].emplace(key);
      }
    }
    return true;
  });
  if (!status.ok()) throw SqlError(sqlstate::kIoError, status.message());
}

void HashJoinOperator::OnInputWatermark(size_t side, int64_t watermark) {
  if (side > 1 || watermark <= watermarks_[side]) return;
  watermarks_[side] = watermark;
  // The other side's rows are the ones this side's rows to come can no longer meet.
  if (!node_->expiry[1 - side].empty()) ExpireRows(1 - side, watermark);
}

void HashJoinOperator::ExpireRows(size_t side, int64_t watermark) {
  std::map<int64_t, std::set<std::string>>& index = expiry_index_[side];
  while (!index.empty() && index.begin()->first <= watermark) {
    for (const std::string& key : index.begin()->second) {
      std::vector<Entry> entries = Load(side, key);
      size_t before = entries.size();
      std::erase_if(entries, [&](const Entry& entry) {
        std::optional<std::vector<Value>> row = storage::DecodeRow(entry.row, types_[side]);
        if (!row) throw SqlError("XX001", "corrupt join state");
        std::optional<int64_t> expiry = RowExpiry(side, *row);
        return !expiry || *expiry <= watermark;
      });
      // A key indexed under several expiries may have lost its rows already.
      if (entries.size() != before) Store(side, key, entries);
    }
    index.erase(index.begin());
  }
}

}  // namespace stave::executor
