#include "executor/connectors/kafka/kafka_sink.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "common/failpoint.h"
#include "common/sql_error.h"
#include "executor/connectors/connectors.h"
#include "executor/connectors/format/json_encoder.h"

namespace stave::executor {
namespace {

constexpr std::string_view kConnectionException = "08001";
constexpr int kInitTimeoutMs = 30000;
constexpr int kCommitTimeoutMs = 60000;
constexpr int kMetadataTimeoutMs = 5000;
constexpr std::chrono::seconds kProgressReadTimeout{30};
constexpr int32_t kProgressPartition = 0;

// The producer settings Stave must own for the protocol to hold.
const std::map<std::string, std::string>& ReservedSinkSettings() {
  static const std::map<std::string, std::string> reserved = {
      {"transactional.id", "Use the sink option transactional_id."},
      {"enable.idempotence", "Transactions need the idempotent producer; Stave turns it on."},
      {"acks", "Transactions need acks=all; Stave sets it."},
  };
  return reserved;
}

// A Kafka topic name from a sink name: Kafka allows [a-zA-Z0-9._-] only.
std::string TopicSafe(std::string_view name) {
  std::string safe;
  for (char c : name) {
    bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '_' || c == '-';
    safe.push_back(allowed ? c : '_');
  }
  return safe;
}

// Throws the error librdkafka returned (and frees it), unless there is none.
void ThrowIf(RdKafka::Error* error, std::string_view what) {
  if (!error) return;
  std::string text = fmt::format("Kafka {}: {}", what, error->str());
  delete error;
  throw std::runtime_error(text);
}

std::vector<size_t> ParseKey(const std::string& value,
                             const std::vector<planner::Column>& columns) {
  std::vector<size_t> key;
  for (const std::string& name : SplitOptionList(value)) {
    auto it = std::find_if(columns.begin(), columns.end(),
                           [&](const planner::Column& column) { return column.name == name; });
    if (it == columns.end()) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("Kafka sink option 'key': the input has no column \"{}\"", name));
    }
    key.push_back(static_cast<size_t>(it - columns.begin()));
  }
  return key;
}

std::vector<std::string> ColumnNames(const KafkaSinkOptions& options,
                                     const std::vector<size_t>& columns) {
  std::vector<std::string> names;
  for (size_t column : columns) names.push_back(options.column_names[column]);
  return names;
}

std::vector<size_t> AllColumns(const KafkaSinkOptions& options) {
  std::vector<size_t> columns(options.column_names.size());
  for (size_t i = 0; i < columns.size(); ++i) columns[i] = i;
  return columns;
}

}  // namespace

KafkaSinkOptions KafkaSinkOptions::Parse(const std::map<std::string, std::string>& options,
                                         const planner::SinkInput& input, const std::string& format,
                                         const std::string& sink_name) {
  if (!format.empty() && format != "json") {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("a Kafka sink writes FORMAT JSON, not FORMAT {}", format));
  }
  KafkaSinkOptions result;
  std::map<std::string, std::string> rest = options;
  result.properties = KafkaProperties::Take(&rest, "sink", ReservedSinkSettings());
  for (const planner::Column& column : input.columns) {
    result.column_names.push_back(column.name);
  }
  result.upsert = !input.append_only;
  for (const auto& [key, value] : rest) {
    if (key == "topic") {
      result.topic = value;
    } else if (key == "key") {
      result.key = ParseKey(value, input.columns);
    } else if (key == "progress_topic") {
      result.progress_topic = value;
    } else if (key == "transactional_id") {
      result.transactional_id = value;
    } else {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("unknown option '{}' for a Kafka sink", key))
          .WithHint(
              "A Kafka sink takes topic, properties.bootstrap.server, properties.<librdkafka "
              "setting>, key, progress_topic, transactional_id and delivery.");
    }
  }
  if (result.topic.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue, "a Kafka sink needs 'topic'");
  }
  if (result.upsert && result.key.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "the sink's input updates and deletes rows, so a Kafka sink needs 'key'")
        .WithHint(
            "Name the columns that identify a row, e.g. key = 'id': each change is then "
            "written as an upsert of that key, and a delete as a tombstone.");
  }
  if (result.progress_topic.empty())
    result.progress_topic = "stave-progress." + TopicSafe(sink_name);
  if (result.transactional_id.empty()) result.transactional_id = "stave." + sink_name;
  return result;
}

