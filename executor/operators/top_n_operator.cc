#include "executor/operators/top_n_operator.h"

#include <algorithm>
#include <map>

#include "common/sql_error.h"
#include "executor/expression_evaluator.h"
#include "executor/window_order.h"
#include "storage/key_codec.h"

namespace stave::executor {

TopNOperator::TopNOperator(std::shared_ptr<const planner::TopNNode> node, storage::StateTable state)
    : node_(std::move(node)), state_(std::move(state)) {
  for (const auto& column : node_->input->output) input_types_.push_back(column.type);
  for (const auto& key : node_->function.order_keys) order_types_.push_back(key.expr->type);
  for (const auto& column : node_->output) output_types_.push_back(column.type);
}

std::string TopNOperator::Encode(const std::vector<Entry>& entries) const {
  std::string bytes;
  std::string order;
  for (const Entry& entry : entries) {
    order.clear();
    storage::EncodeRow(entry.order, order_types_, &order);
    storage::AppendBigEndian32(static_cast<uint32_t>(order.size()), &bytes);
    bytes += order;
    storage::AppendBigEndian32(static_cast<uint32_t>(entry.row.size()), &bytes);
    bytes += entry.row;
    storage::AppendBigEndian64(static_cast<uint64_t>(entry.count), &bytes);
  }
  return bytes;
}

std::vector<TopNOperator::Entry> TopNOperator::Decode(std::string_view bytes) const {
  auto corrupt = [this] {
    return SqlError("XX001", "corrupt top-N state in table " + std::to_string(state_.table_id()));
  };
  std::vector<Entry> entries;
  while (!bytes.empty()) {
    Entry entry;
    for (int part = 0; part < 2; ++part) {
      if (bytes.size() < 4) throw corrupt();
      uint32_t size = storage::ReadBigEndian32(bytes);
      bytes.remove_prefix(4);
      if (bytes.size() < size) throw corrupt();
      if (part == 0) {
        std::optional<std::vector<Value>> order =
            storage::DecodeRow(bytes.substr(0, size), order_types_);
        if (!order) throw corrupt();
        entry.order = std::move(*order);
      } else {
        entry.row = std::string(bytes.substr(0, size));
      }
      bytes.remove_prefix(size);
    }
    if (bytes.size() < 8) throw corrupt();
    entry.count = static_cast<int64_t>(storage::ReadBigEndian64(bytes));
    bytes.remove_prefix(8);
    entries.push_back(std::move(entry));
  }
  return entries;
}

TopNOperator::Partition* TopNOperator::Load(const std::string& key) {
  auto it = partitions_.find(key);
  if (it != partitions_.end()) return &it->second;
  Partition partition;
  if (std::optional<std::string> stored = state_.Get(key).ValueOrThrow()) {
    partition.entries = Decode(*stored);
    cached_bytes_ += stored->size();
  }
  return &partitions_.emplace(key, std::move(partition)).first->second;
}

std::vector<std::pair<std::string, int64_t>> TopNOperator::TopRows(
    const std::vector<Entry>& entries) const {
  std::vector<std::pair<std::string, int64_t>> top;
  const auto& keys = node_->function.order_keys;
  int64_t rows_before = 0;  // Rows ranked so far (row_number, rank).
  int64_t peer_groups = 0;  // Distinct ORDER BY values so far (dense_rank).
  int64_t group_rank = 0;
  const Entry* previous = nullptr;
  for (const Entry& entry : entries) {
    if (entry.count <= 0) continue;
    bool new_group = previous == nullptr || CompareWindowOrder(previous->order, entry.order, keys);
    if (new_group) {
      ++peer_groups;
      group_rank = node_->function.kind == planner::WindowFunctionKind::kDenseRank
                       ? peer_groups
                       : rows_before + 1;
    }
    previous = &entry;
    for (int64_t copy = 0; copy < entry.count; ++copy) {
      ++rows_before;
      int64_t rank = node_->function.kind == planner::WindowFunctionKind::kRowNumber ? rows_before
                                                                                     : group_rank;
      // Ranks only grow along the order: past the limit, nothing further qualifies.
      if (rank > node_->limit) return top;
      top.emplace_back(entry.row, rank);
    }
  }
  return top;
}

void TopNOperator::DropRowsPastLimit(Partition* partition) const {
  std::vector<std::pair<std::string, int64_t>> top = TopRows(partition->entries);
  // The top rows are a prefix of the entries (in order, copies adjacent): keep as many
  // copies of each as they hold, and no entry after them.
  auto& entries = partition->entries;
  size_t next = 0;
  size_t kept = 0;
  for (; kept < entries.size(); ++kept) {
    int64_t copies = 0;
    while (next < top.size() && top[next].first == entries[kept].row) {
      ++copies;
      ++next;
    }
    if (copies == 0) break;
    if (entries[kept].count != copies) {
      entries[kept].count = copies;
      partition->dirty = true;
    }
  }
  if (kept < entries.size()) {
    entries.resize(kept);
    partition->dirty = true;
  }
}

void TopNOperator::Apply(Partition* partition, std::vector<Value> order, std::string row,
                         int sign) {
  const auto& keys = node_->function.order_keys;
  auto& entries = partition->entries;
  auto position = std::lower_bound(entries.begin(), entries.end(), std::pair(&order, &row),
                                   [&](const Entry& entry, const auto& probe) {
                                     int c = CompareWindowOrder(entry.order, *probe.first, keys);
                                     if (c != 0) return c < 0;
                                     return entry.row < *probe.second;
                                   });
  if (position != entries.end() && position->row == row &&
      CompareWindowOrder(position->order, order, keys) == 0) {
    position->count += sign;
    if (position->count == 0) {
      cached_bytes_ -= std::min(cached_bytes_, position->row.size());
      entries.erase(position);
    }
  } else {
    cached_bytes_ += row.size();
    entries.insert(position, Entry{std::move(order), std::move(row), sign});
  }
  partition->dirty = true;
}

void TopNOperator::OnChunk(Chunk chunk) {
  const planner::WindowFunction& function = node_->function;
  std::vector<Column> partition_columns;
  for (const auto& key : function.partition_keys)
    partition_columns.push_back(Evaluate(*key, chunk));
  std::vector<Column> order_columns;
  for (const auto& key : function.order_keys) order_columns.push_back(Evaluate(*key.expr, chunk));

  // The chunk's rows by partition, partitions in the order first touched (deterministic
  // output).
  std::vector<std::string> touched;
  std::unordered_map<std::string, std::vector<size_t>> rows_of;
  std::string key;
  for (size_t row = 0; row < chunk.size(); ++row) {
    key.clear();
    for (size_t k = 0; k < partition_columns.size(); ++k) {
      partition_columns[k].AppendKey(row, &key);
    }
    auto [it, inserted] = rows_of.try_emplace(key);
    if (inserted) touched.push_back(key);
    it->second.push_back(row);
  }

  Chunk out = Chunk::WithTypes(output_types_);
  for (const std::string& partition_key : touched) {
    Partition* partition = Load(partition_key);
    std::vector<std::pair<std::string, int64_t>> before = TopRows(partition->entries);
    for (size_t row : rows_of[partition_key]) {
      std::vector<Value> order;
      for (const Column& column : order_columns) order.push_back(column.GetValue(row));
      std::string encoded;
      storage::EncodeRow(chunk.GetRow(row), input_types_, &encoded);
      Apply(partition, std::move(order), std::move(encoded), RowSign(chunk.ops[row]));
    }
    if (node_->append_only_input) DropRowsPastLimit(partition);
    std::vector<std::pair<std::string, int64_t>> after = TopRows(partition->entries);
    // The difference, as counts of (row, rank): retractions first, then insertions.
    std::map<std::pair<std::string, int64_t>, int64_t> change;
    for (auto& top : before) --change[std::move(top)];
    for (auto& top : after) ++change[std::move(top)];
    for (int pass = 0; pass < 2; ++pass) {
      for (const auto& [top, count] : change) {
        if (pass == 0 ? count >= 0 : count <= 0) continue;
        std::optional<std::vector<Value>> values = storage::DecodeRow(top.first, input_types_);
        if (!values) throw SqlError("XX001", "corrupt row in top-N state");
        values->push_back(Value::Int(top.second));
        for (int64_t i = 0; i < (count > 0 ? count : -count); ++i) {
          out.AppendRow(*values, pass == 0 ? RowOp::kDelete : RowOp::kInsert);
        }
      }
    }
  }
  Emit(std::move(out));
}

void TopNOperator::OnBarrier(storage::EpochBatch* batch) {
  for (auto& [key, partition] : partitions_) {
    if (!partition.dirty) continue;
    if (partition.entries.empty()) {
      state_.Delete(key);
    } else {
      state_.Put(key, Encode(partition.entries));
    }
  }
  // Written into the batch, the partitions are read back from the state when touched again.
  partitions_.clear();
  cached_bytes_ = 0;
  state_.FlushTo(batch);
  StreamOperator::OnBarrier(batch);
}

}  // namespace stave::executor
