#include "executor/connectors/kafka/kafka_source.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <absl/cleanup/cleanup.h>
#include <algorithm>
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>

#include "common/json_integer.h"
#include "common/sql_error.h"
#include "common/temporal.h"
#include "executor/connectors/kafka/kafka_sink.h"

namespace stave::executor {
namespace {

constexpr std::string_view kConnectionException = "08001";
constexpr int kMetadataTimeoutMs = 5000;
constexpr std::chrono::milliseconds kIdleWait{5};
constexpr std::chrono::milliseconds kFirstBackoff{200};
constexpr std::chrono::milliseconds kMaxBackoff{10000};
constexpr std::chrono::seconds kWarningInterval{5};

int64_t ParseInt(const std::string& key, const std::string& value, int64_t min) {
  int64_t number = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || number < min) {
    throw SqlError(
        sqlstate::kInvalidParameterValue,
        fmt::format("Kafka option '{}': '{}' is not an integer of at least {}", key, value, min));
  }
  return number;
}

// Stave keeps the offsets: these settings would let librdkafka keep or reset them instead.
const std::map<std::string, std::string>& ReservedSourceSettings() {
  static const std::map<std::string, std::string> reserved = {
      {"enable.auto.commit", "Stave keeps each partition's offset in its checkpoints."},
      {"enable.auto.offset.store", "Stave keeps each partition's offset in its checkpoints."},
      {"enable.partition.eof", "Stave reads an endless stream."},
      {"auto.offset.reset", "Use scan.startup.mode = 'earliest' | 'latest' | 'timestamp'."},
  };
  return reserved;
}

std::unique_ptr<RdKafka::KafkaConsumer> MakeConsumer(const KafkaSourceOptions& options,
                                                     std::string* error) {
  std::map<std::string, std::string> fixed = {
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"enable.partition.eof", "false"},
      // An offset no longer in the log is reported to the reader (OnOffsetOutOfRange), which
      // counts what was lost, instead of being skipped silently.
      {"auto.offset.reset", "error"},
  };
  // The group is never joined (partitions are assigned, not subscribed), but librdkafka's
  // consumer needs one.
  if (!options.properties.settings.contains("group.id")) fixed["group.id"] = "stave";
  if (!options.properties.settings.contains("client.id")) fixed["client.id"] = "stave";
  // librdkafka 2.0.2 stops fetching once 100,000 records wait in the consumer's queue and
  // looks again up to a second later, so a fast reader drains the queue and idles: let the
  // queue's bytes bound it instead (64 MB for the consumer's one queue).
  if (!options.properties.settings.contains("queued.min.messages"))
    fixed["queued.min.messages"] = "1000000";
  if (!options.properties.settings.contains("queued.max.messages.kbytes"))
    fixed["queued.max.messages.kbytes"] = "65536";
  std::unique_ptr<RdKafka::Conf> conf = options.properties.MakeConf(fixed);
  return std::unique_ptr<RdKafka::KafkaConsumer>(
      RdKafka::KafkaConsumer::create(conf.get(), *error));
}

// The partitions of `topic`, or an error message.
std::variant<std::vector<int32_t>, std::string> TopicPartitions(RdKafka::Handle* handle,
                                                                const std::string& topic,
                                                                bool* missing) {
  std::string error;
  std::unique_ptr<RdKafka::Topic> handle_topic(
      RdKafka::Topic::create(handle, topic, nullptr, error));
  if (!handle_topic) return error;
  RdKafka::Metadata* raw = nullptr;
  RdKafka::ErrorCode code = handle->metadata(false, handle_topic.get(), &raw, kMetadataTimeoutMs);
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (code != RdKafka::ERR_NO_ERROR) return RdKafka::err2str(code);
  for (const RdKafka::TopicMetadata* each : *metadata->topics()) {
    if (each->topic() != topic) continue;
    if (each->err() == RdKafka::ERR_UNKNOWN_TOPIC_OR_PART) {
      *missing = true;
      return fmt::format("the topic \"{}\" does not exist", topic);
    }
    if (each->err() != RdKafka::ERR_NO_ERROR) return RdKafka::err2str(each->err());
    std::vector<int32_t> partitions;
    for (const RdKafka::PartitionMetadata* partition : *each->partitions())
      partitions.push_back(partition->id());
    std::sort(partitions.begin(), partitions.end());
    return partitions;
  }
  return fmt::format("no metadata for the topic \"{}\"", topic);
}

}  // namespace