std::string KafkaSinkOptions::Describe() const {
  std::string text = fmt::format("kafka topic '{}' at {}", topic, properties.bootstrap());
  if (!key.empty()) {
    std::vector<std::string> names;
    for (size_t column : key) names.push_back(column_names[column]);
    text += fmt::format(", key ({})", fmt::join(names, ", "));
  }
  text += upsert ? ", upsert" : ", append";
  return text;
}

KafkaSinkTarget::KafkaSinkTarget(std::string sink_name, KafkaSinkOptions options)
    : sink_name_(std::move(sink_name)),
      options_(std::move(options)),
      key_encoder_(options_.key, ColumnNames(options_, options_.key)),
      value_encoder_(AllColumns(options_), options_.column_names) {}

KafkaSinkTarget::~KafkaSinkTarget() { Disconnect(); }

std::unique_ptr<RdKafka::Producer> KafkaSinkTarget::OpenProducer() {
  std::map<std::string, std::string> fixed = {
      {"transactional.id", options_.transactional_id},
      {"enable.idempotence", "true"},
      {"acks", "all"},
  };
  // Java clients place a key by murmur2: the same key lands in the same partition whoever
  // writes it.
  if (!options_.properties.settings.contains("partitioner"))
    fixed["partitioner"] = "murmur2_random";
  if (!options_.properties.settings.contains("client.id")) fixed["client.id"] = "stave";
  std::unique_ptr<RdKafka::Conf> conf = options_.properties.MakeConf(fixed);
  std::string error;
  std::unique_ptr<RdKafka::Producer> producer(RdKafka::Producer::create(conf.get(), error));
  if (!producer) throw std::runtime_error("cannot create a Kafka producer: " + error);
  ThrowIf(producer->init_transactions(kInitTimeoutMs),
          fmt::format("at {}: initializing transactions", options_.properties.bootstrap()));
  // A transactional producer's first record to a topic it knows nothing of waits for the
  // client's periodic topic scan (up to a second in librdkafka 2.0.2): ask now instead.
  for (const std::string& topic : {options_.topic, options_.progress_topic}) {
    std::unique_ptr<RdKafka::Topic> handle(
        RdKafka::Topic::create(producer.get(), topic, nullptr, error));
    RdKafka::Metadata* metadata = nullptr;
    if (handle && producer->metadata(false, handle.get(), &metadata, kMetadataTimeoutMs) ==
                      RdKafka::ERR_NO_ERROR) {
      delete metadata;
    }
  }
  return producer;
}

void KafkaSinkTarget::Produce(RdKafka::Producer* producer, const std::string& topic,
                              int32_t partition, const std::string* key, const std::string* value) {
  while (true) {
    RdKafka::ErrorCode code = producer->produce(
        topic, partition, RdKafka::Producer::RK_MSG_COPY,
        value ? const_cast<char*>(value->data()) : nullptr, value ? value->size() : 0,
        key ? key->data() : nullptr, key ? key->size() : 0, 0, nullptr, nullptr);
    if (code == RdKafka::ERR_NO_ERROR) return;
    if (code != RdKafka::ERR__QUEUE_FULL) {
      throw std::runtime_error(
          fmt::format("Kafka: cannot produce to topic \"{}\": {}", topic, RdKafka::err2str(code)));
    }
    producer->poll(10);  // The local queue is full: let deliveries drain it.
  }
}

