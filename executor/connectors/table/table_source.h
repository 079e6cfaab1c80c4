#pragma once

#include <memory>

#include "executor/connectors/source_reader.h"
#include "executor/table.h"

namespace stave::executor {

/// Reads a table's log as a changelog, record by record from a sequence number. Replayable:
/// the position is the next sequence, and records are never rewritten.
class TableSource : public SourceReader {
 public:
  TableSource(std::shared_ptr<Table> table, const storage::Store* store)
      : table_(std::move(table)), store_(store) {}

  PollStatus Poll(size_t max_rows, Chunk* chunk,
                  std::chrono::steady_clock::time_point* wake_at) override;
  std::string Position() const override;
  Status Seek(std::string_view position) override;
  bool CaughtUp(const SourceTargets& targets) const override;

 private:
  std::shared_ptr<Table> table_;
  const storage::Store* store_;
  uint64_t next_sequence_ = 0;
};

}  // namespace stave::executor