KafkaSourceOptions KafkaSourceOptions::Parse(const std::map<std::string, std::string>& options,
                                             const std::vector<planner::Column>& columns,
                                             const std::string& format) {
  KafkaSourceOptions result;
  std::map<std::string, std::string> rest = options;
  result.properties = KafkaProperties::Take(&rest, "stream", ReservedSourceSettings());
  result.format = format.empty() ? "json" : format;
  for (const auto& [key, value] : rest) {
    if (key == "topic") {
      result.topic = value;
    } else if (key == "scan.startup.mode") {
      if (value == "earliest") {
        result.startup_mode = StartupMode::kEarliest;
      } else if (value == "latest") {
        result.startup_mode = StartupMode::kLatest;
      } else if (value == "timestamp") {
        result.startup_mode = StartupMode::kTimestamp;
      } else {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("Kafka option 'scan.startup.mode': '{}' is not one of "
                                   "'earliest', 'latest', 'timestamp'",
                                   value));
      }
    } else if (key == "scan.startup.timestamp_millis") {
      result.startup_timestamp_ms = ParseInt(key, value, 0);
    } else if (key == "scan.topic-partition-discovery.interval") {
      result.discovery_interval = std::chrono::milliseconds(ParseInt(key, value, 100));
    } else if (key == "on_error") {
      if (value == "skip") {
        result.on_error = OnBadRecord::kSkip;
      } else if (value == "fail") {
        result.on_error = OnBadRecord::kFail;
      } else if (value == "dead_letter") {
        result.on_error = OnBadRecord::kDeadLetter;
      } else {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("option 'on_error': '{}' is not one of 'skip', 'fail', "
                                   "'dead_letter'",
                                   value));
      }
    } else if (key.starts_with(result.format + ".")) {
      result.format_options[key] = value;
    } else {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("unknown option '{}' for a Kafka stream", key))
          .WithHint(
              "A Kafka stream takes topic, properties.bootstrap.server, properties.<librdkafka "
              "setting>, scan.startup.mode, scan.startup.timestamp_millis, "
              "scan.topic-partition-discovery.interval, on_error and its format's options.");
    }
  }
  if (result.topic.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue, "a Kafka stream needs 'topic'");
  }
  if (result.startup_mode == StartupMode::kTimestamp &&
      !options.contains("scan.startup.timestamp_millis")) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "scan.startup.mode = 'timestamp' needs 'scan.startup.timestamp_millis'");
  }
  static const std::map<std::string, std::pair<Metadata, std::vector<TypeId>>, std::less<>>
      kMetadataColumns = {
          {"_partition", {Metadata::kPartition, {TypeId::kInt32, TypeId::kInt64}}},
          {"_offset", {Metadata::kOffset, {TypeId::kInt64}}},
          {"_timestamp",
           {Metadata::kTimestamp, {TypeId::kInt64, TypeId::kTimestampTz, TypeId::kTimestamp}}},
          {"_key", {Metadata::kKey, {TypeId::kVarchar}}},
      };
  for (size_t i = 0; i < columns.size(); ++i) {
    const planner::Column& column = columns[i];
    result.column_types.push_back(column.type);
    auto metadata = kMetadataColumns.find(column.name);
    if (metadata == kMetadataColumns.end()) {
      result.payload.push_back(PayloadColumn{i, column.name, column.type});
      continue;
    }
    const auto& [kind, types] = metadata->second;
    if (std::find(types.begin(), types.end(), column.type.id) == types.end()) {
      std::vector<std::string> names;
      for (TypeId type : types) names.push_back(DataType(type).Name());
      throw SqlError("42P16", fmt::format("the Kafka metadata column \"{}\" must be of type {}",
                                          column.name, fmt::join(names, " or ")));
    }
    result.metadata.emplace_back(i, kind);
  }
  // Checks the format and its options (and throws as the decoder would at start).
  MakeRecordDecoder(result.format, result.payload, result.format_options);
  return result;
}

KafkaSource::KafkaSource(uint32_t stream_id, std::string stream_name, KafkaSourceOptions options)
    : stream_id_(stream_id),
      stream_name_(std::move(stream_name)),
      options_(std::move(options)),
      decoder_(MakeRecordDecoder(options_.format, options_.payload, options_.format_options)) {}

