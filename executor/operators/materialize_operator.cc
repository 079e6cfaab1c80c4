#include "executor/operators/materialize_operator.h"

#include "common/sql_error.h"
#include "storage/key_codec.h"

namespace stave::executor {
namespace {

// The counter of row numbers of a keyless view's instance.
std::string NextRowIdKey(uint32_t instance) {
  std::string key = "next_row_id";
  storage::AppendBigEndian32(instance, &key);
  return key;
}

}  // namespace

MaterializeOperator::MaterializeOperator(
    uint32_t view_id, uint32_t instance, storage::RowTypes visible_types, bool keyed,
    std::vector<size_t> key_columns, storage::StateTable rows, storage::StateTable counters,
    std::shared_ptr<const std::atomic<bool>> log_changes, std::atomic<uint64_t>* rows_written,
    bool multiset, std::atomic<uint64_t>* bytes_written, bool rows_stored_upstream)
    : view_id_(view_id),
      instance_(instance),
      visible_types_(std::move(visible_types)),
      log_changes_(std::move(log_changes)),
      keyed_(keyed),
      multiset_(multiset && !keyed),
      rows_stored_upstream_(rows_stored_upstream && keyed),
      key_columns_(std::move(key_columns)),
      rows_(std::move(rows)),
      counters_(std::move(counters)),
      rows_written_(rows_written),
      bytes_written_(bytes_written) {
  changelog_types_ = visible_types_;
  changelog_types_.push_back(TypeId::kVarchar);
}

void MaterializeOperator::Start() {
  logging_ = log_changes_ && log_changes_->load(std::memory_order_acquire);
  if (parallelism_ > 0 && instance_ == 0) {
    // Instances past this run's parallelism will publish no more: readers must not wait
    // for them.
    std::vector<std::string> gone;
    counters_
        .ScanCommittedGroup(
            kViewWatermarkGroup,
            [&](std::string_view suffix, std::string_view) {
              if (suffix.size() == 4 && storage::ReadBigEndian32(suffix) >= parallelism_) {
                gone.emplace_back(suffix);
              }
              return true;
            })
        .ThrowIfError();
    for (const std::string& suffix : gone) counters_.DeleteInGroup(kViewWatermarkGroup, suffix);
  }
  if (keyed_ || multiset_) return;
  std::optional<std::string> stored = counters_.Get(NextRowIdKey(instance_)).ValueOrThrow();
  if (stored && stored->size() == 8) next_row_id_ = storage::ReadBigEndian64(*stored);
}

bool MaterializeOperator::NextRowHasKey(const Chunk& chunk, size_t row, std::string_view key,
                                        std::string* scratch) const {
  if (row >= chunk.size() || chunk.ops[row] != RowOp::kUpdateInsert) return false;
  scratch->clear();
  for (size_t column : key_columns_) {
    chunk.columns[column].AppendKey(row, scratch);
  }
  return *scratch == key;
}

void MaterializeOperator::OnChunk(Chunk chunk) {
  if (rows_stored_upstream_ && !logging_) {
    CountRows(chunk);
    return;
  }
  std::string key;
  std::string next_key;
  std::string value;
  // Whether `key` already holds row r's key: the insert of an update pair, whose key
  // NextRowHasKey encoded and found equal to the delete's.
  bool key_known = false;
  for (size_t r = 0; r < chunk.size(); ++r) {
    if (!key_known) key.clear();
    if (multiset_) {
      // The row's encoding, its count, and the copy this change writes or removes.
      for (size_t c = 0; c < visible_types_.size(); ++c) {
        chunk.columns[c].AppendKey(r, &key);
      }
      std::optional<std::string> stored = counters_.Get(key).ValueOrThrow();
      int64_t count = stored && stored->size() == 8
                          ? static_cast<int64_t>(storage::ReadBigEndian64(*stored))
                          : 0;
      int64_t copy = RowSign(chunk.ops[r]) > 0 ? count : count - 1;
      count += RowSign(chunk.ops[r]);
      if (count == 0) {
        counters_.Delete(key);
      } else {
        std::string bytes;
        storage::AppendBigEndian64(static_cast<uint64_t>(count), &bytes);
        counters_.Put(key, std::move(bytes));
      }
      if (copy < 0) continue;  // Cancels a retraction that came first.
      storage::AppendBigEndian64(static_cast<uint64_t>(copy), &key);
    } else if (!keyed_) {
      if (RowSign(chunk.ops[r]) < 0) {
        throw SqlError(sqlstate::kInternalError,
                       "a keyless materialized view received a retraction");
      }
      storage::AppendBigEndian32(instance_, &key);
      storage::AppendBigEndian64(next_row_id_++, &key);
      row_id_dirty_ = true;
    } else if (!key_known) {
      for (size_t column : key_columns_) chunk.columns[column].AppendKey(r, &key);
    }
    key_known = false;
    if (rows_stored_upstream_) {
      // Only logged.
    } else if (RowSign(chunk.ops[r]) > 0) {
      value.clear();
      storage::EncodeRowFrom(ChunkRow{chunk, r}, visible_types_, &value);
      if (!keyed_ && !multiset_) {
        // A new row number, never read back: appended in the instance's virtual node, in
        // order (the key is the instance, then the row number).
        rows_.AppendInGroup(std::string_view(key).substr(0, 4), std::string_view(key).substr(4),
                            value);
      } else {
        rows_.Put(key, value);
      }
    } else if (keyed_ && chunk.ops[r] == RowOp::kUpdateDelete &&
               NextRowHasKey(chunk, r + 1, key, &next_key)) {
      // The delete of an update pair that keeps its key is left out: the insert that
      // follows overwrites the row.
      key_known = true;
    } else {
      rows_.Delete(key);
    }
    if (logging_) {
      std::vector<Value> logged;
      logged.reserve(visible_types_.size() + 1);
      for (size_t c = 0; c < visible_types_.size(); ++c)
        logged.push_back(chunk.columns[c].GetValue(r));
      logged.push_back(Value::String(key));
      logged_bytes_ += key.size() * 2 + value.size() + 16;
      epoch_changes_.push_back({chunk.ops[r], key, std::move(logged)});
    }
  }
  CountRows(chunk);
}

void MaterializeOperator::CountRows(const Chunk& chunk) {
  if (rows_written_) rows_written_->fetch_add(chunk.size(), std::memory_order_relaxed);
  if (bytes_written_) bytes_written_->fetch_add(chunk.EstimatedBytes(), std::memory_order_relaxed);
}

void MaterializeOperator::OnBarrier(storage::EpochBatch* batch) {
  if (row_id_dirty_) {
    std::string bytes;
    storage::AppendBigEndian64(next_row_id_, &bytes);
    counters_.Put(NextRowIdKey(instance_), std::move(bytes));
    row_id_dirty_ = false;
  }
  std::optional<InstanceWatermark> published;
  if (parallelism_ > 0 && watermark_ > published_) {
    published = InstanceWatermark{parallelism_, watermark_};
    std::string instance;
    storage::AppendBigEndian32(instance_, &instance);
    counters_.PutInGroup(kViewWatermarkGroup, instance, published->Encode());
    published_ = watermark_;
  }
  if (!epoch_changes_.empty() || (published && logging_)) {
    batch->PutTableLogRecord(view_id_, ViewLogSequence(batch->epoch(), instance_),
                             EncodeChangeRecord(epoch_changes_, changelog_types_, published));
    epoch_changes_.clear();
    logged_bytes_ = 0;
  }
  logging_ = log_changes_ && log_changes_->load(std::memory_order_acquire);
  rows_.FlushTo(batch);
  counters_.FlushTo(batch);
  StreamOperator::OnBarrier(batch);
}

}  // namespace stave::executor
