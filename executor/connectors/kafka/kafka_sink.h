#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <librdkafka/rdkafkacpp.h>

#include "executor/connectors/format/json_encoder.h"
#include "executor/connectors/kafka/kafka_properties.h"
#include "executor/connectors/sink_target.h"
#include "planner/catalog.h"
#include "planner/connector_spec.h"

namespace stave::executor {

/// A `kafka` sink's options: topic, properties.bootstrap.server, properties.<librdkafka
/// setting>, key = 'col[,col]' (the message key; needed when the input retracts),
/// progress_topic (where the sink records the epochs it has published; default
/// 'stave-progress.<sink>', created when missing) and transactional_id (default
/// 'stave.<sink>'). FORMAT JSON: the value is the row as a flat JSON object of all its
/// columns, the key a JSON object of the key columns; a delete is a tombstone.
struct KafkaSinkOptions {
  std::string topic;
  KafkaProperties properties;
  std::vector<size_t> key;  ///< Column positions.
  std::vector<std::string> column_names;
  bool upsert = false;  ///< The input retracts: deletes are tombstones.
  std::string progress_topic;
  std::string transactional_id;
  /// Whether the sink must keep exactly-once: CREATE SINK then refuses a cluster that shows
  /// aborted transactions to read_committed readers.
  bool exactly_once = true;

  /// `sink_name` fills the defaults. Throws SqlError 22023 naming the offending option.
  static KafkaSinkOptions Parse(const std::map<std::string, std::string>& options,
                                const planner::SinkInput& input, const std::string& format,
                                const std::string& sink_name);
  /// E.g. "kafka topic 'orders' at host:9092, key (id), upsert"; never a secret.
  std::string Describe() const;
};

/// Publishes each committed epoch in one Kafka transaction, together with a progress record
/// ("epoch e done", keyed by the transactional id) in the sink's progress topic. librdkafka
/// cannot resume a pre-committed transaction after a restart, so the epoch's rows wait in
/// the checkpoint (owed) until the transaction commits. Recovery calls init_transactions
/// (which fences an older producer of the same id and aborts its open transaction), reads
/// the progress record with read_committed, and publishes the epochs after it. See
/// docs/kafka.md.
class KafkaSinkTarget : public SinkTarget {
 public:
  KafkaSinkTarget(std::string sink_name, KafkaSinkOptions options);
  ~KafkaSinkTarget() override;

  void Create() override;
  void Connect() override;
  void Disconnect() noexcept override;
  uint64_t Recover(const std::optional<std::string>& keep) override;
  void Deliver(uint64_t epoch, uint64_t count, const SinkChangeBatches& changes) override;
  void Drop() override;

 private:
  /// A new transactional producer, transactions initialized (fencing older ones).
  std::unique_ptr<RdKafka::Producer> OpenProducer();
  /// Runs `produce` inside one transaction of `producer` and commits it.
  void InTransaction(RdKafka::Producer* producer, const std::function<void()>& produce);
  void Produce(RdKafka::Producer* producer, const std::string& topic, int32_t partition,
               const std::string* key, const std::string* value);
  /// Reads the progress topic from its beginning to its end, as read_committed readers see
  /// it, calling `visit` for each record. Throws if the end is not reached in time.
  void ReadProgressTopic(const std::function<void(const RdKafka::Message&)>& visit);
  /// The last epoch the progress topic says this sink finished (0 if none).
  uint64_t ReadProgress();
  /// Refuses (0A000) a cluster that lets read_committed readers see aborted records.
  void CheckAbortedRecordsHidden(RdKafka::Producer* producer);
  void EnsureTopics();

  std::string sink_name_;
  KafkaSinkOptions options_;
  JsonObjectEncoder key_encoder_;    // The message key: the key columns.
  JsonObjectEncoder value_encoder_;  // The message value: every column.
  std::unique_ptr<RdKafka::Producer> producer_;
};

/// The planner-facing description of the connector's sink side.
planner::SinkCapability ValidateKafkaSink(const std::map<std::string, std::string>& options,
                                          const planner::SinkInput& input,
                                          const std::string& format);

}  // namespace stave::executor