KafkaSource::~KafkaSource() {
  // librdkafka wants the queue's reference dropped before the consumer closes.
  queue_.reset();
  if (consumer_) consumer_->close();
}

void KafkaSource::Warn(const std::string& message) {
  auto now = Clock::now();
  if (message == last_warning_text_ && now - last_warning_ < kWarningInterval) return;
  last_warning_ = now;
  last_warning_text_ = message;
  spdlog::warn("Kafka stream \"{}\": {}", stream_name_, message);
}

std::optional<std::vector<int32_t>> KafkaSource::FetchPartitions() {
  bool missing = false;
  auto partitions = TopicPartitions(consumer_.get(), options_.topic, &missing);
  if (auto* error = std::get_if<std::string>(&partitions)) {
    Warn(fmt::format("cannot read the metadata of topic \"{}\" from {}: {} (retrying)",
                     options_.topic, options_.properties.bootstrap(), *error));
    return std::nullopt;
  }
  return std::get<std::vector<int32_t>>(std::move(partitions));
}

int64_t KafkaSource::StartOffset(int32_t partition, bool first_start) {
  if (!first_start) return RdKafka::Topic::OFFSET_BEGINNING;
  switch (options_.startup_mode) {
    case KafkaSourceOptions::StartupMode::kEarliest:
      return RdKafka::Topic::OFFSET_BEGINNING;
    case KafkaSourceOptions::StartupMode::kLatest: {
      int64_t low = 0;
      int64_t high = 0;
      RdKafka::ErrorCode code = consumer_->query_watermark_offsets(options_.topic, partition, &low,
                                                                   &high, kMetadataTimeoutMs);
      // Resolved now so that the position pins it: a restart must not skip to a newer end.
      return code == RdKafka::ERR_NO_ERROR ? high : RdKafka::Topic::OFFSET_END;
    }
    case KafkaSourceOptions::StartupMode::kTimestamp: {
      std::vector<RdKafka::TopicPartition*> query = {RdKafka::TopicPartition::create(
          options_.topic, partition, options_.startup_timestamp_ms)};
      RdKafka::ErrorCode code = consumer_->offsetsForTimes(query, kMetadataTimeoutMs);
      int64_t offset = query[0]->offset();
      RdKafka::TopicPartition::destroy(query);
      if (code != RdKafka::ERR_NO_ERROR) return RdKafka::Topic::OFFSET_END;
      return offset >= 0 ? offset : RdKafka::Topic::OFFSET_END;
    }
  }
  return RdKafka::Topic::OFFSET_BEGINNING;
}

void KafkaSource::Assign() {
  std::vector<RdKafka::TopicPartition*> partitions;
  for (const auto& [partition, offset] : offsets_)
    partitions.push_back(RdKafka::TopicPartition::create(options_.topic, partition, offset));
  RdKafka::ErrorCode code = consumer_->assign(partitions);
  RdKafka::TopicPartition::destroy(partitions);
  if (code != RdKafka::ERR_NO_ERROR) Warn("cannot assign partitions: " + RdKafka::err2str(code));
}

bool KafkaSource::Connect() {
  std::string error;
  consumer_ = MakeConsumer(options_, &error);
  if (!consumer_) {
    Warn("cannot create a Kafka consumer: " + error);
    return false;
  }
  std::optional<std::vector<int32_t>> partitions = FetchPartitions();
  if (!partitions) {
    consumer_->close();
    consumer_.reset();
    return false;
  }
  // A stream that has never committed a position starts each partition by its startup mode.
  bool first_start = offsets_.empty();
  for (int32_t partition : *partitions) {
    if (!offsets_.contains(partition)) offsets_[partition] = StartOffset(partition, first_start);
  }
  Assign();
  queue_.reset(rd_kafka_queue_get_consumer(consumer_->c_ptr()));
  spdlog::info("Kafka stream \"{}\" reads {} partition(s) of topic \"{}\" from {}", stream_name_,
               offsets_.size(), options_.topic, options_.properties.bootstrap());
  next_discovery_ = Clock::now() + options_.discovery_interval;
  return true;
}