void KafkaSinkTarget::InTransaction(RdKafka::Producer* producer,
                                    const std::function<void()>& produce) {
  ThrowIf(producer->begin_transaction(), "beginning a transaction");
  try {
    produce();
    ThrowIf(producer->commit_transaction(kCommitTimeoutMs), "committing a transaction");
  } catch (...) {
    // Best effort: a producer that failed is dropped and the next one's init_transactions
    // aborts whatever is left open.
    if (RdKafka::Error* error = producer->abort_transaction(kCommitTimeoutMs)) delete error;
    throw;
  }
}

namespace {

// Whether `topic` exists, asking through a client that may (`allow_create`) have the broker
// create it as a side effect, as brokers with auto.create.topics.enable do.
bool TopicExists(const KafkaProperties& properties, const std::string& topic, bool allow_create) {
  std::unique_ptr<RdKafka::Conf> conf =
      properties.MakeConf({{"allow.auto.create.topics", allow_create ? "true" : "false"}});
  std::string error;
  std::unique_ptr<RdKafka::Producer> client(RdKafka::Producer::create(conf.get(), error));
  if (!client) throw SqlError(kConnectionException, "cannot create a Kafka client: " + error);
  std::unique_ptr<RdKafka::Topic> handle(
      RdKafka::Topic::create(client.get(), topic, nullptr, error));
  RdKafka::Metadata* raw = nullptr;
  RdKafka::ErrorCode code = client->metadata(false, handle.get(), &raw, kMetadataTimeoutMs);
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (code != RdKafka::ERR_NO_ERROR) {
    throw SqlError(kConnectionException,
                   fmt::format("cannot reach Kafka at {}: {}", properties.bootstrap(),
                               RdKafka::err2str(code)));
  }
  for (const RdKafka::TopicMetadata* each : *metadata->topics()) {
    if (each->topic() == topic && each->err() == RdKafka::ERR_NO_ERROR) return true;
  }
  return false;
}

// Creates a one-partition compacted topic through the admin API; the error, or "".
std::string CreateCompactedTopic(const KafkaProperties& properties, const std::string& name) {
  std::unique_ptr<RdKafka::Conf> conf = properties.MakeConf({});
  std::string error;
  std::unique_ptr<RdKafka::Producer> admin(RdKafka::Producer::create(conf.get(), error));
  if (!admin) return error;
  char message[512];
  rd_kafka_NewTopic_t* topic = rd_kafka_NewTopic_new(name.c_str(), 1, -1, message, sizeof(message));
  if (!topic) return message;
  rd_kafka_NewTopic_set_config(topic, "cleanup.policy", "compact");
  rd_kafka_queue_t* queue = rd_kafka_queue_new(admin->c_ptr());
  rd_kafka_CreateTopics(admin->c_ptr(), &topic, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, kMetadataTimeoutMs * 2);
  std::string failure;
  if (!event) {
    failure = "no answer";
  } else if (rd_kafka_event_error(event)) {
    failure = rd_kafka_event_error_string(event);
  } else {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      rd_kafka_resp_err_t code = rd_kafka_topic_result_error(results[i]);
      if (code != RD_KAFKA_RESP_ERR_NO_ERROR && code != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
        failure = rd_kafka_err2str(code);
    }
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(topic);
  return failure;
}

}  // namespace

void KafkaSinkTarget::EnsureTopics() {
  if (!TopicExists(options_.properties, options_.topic, false)) {
    throw SqlError(sqlstate::kUndefinedObject,
                   fmt::format("Kafka at {}: the topic \"{}\" does not exist",
                               options_.properties.bootstrap(), options_.topic))
        .WithHint("Create the topic first.");
  }
  if (TopicExists(options_.properties, options_.progress_topic, false)) return;
  std::string failure = CreateCompactedTopic(options_.properties, options_.progress_topic);
  // A cluster without the admin API (the mock) may still create it on first use.
  if (failure.empty() || TopicExists(options_.properties, options_.progress_topic, true)) return;
  throw SqlError(kConnectionException,
                 fmt::format("Kafka at {}: cannot create the progress topic \"{}\": {}",
                             options_.properties.bootstrap(), options_.progress_topic, failure))
      .WithHint(
          "Create it (one partition, cleanup.policy=compact), or name another with "
          "progress_topic.");
}

void KafkaSinkTarget::CheckAbortedRecordsHidden(RdKafka::Producer* producer) {
  // Exactly-once rests on read_committed readers never seeing an aborted transaction's
  // records (the progress record above all). Check it: abort a probe and look for it.
  std::string probe_key = options_.transactional_id + ".probe";
  std::string probe_value =
      fmt::format("{}", std::chrono::system_clock::now().time_since_epoch().count());
  ThrowIf(producer->begin_transaction(), "beginning a transaction");
  Produce(producer, options_.progress_topic, kProgressPartition, &probe_key, &probe_value);
  producer->flush(kCommitTimeoutMs);
  ThrowIf(producer->abort_transaction(kCommitTimeoutMs), "aborting a transaction");
  bool seen = false;
  ReadProgressTopic([&](const RdKafka::Message& message) {
    if (message.key() && *message.key() == probe_key && message.payload() &&
        std::string_view(static_cast<const char*>(message.payload()), message.len()) ==
            probe_value) {
      seen = true;
    }
  });
  if (seen) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("sink \"{}\" cannot be exactly-once: the Kafka cluster at {} shows "
                               "records of aborted transactions to read_committed readers",
                               sink_name_, options_.properties.bootstrap()))
        .WithDetail(
            "Recovery trusts the progress record only if an aborted one stays hidden; "
            "this cluster (librdkafka's mock cluster does this) would let a crash "
            "publish an epoch twice.")
        .WithHint("Use a Kafka broker, or ask for delivery = 'at_least_once'.");
  }
}

