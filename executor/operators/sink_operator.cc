#include "executor/operators/sink_operator.h"

#include "executor/change_record.h"
#include "storage/key_codec.h"

namespace stave::executor {

SinkOperator::SinkOperator(std::shared_ptr<SinkWriter> writer, storage::RowTypes types,
                           std::vector<size_t> key_columns, std::atomic<uint64_t>* rows_written,
                           std::atomic<uint64_t>* bytes_written)
    : writer_(std::move(writer)),
      types_(std::move(types)),
      key_columns_(std::move(key_columns)),
      rows_written_(rows_written),
      bytes_written_(bytes_written) {}

void SinkOperator::OnChunk(Chunk chunk) {
  if (writer_->discards()) {
    // A target that keeps nothing needs no rows: gathering them would cost more than the
    // query that feeds it, and a benchmark ending in a blackhole would measure that.
    discarded_rows_ += chunk.size();
    discarded_bytes_ += chunk.EstimatedBytes();
    return;
  }
  for (size_t row = 0; row < chunk.size(); ++row) {
    SinkChange change{RowSign(chunk.ops[row]) < 0, {}};
    change.row.reserve(types_.size());
    size_t bytes = sizeof(SinkChange) + types_.size() * sizeof(Value);
    for (size_t column = 0; column < types_.size(); ++column) {
      change.row.push_back(chunk.columns[column].GetValue(row));
      if (types_[column].physical() == PhysicalType::kString && !change.row.back().is_null()) {
        bytes += change.row.back().string_value().size();
      }
    }
    if (key_columns_.empty()) {
      appended_.push_back(std::move(change));
      buffered_bytes_ += bytes;
      continue;
    }
    std::string key;
    for (size_t column : key_columns_) {
      storage::EncodeKeyValue(change.row[column], types_[column], &key);
    }
    auto [it, inserted] = last_by_key_.try_emplace(std::move(key));
    if (inserted) buffered_bytes_ += bytes + it->first.size();
    it->second = std::move(change);  // The last change of a key is what the target gets.
  }
}

std::vector<SinkChange> SinkOperator::TakeChanges() {
  std::vector<SinkChange> changes = std::move(appended_);
  appended_.clear();
  changes.reserve(changes.size() + last_by_key_.size());
  for (auto& [key, change] : last_by_key_) changes.push_back(std::move(change));
  last_by_key_.clear();
  buffered_bytes_ = 0;
  return changes;
}

void SinkOperator::OnBarrier(storage::EpochBatch* batch) {
  barrier_epoch_ = batch->epoch();
  barrier_bytes_ = buffered_bytes_;
  auto changes = std::make_shared<const std::vector<SinkChange>>(TakeChanges());
  barrier_changes_ = changes;
  if (changes->empty() || !writer_->two_phase()) return;  // Empty epochs prepare nothing.
  {
    std::lock_guard lock(mutex_);
    prepare_answered_ = false;
    prepared_id_.reset();
  }
  writer_->RequestPrepare(barrier_epoch_, changes, [this](std::optional<std::string> id) {
    {
      std::lock_guard lock(mutex_);
      prepare_answered_ = true;
      prepared_id_ = std::move(id);
    }
    if (wake_) wake_();
  });
}

bool SinkOperator::BarrierPending() const {
  std::lock_guard lock(mutex_);
  return !prepare_answered_;
}

void SinkOperator::FinishBarrier(storage::EpochBatch* batch) {
  std::optional<std::string> prepared;
  {
    std::lock_guard lock(mutex_);
    prepared = std::move(prepared_id_);
    prepared_id_.reset();
  }
  const std::vector<SinkChange>& changes = *barrier_changes_;
  if (!changes.empty() && !prepared && !writer_->discards()) {
    // Owed: the checkpoint keeps the changes until the target has them.
    uint32_t index = 0;
    for (size_t first = 0; first < changes.size(); first += SinkWriter::kChangesPerRecord) {
      size_t count = std::min(changes.size() - first, SinkWriter::kChangesPerRecord);
      batch->PutTableLogRecord(
          writer_->log_id(), ViewLogSequence(barrier_epoch_, index++),
          SinkWriter::EncodeOwed(std::span(changes).subspan(first, count), types_));
    }
    writer_->NoteOwed(barrier_epoch_, barrier_changes_, barrier_bytes_);
  }
  if (rows_written_) {
    rows_written_->fetch_add(changes.size() + discarded_rows_, std::memory_order_relaxed);
  }
  if (bytes_written_ && discarded_rows_ > 0) {
    bytes_written_->fetch_add(discarded_bytes_, std::memory_order_relaxed);
  }
  discarded_rows_ = 0;
  discarded_bytes_ = 0;
  if (bytes_written_) {
    // Estimated as Chunk::EstimatedBytes does: 8 bytes a fixed-size value, a string's length,
    // one byte per change for its kind.
    size_t bytes = 0;
    for (const SinkChange& change : changes) {
      bytes += 1;
      for (size_t column = 0; column < change.row.size(); ++column) {
        const Value& value = change.row[column];
        if (value.is_null()) continue;
        bool text = types_[column].physical() == PhysicalType::kString;
        bytes += text ? value.string_value().size() : 8;
      }
    }
    bytes_written_->fetch_add(bytes, std::memory_order_relaxed);
  }
  barrier_changes_.reset();
  // Owed epochs the target has finished leave the checkpoint.
  uint64_t finished = writer_->finished_epoch();
  if (finished + 1 > deleted_below_) {
    batch->DeleteTableLogBelow(writer_->log_id(), ViewLogSequence(finished + 1, 0));
    deleted_below_ = finished + 1;
  }
  SinkRecord record = writer_->record();
  if (!record_written_ || !(record == written_record_)) {
    batch->PutSourcePosition(writer_->log_id(), SinkRecord::kPositionName, record.Encode());
    written_record_ = record;
    record_written_ = true;
  }
}

}  // namespace stave::executor