void KafkaSource::DiscoverPartitions() {
  next_discovery_ = Clock::now() + options_.discovery_interval;
  std::optional<std::vector<int32_t>> partitions = FetchPartitions();
  if (!partitions) return;
  bool added = false;
  for (int32_t partition : *partitions) {
    if (offsets_.contains(partition)) continue;
    offsets_[partition] = RdKafka::Topic::OFFSET_BEGINNING;
    added = true;
    spdlog::info("Kafka stream \"{}\": topic \"{}\" gained partition {}", stream_name_,
                 options_.topic, partition);
  }
  // Reassigning at the offsets still to read drops what librdkafka prefetched and fetches
  // it again: correct, and rare.
  if (added) Assign();
}

void KafkaSource::OnOffsetOutOfRange(int32_t partition) {
  auto known = offsets_.find(partition);
  if (known == offsets_.end()) return;
  int64_t low = 0;
  int64_t high = 0;
  RdKafka::ErrorCode code = consumer_->query_watermark_offsets(options_.topic, partition, &low,
                                                               &high, kMetadataTimeoutMs);
  if (code != RdKafka::ERR_NO_ERROR) {
    // Assigning again makes the next fetch fail the same way, and this runs again.
    Warn(
        fmt::format("partition {}: offset {} is not in the log, and its first offset cannot be "
                    "read: {} (retrying)",
                    partition, known->second, RdKafka::err2str(code)));
    Assign();
    return;
  }
  if (known->second >= 0 && known->second < low) {
    uint64_t lost = static_cast<uint64_t>(low - known->second);
    lost_records_ += lost;
    spdlog::error(
        "Kafka stream \"{}\": partition {}: records {} to {} were deleted from the log (by its "
        "retention) before they were read; {} records lost, {} so far "
        "(stave_catalog.sources.lost_records). Reading on from offset {}.",
        stream_name_, partition, known->second, low - 1, lost, lost_records_, low);
  } else {
    spdlog::error(
        "Kafka stream \"{}\": partition {}: offset {} is beyond the log's end ({}): the topic "
        "was probably deleted and created again. Reading it from its first offset, {}.",
        stream_name_, partition, known->second, high, low);
  }
  known->second = low;
  Assign();
}

std::vector<int32_t> KafkaSource::Splits() const {
  std::vector<int32_t> partitions;
  for (const auto& [partition, offset] : offsets_) partitions.push_back(partition);
  return partitions;
}

SourceReader::PollStatus KafkaSource::Poll(size_t max_rows, Chunk* chunk,
                                           Clock::time_point* wake_at) {
  auto now = Clock::now();
  if (!consumer_) {
    if (now < next_connect_ || !Connect()) {
      if (now >= next_connect_) {
        backoff_ = std::min(kMaxBackoff, std::max(kFirstBackoff, backoff_ * 2));
        next_connect_ = now + backoff_;
      }
      *wake_at = next_connect_;
      return PollStatus::kIdle;
    }
    backoff_ = std::chrono::milliseconds(0);
  }
  if (now >= next_discovery_) DiscoverPartitions();
  *chunk = Chunk::WithTypes(options_.column_types);
  row_partitions_.clear();
  // Records are taken from librdkafka's queue many at a time (one lock, no wrapper object
  // each). Every record taken is handled, even past an error, as it is no longer queued,
  // and destroyed, even when a bad record throws: the consumer cannot close while one lives.
  std::array<rd_kafka_message_t*, 256> batch;
  bool failed = false;
  while (!failed && chunk->size() < max_rows) {
    size_t wanted = std::min(batch.size(), max_rows - chunk->size());
    ssize_t taken = rd_kafka_consume_batch_queue(queue_.get(), 0, batch.data(), wanted);
    if (taken <= 0) break;
    size_t next = 0;
    absl::Cleanup destroy_rest = [&] {
      for (; next < static_cast<size_t>(taken); ++next) rd_kafka_message_destroy(batch[next]);
    };
    for (; next < static_cast<size_t>(taken); ++next) {
      const rd_kafka_message_t& message = *batch[next];
      if (message.err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        Handle(message, chunk);
      } else if (message.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET) {
        OnOffsetOutOfRange(message.partition);
        failed = true;
      } else {
        // librdkafka retries on its own (brokers away, leaders moving); say so, and go on.
        Warn(rd_kafka_message_errstr(&message));
        failed = true;
      }
      rd_kafka_message_destroy(batch[next]);
    }
  }
  if (now >= next_lag_update_) {
    UpdateLag();
    next_lag_update_ = now + std::chrono::milliseconds(200);
  }
  if (chunk->empty()) {
    *wake_at = Clock::now() + kIdleWait;
    return PollStatus::kIdle;
  }
  return PollStatus::kData;
}

