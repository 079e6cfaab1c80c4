#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/connectors/source_reader.h"
#include "planner/catalog.h"
#include "planner/connector_spec.h"

namespace stave::executor {

/// How the `datagen` connector fills one column.
struct DatagenField {
  enum class Kind { kSequence, kRandom };
  Kind kind = Kind::kRandom;
  DataType type;
  int64_t start = 1;           ///< Sequence: the first value.
  std::optional<int64_t> end;  ///< Sequence: the last value (inclusive); bounds the stream.
  int64_t step = 1;            ///< Sequence: the difference between neighbours.
  double min = 0;              ///< Random numbers: the range, inclusive.
  double max = 0;
  int64_t length = 10;  ///< Random strings: their length.
};

/// A `datagen` stream's options (Flink's names): 'rows-per-second' (unset: as fast as it
/// can), 'number-of-rows', 'seed', 'fields.<col>.kind' = sequence|random,
/// 'fields.<col>.start'/'end' (sequence), 'fields.<col>.min'/'max' (random numbers),
/// 'fields.<col>.length' (random strings). Timestamp columns are sequences: 'start' and 'end'
/// are timestamps (default start 2000-01-01 00:00:00), 'step' an interval (default 1 second).
struct DatagenOptions {
  std::optional<double> rows_per_second;
  std::optional<uint64_t> number_of_rows;  ///< Rows in all; also bounded by sequence ends.
  uint64_t seed = 0;
  std::vector<DatagenField> fields;

  /// Throws SqlError 22023 naming the offending option.
  static DatagenOptions Parse(const std::map<std::string, std::string>& options,
                              const std::vector<planner::Column>& columns);
};

/// Generates rows deterministically: row n's values depend only on (seed, column, n), so
/// the position is just the row number and a replay from any position yields the same
/// rows. A sequence or 'number-of-rows' bounds the stream; otherwise it is endless.
class DatagenSource : public SourceReader {
 public:
  explicit DatagenSource(DatagenOptions options);

  PollStatus Poll(size_t max_rows, Chunk* chunk,
                  std::chrono::steady_clock::time_point* wake_at) override;
  std::string Position() const override;
  Status Seek(std::string_view position) override;

  uint64_t next_row() const { return next_row_; }

 private:
  void AppendValue(size_t field, uint64_t row, Column* column) const;

  DatagenOptions options_;
  std::optional<uint64_t> total_rows_;
  uint64_t next_row_ = 0;
  // Throttling: rows allowed by now = rows at `rate_start_` + rate × elapsed.
  std::chrono::steady_clock::time_point rate_start_;
  uint64_t rate_start_row_ = 0;
};

/// The planner-facing description of the connector.
planner::ConnectorSpec DatagenConnectorSpec();

}  // namespace stave::executor
