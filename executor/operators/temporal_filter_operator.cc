#include "executor/operators/temporal_filter_operator.h"

#include "common/sql_error.h"
#include "executor/expression_evaluator.h"
#include "executor/runtime/partitioner.h"
#include "storage/key_codec.h"

namespace stave::executor {
namespace {

// The state key of the current time: no row's key is empty (a row has at least one column).
constexpr std::string_view kNowKey = "";

}  // namespace

TemporalFilterOperator::TemporalFilterOperator(
    std::shared_ptr<const planner::TemporalFilterNode> node, storage::StateTable state,
    size_t instance, size_t parallelism)
    : node_(std::move(node)),
      state_(std::move(state)),
      instance_(instance),
      parallelism_(parallelism) {
  for (const auto& column : node_->output) types_.push_back(column.type);
}

std::optional<TemporalFilterOperator::Held> TemporalFilterOperator::Load(
    const std::string& key) const {
  std::optional<std::string> stored = state_.Get(key).ValueOrThrow();
  if (!stored) return std::nullopt;
  if (stored->size() != 16) throw SqlError("XX001", "corrupt temporal filter state");
  return Held{static_cast<int64_t>(storage::ReadBigEndian64(*stored)),
              static_cast<int64_t>(storage::ReadBigEndian64(std::string_view(*stored).substr(8)))};
}

void TemporalFilterOperator::Store(const std::string& key, const Held& held) {
  if (held.count == 0) {
    state_.Delete(key);
    return;
  }
  std::string value;
  storage::AppendBigEndian64(static_cast<uint64_t>(held.expiry), &value);
  storage::AppendBigEndian64(static_cast<uint64_t>(held.count), &value);
  state_.Put(key, std::move(value));
}

std::vector<Value> TemporalFilterOperator::DecodeKeyRow(std::string_view key) const {
  std::vector<Value> row(types_.size());
  for (size_t c = 0; c < types_.size(); ++c) storage::DecodeKeyValue(&key, types_[c], &row[c]);
  return row;
}

void TemporalFilterOperator::Start() {
  // The time of the last committed epoch (every instance wrote the same).
  std::optional<std::string> now = state_.Get(kNowKey).ValueOrThrow();
  if (now && now->size() == 8) now_ = static_cast<int64_t>(storage::ReadBigEndian64(*now));
  std::shared_ptr<const storage::Snapshot> snapshot = state_.store()->NewSnapshot().ValueOrThrow();
  Status status = snapshot->ScanStateTable(state_.table_id(), [&](std::string_view key,
                                                                  std::string_view value) {
    // Scanned keys start with their virtual node (big-endian).
    auto virtual_node =
        static_cast<uint16_t>((static_cast<uint8_t>(key[0]) << 8) | static_cast<uint8_t>(key[1]));
    key.remove_prefix(2);
    if (key.empty() || value.size() != 16) return true;  // The time.
    if (InstanceOfVirtualNode(virtual_node, parallelism_) != instance_) return true;
    expiry_index_[static_cast<int64_t>(storage::ReadBigEndian64(value))].emplace(key);
    return true;
  });
  if (!status.ok()) throw SqlError(sqlstate::kIoError, status.message());
}

size_t TemporalFilterOperator::held_rows() const {
  size_t rows = 0;
  for (const auto& [expiry, keys] : expiry_index_) rows += keys.size();
  return rows;
}

void TemporalFilterOperator::OnChunk(Chunk chunk) {
  Column times = Evaluate(*node_->time, chunk);
  Chunk out = Chunk::WithTypes(types_);
  std::string key;
  for (size_t r = 0; r < chunk.size(); ++r) {
    if (times.IsNull(r)) continue;  // NULL > anything is not true.
    int64_t expiry = 0;
    if (__builtin_add_overflow(times.GetValue(r).int_value(), node_->offset, &expiry)) {
      expiry = node_->offset > 0 ? INT64_MAX : INT64_MIN;
    }
    if (node_->inclusive && expiry != INT64_MAX) ++expiry;  // now() <= t: in until t + 1.
    if (expiry <= now_) continue;  // Already out (a retraction of it was sent, or is moot).
    std::vector<Value> row = chunk.GetRow(r);
    key.clear();
    for (size_t c = 0; c < types_.size(); ++c) storage::EncodeKeyValue(row[c], types_[c], &key);
    Held held = Load(key).value_or(Held{expiry, 0});
    bool indexed = held.count != 0;
    int sign = RowSign(chunk.ops[r]);
    held.count += sign;
    Store(key, held);
    if (!indexed && held.count != 0) expiry_index_[expiry].insert(key);
    // The halves of an update may part here (one in, one out): plain changes.
    out.AppendRow(row, sign > 0 ? RowOp::kInsert : RowOp::kDelete);
  }
  Emit(std::move(out));
}

void TemporalFilterOperator::RetractExpired() {
  Chunk out = Chunk::WithTypes(types_);
  while (!expiry_index_.empty() && expiry_index_.begin()->first <= now_) {
    for (const std::string& key : expiry_index_.begin()->second) {
      std::optional<Held> held = Load(key);
      if (!held) continue;  // Its rows were deleted.
      std::vector<Value> row = DecodeKeyRow(key);
      RowOp op = held->count > 0 ? RowOp::kDelete : RowOp::kInsert;
      for (int64_t i = 0; i < (held->count > 0 ? held->count : -held->count); ++i) {
        out.AppendRow(row, op);
      }
      state_.Delete(key);
    }
    expiry_index_.erase(expiry_index_.begin());
  }
  Emit(std::move(out));
}

void TemporalFilterOperator::OnBarrier(storage::EpochBatch* batch) {
  if (batch->time() > now_) {
    now_ = batch->time();
    RetractExpired();
    std::string value;
    storage::AppendBigEndian64(static_cast<uint64_t>(now_), &value);
    state_.Put(kNowKey, std::move(value));
  }
  state_.FlushTo(batch);
  StreamOperator::OnBarrier(batch);
}

}  // namespace stave::executor
