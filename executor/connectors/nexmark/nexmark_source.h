#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "executor/connectors/nexmark/nexmark_generator.h"
#include "executor/connectors/source_reader.h"
#include "planner/catalog.h"
#include "planner/connector_spec.h"

namespace stave::executor {

/// What a TIMESTAMP column's int64 counts from, relative to the Unix epoch: the generator's
/// times are µs since 1970-01-01 UTC and are written minus this offset, as TIMESTAMP counts
/// from 2000-01-01 (as PostgreSQL's does). BIGINT time columns hold µs since the Unix epoch.
inline constexpr int64_t kTimestampEpochOffsetMicros = 946'684'800'000'000;

/// A `nexmark` stream's options: 'nexmark.table.type' = person | auction | bid (required),
/// 'nexmark.event.num' (events in all, of every type; unset: endless),
/// 'nexmark.events-per-second' (unset: as fast as it can), 'nexmark.seed',
/// 'nexmark.first-event-rate' (events per second of event time; default: the
/// events-per-second if set, else 10,000,000 as in Flink's nexmark).
struct NexmarkOptions {
  nexmark::EventType type = nexmark::EventType::kBid;
  nexmark::GeneratorConfig generator;
  std::optional<uint64_t> event_num;
  std::optional<double> events_per_second;
  /// Per declared column, in order: which field of the table type it takes (the index in
  /// NexmarkColumnNames(type)), and its declared type.
  std::vector<size_t> fields;
  std::vector<DataType> types;
  /// Per declared column, whether the query reads it (empty: all are). The `extra` padding
  /// is generated only if read: its random letters cost more than the rest of a bid.
  std::vector<bool> read_columns;

  /// Throws SqlError 22023 naming the offending option or column, 42804 for a column of
  /// the wrong type.
  static NexmarkOptions Parse(const std::map<std::string, std::string>& options,
                              const std::vector<planner::Column>& columns);
};

/// The columns of a table type, in RisingWave's and Flink's order.
std::vector<std::string> NexmarkColumnNames(nexmark::EventType type);

/// Yields one table type's rows of the Nexmark event stream. Events are numbered globally
/// (a bid stream of 1000 events yields the 920 bids among events 0..999); the position is
/// the next event number, and a replay from any position yields identical rows.
class NexmarkSource : public SourceReader {
 public:
  explicit NexmarkSource(NexmarkOptions options);

  PollStatus Poll(size_t max_rows, Chunk* chunk,
                  std::chrono::steady_clock::time_point* wake_at) override;
  std::string Position() const override;
  Status Seek(std::string_view position) override;

  uint64_t next_event() const { return next_event_; }

 private:
  NexmarkOptions options_;
  bool want_extra_ = false;
  uint64_t next_event_ = 0;
  // Scratch events, generated into and then moved into the chunk's columns.
  nexmark::Person person_;
  nexmark::Auction auction_;
  nexmark::Bid bid_;
  // Throttling: events allowed by now = events at `rate_start_` + rate × elapsed.
  std::chrono::steady_clock::time_point rate_start_;
  uint64_t rate_start_event_ = 0;
};

/// The planner-facing description of the connector.
planner::ConnectorSpec NexmarkConnectorSpec();

}  // namespace stave::executor
