#pragma once

#include <memory>

#include "executor/connectors/source_reader.h"
#include "executor/table.h"

namespace stave::executor {

/// Reads a table as a changelog. It starts with a backfill: the table's rows at log sequence
/// S, read from a snapshot (the rows and the log are written together) and delivered in one
/// chunk, so no checkpoint falls inside it. Then it follows the table's log, record by record
/// from S. Replayable: the position is the next sequence, and records are never rewritten;
/// records every reader has passed are deleted at checkpoints, as later readers backfill.
class TableSource : public SourceReader {
 public:
  /// `reader`: what reads it, for the log ("view totals").
  TableSource(std::shared_ptr<Table> table, const storage::Store* store,
              const std::string& reader = "a query");

  PollStatus Poll(size_t max_rows, Chunk* chunk,
                  std::chrono::steady_clock::time_point* wake_at) override;
  std::string Position() const override;
  Status Seek(std::string_view position) override;
  bool CaughtUp(const SourceTargets& targets) const override;
  std::optional<std::pair<uint32_t, uint64_t>> RetainedLog() const override;
  std::optional<BackfillStatus> backfill() const override { return progress_.status(); }

 private:
  /// Reads the table's rows from a snapshot consistent with its log.
  Chunk Backfill();

  std::shared_ptr<Table> table_;
  const storage::Store* store_;
  bool backfilled_ = false;
  uint64_t next_sequence_ = 0;
  BackfillProgress progress_;
};

}  // namespace stave::executor