void KafkaSource::UpdateLag() {
  std::vector<std::pair<int32_t, int64_t>> lag;
  for (const auto& [partition, offset] : offsets_) {
    int64_t low = 0;
    int64_t high = 0;
    if (consumer_->get_watermark_offsets(options_.topic, partition, &low, &high) !=
            RdKafka::ERR_NO_ERROR ||
        high < 0) {
      continue;  // Nothing fetched from it yet.
    }
    // Before its first record a partition read from its beginning is behind by all it holds.
    int64_t next = offset >= 0 ? offset : std::max<int64_t>(low, 0);
    lag.emplace_back(partition, std::max<int64_t>(0, high - next));
  }
  std::lock_guard lock(lag_mutex_);
  lag_ = std::move(lag);
}

std::vector<std::pair<int32_t, int64_t>> KafkaSource::Lag() const {
  std::lock_guard lock(lag_mutex_);
  return lag_;
}

void KafkaSource::Handle(const rd_kafka_message_t& message, Chunk* chunk) {
  int32_t partition = message.partition;
  int64_t offset = message.offset;
  auto known = offsets_.find(partition);
  if (known == offsets_.end()) return;  // Not assigned (cannot happen; be safe).
  if (known->second >= 0 && offset < known->second) return;  // Already read.
  payload_bytes_ += message.len;
  std::string error;
  if (message.payload == nullptr) {
    error = "the record has no value (a tombstone)";
  } else {
    std::string_view payload(static_cast<const char*>(message.payload), message.len);
    if (decoder_->Decode(payload, chunk, &error)) {
      for (const auto& [column, kind] : options_.metadata) {
        Column& target = chunk->columns[column];
        switch (kind) {
          case KafkaSourceOptions::Metadata::kPartition:
            target.AppendInt(partition);
            break;
          case KafkaSourceOptions::Metadata::kOffset:
            target.AppendInt(offset);
            break;
          case KafkaSourceOptions::Metadata::kTimestamp: {
            rd_kafka_timestamp_type_t type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
            int64_t timestamp = rd_kafka_message_timestamp(&message, &type);
            if (type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE) {
              target.AppendNull();
            } else if (target.type.IsTimestamp()) {
              // Kafka's milliseconds since 1970 as Stave's microseconds since 2000; an
              // instant out of range (a broken producer's clock) is NULL, not garbage.
              int64_t micros = 0;
              if (__builtin_mul_overflow(timestamp, int64_t{1000}, &micros) ||
                  __builtin_add_overflow(micros, temporal::kUnixEpochDays * temporal::kMicrosPerDay,
                                         &micros)) {
                target.AppendNull();
              } else {
                target.AppendInt(micros);
              }
            } else {
              target.AppendInt(timestamp);
            }
            break;
          }
          case KafkaSourceOptions::Metadata::kKey:
            if (message.key == nullptr) {
              target.AppendNull();
            } else {
              target.AppendString(
                  std::string(static_cast<const char*>(message.key), message.key_len));
            }
            break;
        }
      }
      chunk->ops.push_back(RowOp::kInsert);
      row_partitions_.push_back(partition);
      known->second = offset + 1;
      return;
    }
  }
  OnBadRecord(message, std::move(error));
  known->second = offset + 1;
}

void KafkaSource::OnBadRecord(const rd_kafka_message_t& message, std::string error) {
  if (options_.on_error == OnBadRecord::kFail) {
    throw SqlError(sqlstate::kInvalidTextRepresentation,
                   fmt::format("Kafka stream \"{}\": bad record at partition {} offset {}: {}",
                               stream_name_, message.partition, message.offset, error))
        .WithHint(
            "The stream says on_error = 'fail'. Fix the record, or recreate the stream "
            "with on_error = 'dead_letter' or 'skip' to go on past bad records.");
  }
  ++bad_records_;
  Warn(fmt::format("bad record at partition {} offset {}: {} ({} so far{})", message.partition,
                   message.offset, error, bad_records_,
                   options_.on_error == OnBadRecord::kDeadLetter
                       ? ", kept in stave_catalog.bad_records"
                       : ", skipped"));
  if (options_.on_error != OnBadRecord::kDeadLetter) return;
  DeadLetter letter;
  letter.stream_id = stream_id_;
  letter.partition = message.partition;
  letter.offset = message.offset;
  letter.error = std::move(error);
  if (message.payload != nullptr)
    letter.raw.assign(static_cast<const char*>(message.payload), message.len);
  dead_letters_.push_back(std::move(letter));
}