void KafkaSinkTarget::Create() {
  EnsureTopics();
  std::unique_ptr<RdKafka::Producer> producer;
  try {
    producer = OpenProducer();
    if (options_.exactly_once) CheckAbortedRecordsHidden(producer.get());
    // A new sink starts from no progress, whatever an earlier sink of this name published.
    std::string key = options_.transactional_id;
    std::string value = nlohmann::json{{"sink", sink_name_}, {"epoch", 0}}.dump();
    InTransaction(producer.get(), [&] {
      Produce(producer.get(), options_.progress_topic, kProgressPartition, &key, &value);
    });
  } catch (const SqlError&) {
    throw;
  } catch (const std::exception& error) {
    throw SqlError(kConnectionException, error.what());
  }
}

void KafkaSinkTarget::Connect() { producer_ = OpenProducer(); }

void KafkaSinkTarget::Disconnect() noexcept { producer_.reset(); }

uint64_t KafkaSinkTarget::Recover(const std::optional<std::string>& keep) {
  (void)keep;  // Nothing is ever left prepared: init_transactions in Connect aborted it.
  return ReadProgress();
}

void KafkaSinkTarget::ReadProgressTopic(const std::function<void(const RdKafka::Message&)>& visit) {
  std::string error;
  std::unique_ptr<RdKafka::Conf> conf =
      options_.properties.MakeConf({{"group.id", "stave"},
                                    {"enable.auto.commit", "false"},
                                    {"enable.partition.eof", "true"},
                                    {"isolation.level", "read_committed"}});
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(
      RdKafka::KafkaConsumer::create(conf.get(), error));
  if (!consumer) throw std::runtime_error("cannot create a Kafka consumer: " + error);
  std::vector<RdKafka::TopicPartition*> partitions = {RdKafka::TopicPartition::create(
      options_.progress_topic, kProgressPartition, RdKafka::Topic::OFFSET_BEGINNING)};
  consumer->assign(partitions);
  RdKafka::TopicPartition::destroy(partitions);
  auto deadline = std::chrono::steady_clock::now() + kProgressReadTimeout;
  bool at_end = false;
  while (!at_end && std::chrono::steady_clock::now() < deadline) {
    std::unique_ptr<RdKafka::Message> message(consumer->consume(200));
    if (message->err() == RdKafka::ERR__PARTITION_EOF) at_end = true;
    if (message->err() == RdKafka::ERR_NO_ERROR) visit(*message);
  }
  consumer->close();
  if (!at_end) {
    throw std::runtime_error(fmt::format("Kafka: cannot read the progress topic \"{}\" to its end",
                                         options_.progress_topic));
  }
}

