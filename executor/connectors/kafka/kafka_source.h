#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>

#include "executor/connectors/format/record_decoder.h"
#include "executor/connectors/kafka/kafka_properties.h"
#include "executor/connectors/source_reader.h"
#include "planner/catalog.h"
#include "planner/connector_spec.h"

namespace stave::executor {

/// What a stream does with a record it cannot decode.
enum class OnBadRecord {
  kSkip,        ///< Count it, log it, go on.
  kFail,        ///< Stop the job at it, with an error that says where and why.
  kDeadLetter,  ///< Count it, keep it in stave_catalog.bad_records, go on.
};

/// A `kafka` stream's options:
///   topic, properties.bootstrap.server, properties.<librdkafka setting>,
///   scan.startup.mode = earliest | latest | timestamp, scan.startup.timestamp_millis,
///   scan.topic-partition-discovery.interval (milliseconds),
///   on_error = skip | fail | dead_letter, and the format's own (e.g. csv.delimiter).
/// Columns named `_partition`, `_offset`, `_timestamp` (milliseconds since 1970 as a bigint,
/// or the instant as a timestamptz or timestamp in UTC) and `_key`
/// are filled from the record's metadata; the others from its value, by FORMAT (json, csv).
struct KafkaSourceOptions {
  enum class StartupMode { kEarliest, kLatest, kTimestamp };
  enum class Metadata { kPartition, kOffset, kTimestamp, kKey };

  std::string topic;
  KafkaProperties properties;
  StartupMode startup_mode = StartupMode::kEarliest;
  int64_t startup_timestamp_ms = 0;
  std::chrono::milliseconds discovery_interval{5000};
  OnBadRecord on_error = OnBadRecord::kDeadLetter;
  std::string format;
  std::map<std::string, std::string> format_options;
  std::vector<PayloadColumn> payload;
  std::vector<std::pair<size_t, Metadata>> metadata;  ///< Column position → what it holds.
  std::vector<DataType> column_types;

  /// Throws SqlError 22023 naming the offending option, or 42P16 for a bad column.
  static KafkaSourceOptions Parse(const std::map<std::string, std::string>& options,
                                  const std::vector<planner::Column>& columns,
                                  const std::string& format);
};

/// Reads a Kafka topic's partitions. The position is the next offset of every partition
/// (and the count of bad records so far), so a job restarted from a checkpoint reads again
/// exactly what followed it: Kafka replays, and consumer-group offsets play no part. The
/// consumer is created on the first Poll, so planning never connects; when the brokers are
/// away, Poll retries with backoff and the job waits.
class KafkaSource : public SourceReader {
 public:
  KafkaSource(uint32_t stream_id, std::string stream_name, KafkaSourceOptions options);
  ~KafkaSource() override;
  KafkaSource(const KafkaSource&) = delete;
  KafkaSource& operator=(const KafkaSource&) = delete;

  PollStatus Poll(size_t max_rows, Chunk* chunk,
                  std::chrono::steady_clock::time_point* wake_at) override;
  std::string Position() const override;
  Status Seek(std::string_view position) override;
  std::vector<DeadLetter> TakeDeadLetters() override;
  uint64_t bad_records() const override { return bad_records_; }
  std::optional<uint64_t> payload_bytes() const override { return payload_bytes_; }
  std::vector<int32_t> Splits() const override;
  const std::vector<int32_t>& RowSplits() const override { return row_partitions_; }
  std::vector<std::pair<int32_t, int64_t>> Lag() const override;

 private:
  using Clock = std::chrono::steady_clock;

  /// Creates the consumer and assigns every partition. False (and logged) if the brokers
  /// cannot be reached.
  bool Connect();
  /// Looks for partitions added to the topic since the last look, and reads them too.
  void DiscoverPartitions();
  /// The topic's partitions, or nullopt (logged) if the metadata cannot be had.
  std::optional<std::vector<int32_t>> FetchPartitions();
  /// Where a partition not in the position starts: by the startup mode for the partitions
  /// of the first start, from its beginning for those created later.
  int64_t StartOffset(int32_t partition, bool first_start);
  void Assign();
  void Handle(const rd_kafka_message_t& message, Chunk* chunk);
  void OnBadRecord(const rd_kafka_message_t& message, std::string error);
  void Warn(const std::string& message);
  /// A partition whose next offset is no longer in the log (retention deleted the records
  /// before they were read, or the topic was recreated): reads on from its first offset and
  /// counts the records that were never read.
  void OnOffsetOutOfRange(int32_t partition);
  /// Refreshes lag_ from the high watermarks librdkafka last saw (no broker round trip).
  void UpdateLag();

  uint32_t stream_id_;
  std::string stream_name_;
  KafkaSourceOptions options_;
  std::unique_ptr<RecordDecoder> decoder_;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
  struct QueueDeleter {
    void operator()(rd_kafka_queue_t* queue) const { rd_kafka_queue_destroy(queue); }
  };
  // The consumer's queue, read in batches (declared after consumer_: it must go first).
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue_;
  // Partition → the offset of the next record to read (RdKafka::Topic::OFFSET_BEGINNING
  // until the first record of a partition that starts at its beginning).
  std::map<int32_t, int64_t> offsets_;
  uint64_t bad_records_ = 0;
  uint64_t lost_records_ = 0;   // Deleted from the log before they were read.
  uint64_t payload_bytes_ = 0;  // Of the records handled since opened (keys excluded).
  // The partition of each row of the chunk of the last Poll.
  std::vector<int32_t> row_partitions_;
  std::vector<DeadLetter> dead_letters_;
  Clock::time_point next_discovery_;
  Clock::time_point next_connect_;
  std::chrono::milliseconds backoff_{0};
  Clock::time_point last_warning_;
  std::string last_warning_text_;
  Clock::time_point next_lag_update_;
  mutable std::mutex lag_mutex_;
  std::vector<std::pair<int32_t, int64_t>> lag_;  // GUARDED_BY(lag_mutex_)
};

/// The offsets and bad-record count a Kafka source's position holds, for the system table.
struct KafkaPositionSummary {
  std::string offsets;  ///< "partition:offset,…"
  uint64_t bad_records = 0;
  uint64_t lost_records = 0;
};
std::optional<KafkaPositionSummary> SummarizeKafkaPosition(std::string_view position);

/// The planner-facing description of the connector (stream side now, sink side later).
planner::ConnectorSpec KafkaConnectorSpec();

/// Checks at CREATE STREAM that the brokers answer and the topic exists. Throws SqlError
/// 08001 or 42704 with what failed.
void ProbeKafkaSource(const KafkaSourceOptions& options);

}  // namespace stave::executor