std::vector<DeadLetter> KafkaSource::TakeDeadLetters() {
  std::vector<DeadLetter> taken;
  taken.swap(dead_letters_);
  return taken;
}

std::string KafkaSource::Position() const {
  nlohmann::json offsets = nlohmann::json::array();
  for (const auto& [partition, offset] : offsets_) offsets.push_back({partition, offset});
  nlohmann::json position = {{"offsets", offsets}, {"bad_records", bad_records_}};
  if (lost_records_ > 0) position["lost_records"] = lost_records_;
  return position.dump();
}

Status KafkaSource::Seek(std::string_view position) {
  offsets_.clear();
  bad_records_ = 0;
  lost_records_ = 0;
  if (position.empty()) return Status::Ok();
  nlohmann::json parsed = nlohmann::json::parse(position, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("offsets")) {
    return Status::Corruption("malformed Kafka position");
  }
  try {
    for (const auto& pair : parsed.at("offsets"))
      offsets_[JsonInteger<int32_t>(pair.at(0))] = JsonInteger<int64_t>(pair.at(1));
    bad_records_ = JsonIntegerOr(parsed, "bad_records", uint64_t{0});
    lost_records_ = JsonIntegerOr(parsed, "lost_records", uint64_t{0});
  } catch (const nlohmann::json::exception& error) {
    return Status::Corruption(std::string("malformed Kafka position: ") + error.what());
  }
  return Status::Ok();
}

std::optional<KafkaPositionSummary> SummarizeKafkaPosition(std::string_view position) {
  nlohmann::json parsed = nlohmann::json::parse(position, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  KafkaPositionSummary summary;
  try {
    std::vector<std::string> parts;
    for (const auto& pair : parsed.at("offsets")) {
      int64_t offset = JsonInteger<int64_t>(pair.at(1));
      parts.push_back(fmt::format("{}:{}", JsonInteger<int32_t>(pair.at(0)),
                                  offset >= 0 ? std::to_string(offset) : std::string("start")));
    }
    summary.offsets = fmt::format("{}", fmt::join(parts, ","));
    summary.bad_records = JsonIntegerOr(parsed, "bad_records", uint64_t{0});
    summary.lost_records = JsonIntegerOr(parsed, "lost_records", uint64_t{0});
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return summary;
}

void ProbeKafkaSource(const KafkaSourceOptions& options) {
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer = MakeConsumer(options, &error);
  if (!consumer) {
    throw SqlError(kConnectionException, "cannot create a Kafka consumer: " + error);
  }
  bool missing = false;
  auto partitions = TopicPartitions(consumer.get(), options.topic, &missing);
  consumer->close();
  if (auto* failure = std::get_if<std::string>(&partitions)) {
    if (missing) {
      throw SqlError(sqlstate::kUndefinedObject,
                     fmt::format("Kafka at {}: {}", options.properties.bootstrap(), *failure))
          .WithHint("Create the topic first.");
    }
    throw SqlError(kConnectionException, fmt::format("cannot reach Kafka at {}: {}",
                                                     options.properties.bootstrap(), *failure));
  }
}

planner::ConnectorSpec KafkaConnectorSpec() {
  planner::ConnectorSpec spec;
  spec.name = "kafka";
  spec.replayable_source = true;
  spec.source_reason =
      "Kafka keeps the records, and the checkpoint keeps each partition's offset, so a "
      "restart reads again exactly what followed the last checkpoint";
  spec.validate_source = [](const std::map<std::string, std::string>& options,
                            const std::vector<planner::Column>& columns,
                            const std::string& format) {
    KafkaSourceOptions::Parse(options, columns, format);
  };
  spec.probe_source = [](const std::map<std::string, std::string>& options,
                         const std::vector<planner::Column>& columns, const std::string& format) {
    ProbeKafkaSource(KafkaSourceOptions::Parse(options, columns, format));
  };
  spec.validate_sink = ValidateKafkaSink;
  return spec;
}

}  // namespace stave::executor
