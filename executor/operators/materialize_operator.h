#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "executor/change_record.h"
#include "executor/operators/stream_operator.h"
#include "storage/row_codec.h"
#include "storage/state_table.h"

namespace stave::executor {

/// The group of a view's counters table (slot kViewRowsSlot + 1) where each instance of its
/// materialization keeps the watermark it published: an InstanceWatermark under the
/// instance's number, big-endian. (The table's other keys start with a byte below 'a', or
/// with "next_row_id".)
inline constexpr std::string_view kViewWatermarkGroup = "watermark";

/// The end of a materialized view's dataflow: applies the changelog to the view's rows
/// table, which ad-hoc SELECTs read. Rows are keyed by the key columns (a grouped view's
/// group keys); a view without keys is append-only and numbers its rows with a counter per
/// parallel instance, kept in its own state, so a replay after recovery numbers them the
/// same way and instances never collide.
///
/// A `multiset` view (an unkeyed join that retracts: its rows have no identity of their
/// own) keeps each distinct row as a count in `counters`, keyed by the row's memcomparable
/// encoding, and its copies in the rows table under that encoding plus the copy's number
/// (0, 1, ...): an insert adds copy `count`, a delete removes the last copy. Its input is
/// routed by the whole row, so one instance owns each distinct row. Changes of one row may
/// arrive out of order (from two upstream instances); the count then dips below zero for a
/// moment and no copy is written until it is positive again, so the result is the same.
///
/// A view that carries event time (CatalogObject::event_time_columns) publishes the
/// watermark that reaches it: at each barrier where it rose, each instance writes it, with
/// the run's parallelism, under its number in the `kViewWatermarkGroup` group of `counters`
/// (for a reader's backfill) and, while logging, into its change log record of the epoch
/// (a record may hold it alone). ViewWatermark turns them into the view's.
class MaterializeOperator : public StreamOperator {
 public:
  /// `visible_types`: the view's columns, the first columns of each chunk.
  /// `keyed`: rows are identified by `key_columns`, chunk positions that may be hidden
  /// columns after the visible ones (empty for a global aggregate's single row).
  /// `instance`: this parallel instance's number. While `log_changes` is on, each epoch's
  /// applied changes are also written to the view's change log (in the same epoch batch),
  /// where views over this view read them; it is read at barriers, so an epoch is logged
  /// whole or not at all. `rows_written` counts row changes applied (a metric; may be null),
  /// `bytes_written` their estimated bytes (Chunk::EstimatedBytes). `rows_stored_upstream`:
  /// the aggregate feeding the view writes its rows (HashAggregateOperator::ViewRows), so
  /// this operator only counts and logs the changes; while they are not logged, the
  /// aggregate emits none and counts them itself.
  MaterializeOperator(uint32_t view_id, uint32_t instance, storage::RowTypes visible_types,
                      bool keyed, std::vector<size_t> key_columns, storage::StateTable rows,
                      storage::StateTable counters,
                      std::shared_ptr<const std::atomic<bool>> log_changes,
                      std::atomic<uint64_t>* rows_written, bool multiset = false,
                      std::atomic<uint64_t>* bytes_written = nullptr,
                      bool rows_stored_upstream = false);

  /// Publishes the view's watermark; `parallelism`: the instances of this run.
  void PublishWatermark(uint32_t parallelism) { parallelism_ = parallelism; }

  void Start() override;
  void OnChunk(Chunk chunk) override;
  void OnWatermark(int64_t watermark) override { watermark_ = watermark; }
  void OnBarrier(storage::EpochBatch* batch) override;
  size_t BufferedBytes() const override { return rows_.buffered_bytes() + logged_bytes_; }

 private:
  /// Whether row `row` of `chunk` is the insert of an update pair with key `key` (keyed
  /// views); `scratch` takes its key.
  bool NextRowHasKey(const Chunk& chunk, size_t row, std::string_view key,
                     std::string* scratch) const;
  /// Adds a chunk's changes to the metrics.
  void CountRows(const Chunk& chunk);
  uint32_t view_id_;
  uint32_t instance_;
  storage::RowTypes visible_types_;
  storage::RowTypes changelog_types_;  // Visible columns, then the row key.
  std::shared_ptr<const std::atomic<bool>> log_changes_;
  bool logging_ = false;  // log_changes_ as of the epoch's start.
  std::vector<RowChange> epoch_changes_;
  size_t logged_bytes_ = 0;
  bool keyed_;
  bool multiset_;
  bool rows_stored_upstream_;
  std::vector<size_t> key_columns_;
  storage::StateTable rows_;
  storage::StateTable counters_;
  uint64_t next_row_id_ = 0;
  bool row_id_dirty_ = false;
  std::atomic<uint64_t>* rows_written_;
  std::atomic<uint64_t>* bytes_written_;  // Their estimated bytes (a metric; may be null).
  uint32_t parallelism_ = 0;              // Nonzero: the view publishes its watermark.
  int64_t watermark_ = INT64_MIN;
  int64_t published_ = INT64_MIN;
};

}  // namespace stave::executor
