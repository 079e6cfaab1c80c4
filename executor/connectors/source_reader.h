#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "executor/chunk.h"
#include "executor/connectors/backfill_progress.h"
#include "executor/connectors/dead_letter.h"

namespace stave::executor {

/// Positions sources must reach before a checkpoint may commit: object id → log sequence
/// (every record below it; for a view's log, the epoch). Used by CHECKPOINT to cover all
/// writes acknowledged before it.
using SourceTargets = std::map<uint32_t, uint64_t>;

/// Reads one stream for one job. Its position is what a checkpoint records and what
/// recovery seeks back to, so a replayable source loses nothing and counts nothing twice.
/// Not thread-safe: owned by one job.
class SourceReader {
 public:
  enum class PollStatus {
    kData,      ///< `chunk` holds rows (all inserts).
    kIdle,      ///< Nothing now; try again at `wake_at`.
    kFinished,  ///< A bounded source has delivered everything.
  };

  virtual ~SourceReader() = default;

  /// Reads up to `max_rows` rows into `chunk`.
  virtual PollStatus Poll(size_t max_rows, Chunk* chunk,
                          std::chrono::steady_clock::time_point* wake_at) = 0;

  /// The position after the last row returned, as opaque bytes.
  virtual std::string Position() const = 0;
  /// Continues after a position returned by Position() (from a committed checkpoint).
  virtual Status Seek(std::string_view position) = 0;

  /// Tells the reader the epoch its job starts in (before Seek). A reader of a view's change
  /// log backfills from a snapshot no older than that epoch: the view logs its changes from
  /// the epoch after the one that added the reader.
  virtual void SetStartEpoch(uint64_t epoch) { (void)epoch; }

  /// For a reader of a change log (a view's): the log's object and the first record it
  /// will still read after recovery from the position it reports now. Older records may go.
  virtual std::optional<std::pair<uint32_t, uint64_t>> RetainedLog() const { return std::nullopt; }

  /// The dead letters met since the last call, in the order read. The caller writes them
  /// into the epoch the rows read with them belong to.
  virtual std::vector<DeadLetter> TakeDeadLetters() { return {}; }

  /// Records this reader could not decode so far, as its position counts them.
  virtual uint64_t bad_records() const { return 0; }

  /// For a reader of encoded records (Kafka, a socket): the bytes of the records it read
  /// since it was opened, as they arrived, before decoding. Nullopt for a reader of rows
  /// (a table, a view, generated data), whose bytes are estimated from the rows instead.
  virtual std::optional<uint64_t> payload_bytes() const { return std::nullopt; }

  /// For a reader that starts with a backfill (a table's or a view's rows before their log):
  /// how far it has come. Thread-safe: the admin API reads it while the job polls.
  virtual std::optional<BackfillStatus> backfill() const { return std::nullopt; }

  /// For a reader of several splits (a Kafka topic's partitions): the splits it reads now.
  /// Empty for a reader of one.
  virtual std::vector<int32_t> Splits() const { return {}; }
  /// For a reader of a log whose end it learns (a Kafka topic): per split, the records
  /// between its position and the end of the log as last seen. Thread-safe, unlike the rest:
  /// the admin API reads it while the job polls.
  virtual std::vector<std::pair<int32_t, int64_t>> Lag() const { return {}; }
  /// With Splits(): the split each row of the chunk of the last Poll came from, in order.
  virtual const std::vector<int32_t>& RowSplits() const {
    static const std::vector<int32_t> kNone;
    return kNone;
  }

  /// For a stream with a watermark: the watermark (event time, in the event-time column's
  /// physical units) if it rose since the last call, after a Poll. Rows the reader returns
  /// later are never below it.
  virtual std::optional<int64_t> TakeWatermark() { return std::nullopt; }
  /// Rows dropped so far for arriving below the watermark, as the position counts them.
  virtual uint64_t late_rows() const { return 0; }

  /// Whether this reader has read everything `targets` asks of it.
  virtual bool CaughtUp(const SourceTargets& targets) const {
    (void)targets;
    return true;
  }
};

}  // namespace stave::executor
