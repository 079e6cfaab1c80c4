#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "executor/operators/stream_operator.h"
#include "executor/runtime/sink_writer.h"
#include "storage/row_codec.h"

namespace stave::executor {

/// The end of a sink's dataflow. It gathers each epoch's changes; at the barrier it hands
/// them to the sink's writer, as a transaction to pre-commit (two-phase targets) or as owed
/// changes written into the epoch's checkpoint, which the writer delivers once the
/// checkpoint has committed. Either way the checkpoint says what became of the epoch, so
/// a crash at any instant neither loses nor repeats it.
///
/// With `key_columns` (upsert), the changes of an epoch are compacted per key: only the
/// last one of each key is written. Otherwise (append) every row is.
class SinkOperator : public StreamOperator {
 public:
  /// `types`: the input's columns, which the sink writes. `rows_written`, `bytes_written`:
  /// metrics of the changes handed to the target and their estimated bytes (may be null).
  SinkOperator(std::shared_ptr<SinkWriter> writer, storage::RowTypes types,
               std::vector<size_t> key_columns, std::atomic<uint64_t>* rows_written,
               std::atomic<uint64_t>* bytes_written = nullptr);

  /// True while the epoch being gathered holds kMaxEpochBytes or more: the sink's sources
  /// pause until its barrier, so that an epoch stays small enough to be kept in memory
  /// until its delivery and written ahead cheaply.
  const std::atomic<bool>* epoch_full() const { return &epoch_full_; }
  static constexpr size_t kMaxEpochBytes = size_t{32} << 20;

  void OnChunk(Chunk chunk) override;
  size_t BufferedBytes() const override { return buffered_bytes_; }
  void OnBarrier(storage::EpochBatch* batch) override;
  bool BarrierPending() const override;
  void FinishBarrier(storage::EpochBatch* batch) override;

 private:
  /// Appends the rows of `chunk` (kInsert or kDelete) to the epoch's parts; in upsert mode
  /// marks the earlier change of each of their keys as replaced.
  void Gather(Chunk chunk);
  /// The epoch's changes, compacted per key in upsert mode.
  SinkEpochChanges TakeChanges();

  std::shared_ptr<SinkWriter> writer_;
  storage::RowTypes types_;
  std::vector<size_t> key_columns_;
  std::atomic<uint64_t>* rows_written_;
  std::atomic<uint64_t>* bytes_written_;

  // The epoch being gathered: its changes in order, in parts of at most kChangesPerRecord.
  SinkEpochChanges parts_;
  // Upsert mode: where the last change of each key is (part, row), and per part the rows a
  // later change of their key replaced (1), which the target does not get.
  std::unordered_map<std::string, std::pair<uint32_t, uint32_t>> last_by_key_;
  std::vector<std::vector<uint8_t>> replaced_;
  size_t replaced_count_ = 0;
  size_t buffered_bytes_ = 0;
  std::atomic<bool> epoch_full_{false};
  size_t barrier_bytes_ = 0;  // buffered_bytes_ of the epoch at its barrier.
  // Rows (and their estimated bytes) of the epoch a discarding target was not handed: they
  // count as written at the barrier, like the rows of any other target.
  uint64_t discarded_rows_ = 0;
  uint64_t discarded_bytes_ = 0;

  // The barrier being finished.
  uint64_t barrier_epoch_ = 0;
  std::shared_ptr<const SinkEpochChanges> barrier_changes_;
  uint64_t barrier_count_ = 0;
  mutable std::mutex mutex_;
  bool prepare_answered_ = true;            // GUARDED_BY(mutex_)
  std::optional<std::string> prepared_id_;  // GUARDED_BY(mutex_)

  SinkRecord written_record_;  // What the last checkpoint got.
  bool record_written_ = false;
  uint64_t deleted_below_ = 0;  // Owed epochs below this are deleted from the checkpoint.
};

}  // namespace stave::executor