uint64_t KafkaSinkTarget::ReadProgress() {
  // Only this sink's producer writes its key, and Connect's init_transactions has closed its
  // last transaction: the end of the committed records is the sink's true progress.
  uint64_t epoch = 0;
  ReadProgressTopic([&](const RdKafka::Message& message) {
    if (!message.key() || *message.key() != options_.transactional_id) return;
    if (message.payload() == nullptr) {
      epoch = 0;  // A dropped sink's tombstone.
      return;
    }
    nlohmann::json record = nlohmann::json::parse(
        std::string_view(static_cast<const char*>(message.payload()), message.len()), nullptr,
        false);
    if (record.is_object() && record.contains("epoch") && record["epoch"].is_number_unsigned())
      epoch = record["epoch"].get<uint64_t>();
  });
  return epoch;
}

void KafkaSinkTarget::Deliver(uint64_t epoch, uint64_t count, const SinkChangeBatches& changes) {
  (void)count;
  if (!producer_) Connect();
  std::string key_text;
  std::string value;
  const std::string* key = options_.key.empty() ? nullptr : &key_text;
  InTransaction(producer_.get(), [&] {
    changes([&](const Chunk& batch) {
      for (size_t r = 0; r < batch.size(); ++r) {
        if (key) {
          key_text.clear();
          key_encoder_.Append(batch, r, &key_text);
        }
        if (IsSinkDelete(batch, r)) {
          Produce(producer_.get(), options_.topic, RdKafka::Topic::PARTITION_UA, key, nullptr);
          continue;
        }
        value.clear();
        value_encoder_.Append(batch, r, &value);
        Produce(producer_.get(), options_.topic, RdKafka::Topic::PARTITION_UA, key, &value);
      }
    });
    // The rows are acknowledged before the progress record is sent: on a cluster that
    // shows aborted records (the mock), a visible progress record then still means every
    // row of its epoch is there too, so even there nothing is lost.
    if (producer_->flush(kCommitTimeoutMs) != RdKafka::ERR_NO_ERROR)
      throw std::runtime_error("Kafka: the epoch's records were not acknowledged in time");
    std::string marker_key = options_.transactional_id;
    std::string marker = nlohmann::json{{"sink", sink_name_}, {"epoch", epoch}}.dump();
    Produce(producer_.get(), options_.progress_topic, kProgressPartition, &marker_key, &marker);
    failpoint::Hit("kafka_sink_before_commit");
  });
  producer_->poll(0);  // Serves the events (errors) queued meanwhile.
}

void KafkaSinkTarget::Drop() {
  std::unique_ptr<RdKafka::Producer> producer = OpenProducer();
  std::string key = options_.transactional_id;
  InTransaction(producer.get(), [&] {
    Produce(producer.get(), options_.progress_topic, kProgressPartition, &key, nullptr);
  });
}

planner::SinkCapability ValidateKafkaSink(const std::map<std::string, std::string>& options,
                                          const planner::SinkInput& input,
                                          const std::string& format) {
  KafkaSinkOptions parsed = KafkaSinkOptions::Parse(options, input, format, "sink");
  planner::SinkCapability capability;
  capability.guarantee = planner::Delivery::kExactlyOnce;
  capability.description = parsed.Describe();
  capability.reason =
      "each epoch is published after its checkpoint in one Kafka transaction with the sink's "
      "progress record, so a replay skips epochs the topic already has";
  return capability;
}

}  // namespace stave::executor
