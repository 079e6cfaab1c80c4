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
  if (chunk.empty()) return;
  chunk.columns.resize(types_.size());  // The sink's columns come first.
  // The halves of an update are a delete and an insert to the target.
  for (RowOp& op : chunk.ops) op = RowSign(op) < 0 ? RowOp::kDelete : RowOp::kInsert;
  buffered_bytes_ += chunk.MemoryBytes();
  Gather(std::move(chunk));
  if (buffered_bytes_ >= kMaxEpochBytes) epoch_full_.store(true, std::memory_order_release);
}

namespace {

// Appends the rows of `rows` to `parts`, filling the last part up to kChangesPerRecord rows
// before it starts another: each part becomes one record of the checkpoint, and one batch for
// the target.
void Pack(Chunk rows, const storage::RowTypes& types, SinkEpochChanges* parts) {
  for (size_t begin = 0; begin < rows.size();) {
    if (parts->empty() || parts->back().size() == SinkWriter::kChangesPerRecord) {
      if (begin == 0 && rows.size() == SinkWriter::kChangesPerRecord) {
        parts->push_back(std::move(rows));  // A full part already: moved, not copied.
        return;
      }
      parts->push_back(Chunk::WithTypes(types));
      for (Column& column : parts->back().columns) column.Reserve(SinkWriter::kChangesPerRecord);
      parts->back().ops.reserve(SinkWriter::kChangesPerRecord);
    }
    Chunk& part = parts->back();
    size_t end = std::min(rows.size(), begin + SinkWriter::kChangesPerRecord - part.size());
    part.AppendRange(rows, begin, end);
    begin = end;
  }
}

}  // namespace

void SinkOperator::Gather(Chunk chunk) {
  // Where the chunk's rows land: at the end of the last part, or in a new one.
  size_t first_part = parts_.size();
  size_t first_row = 0;
  if (!parts_.empty() && parts_.back().size() < SinkWriter::kChangesPerRecord) {
    first_part = parts_.size() - 1;
    first_row = parts_.back().size();
  }
  Pack(std::move(chunk), types_, &parts_);
  if (key_columns_.empty()) return;
  std::string key;
  for (size_t p = first_part; p < parts_.size(); ++p) {
    const Chunk& part = parts_[p];
    for (size_t row = p == first_part ? first_row : 0; row < part.size(); ++row) {
      key.clear();
      for (size_t column : key_columns_) {
        part.columns[column].AppendKey(row, &key);
      }
      auto [it, inserted] =
          last_by_key_.try_emplace(key, static_cast<uint32_t>(p), static_cast<uint32_t>(row));
      if (inserted) {
        buffered_bytes_ += key.size() + 48;
        continue;
      }
      // The last change of a key is what the target gets.
      auto [old_part, old_row] = it->second;
      if (replaced_.size() <= old_part) replaced_.resize(old_part + 1);
      std::vector<uint8_t>& flags = replaced_[old_part];
      if (flags.size() < parts_[old_part].size()) flags.resize(parts_[old_part].size());
      flags[old_row] = 1;
      ++replaced_count_;
      it->second = {static_cast<uint32_t>(p), static_cast<uint32_t>(row)};
    }
  }
}

SinkEpochChanges SinkOperator::TakeChanges() {
  SinkEpochChanges changes;
  if (replaced_count_ == 0) {
    changes = std::move(parts_);
  } else {
    // Only the changes no later one replaced, packed into full parts again.
    for (size_t p = 0; p < parts_.size(); ++p) {
      if (p >= replaced_.size() || replaced_[p].empty()) {
        Pack(std::move(parts_[p]), types_, &changes);
        continue;
      }
      std::vector<uint8_t> keep(parts_[p].size(), 1);
      for (size_t row = 0; row < replaced_[p].size(); ++row) keep[row] = !replaced_[p][row];
      Pack(parts_[p].Select(keep), types_, &changes);
    }
  }
  parts_.clear();
  last_by_key_.clear();
  replaced_.clear();
  replaced_count_ = 0;
  buffered_bytes_ = 0;
  epoch_full_.store(false, std::memory_order_release);
  return changes;
}

void SinkOperator::OnBarrier(storage::EpochBatch* batch) {
  barrier_epoch_ = batch->epoch();
  barrier_bytes_ = buffered_bytes_;
  auto changes = std::make_shared<const SinkEpochChanges>(TakeChanges());
  barrier_changes_ = changes;
  barrier_count_ = CountChanges(*changes);
  if (barrier_count_ == 0 || !writer_->two_phase()) return;  // Empty epochs prepare nothing.
  {
    std::lock_guard lock(mutex_);
    prepare_answered_ = false;
    prepared_id_.reset();
  }
  writer_->RequestPrepare(barrier_epoch_, changes, barrier_count_,
                          [this](std::optional<std::string> id) {
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
  const SinkEpochChanges& changes = *barrier_changes_;
  if (barrier_count_ > 0 && !prepared && !writer_->discards()) {
    // Owed: the checkpoint keeps the changes until the target has them, one record a part.
    uint32_t index = 0;
    for (const Chunk& part : changes) {
      batch->PutTableLogRecord(writer_->log_id(), ViewLogSequence(barrier_epoch_, index++),
                               SinkWriter::EncodeOwed(part, types_));
    }
    writer_->NoteOwed(barrier_epoch_, barrier_changes_, barrier_count_, barrier_bytes_);
  }
  if (rows_written_) {
    rows_written_->fetch_add(barrier_count_ + discarded_rows_, std::memory_order_relaxed);
  }
  if (bytes_written_) {
    size_t bytes = discarded_bytes_;
    for (const Chunk& part : changes) bytes += part.EstimatedBytes();
    bytes_written_->fetch_add(bytes, std::memory_order_relaxed);
  }
  discarded_rows_ = 0;
  discarded_bytes_ = 0;
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
