// The Kafka connectors' options, positions and dead letters, and the source reading a real
// Kafka protocol server: librdkafka's mock cluster, started in this process.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <chrono>
#include <set>
#include <thread>
#include <tuple>

#include "common/sql_error.h"
#include "executor/connectors/dead_letter.h"
#include "executor/connectors/kafka/kafka_sink.h"
#include "executor/connectors/kafka/kafka_source.h"

namespace stave::executor {
namespace {

std::vector<planner::Column> Columns() {
  return {{"id", TypeId::kInt64},
          {"name", TypeId::kVarchar},
          {"_partition", TypeId::kInt32},
          {"_offset", TypeId::kInt64},
          {"_key", TypeId::kVarchar}};
}

std::map<std::string, std::string> Base() {
  return {{"topic", "t"}, {"properties.bootstrap.server", "127.0.0.1:9092"}};
}

std::string SourceError(std::map<std::string, std::string> options,
                        std::vector<planner::Column> columns = Columns(),
                        const std::string& format = "json") {
  try {
    KafkaSourceOptions::Parse(options, columns, format);
  } catch (const SqlError& error) {
    return error.sqlstate() + " " + error.what() + " (" + error.hint() + ")";
  }
  return "ok";
}

TEST(KafkaSourceOptionsTest, SplitsPayloadAndMetadataColumns) {
  KafkaSourceOptions options = KafkaSourceOptions::Parse(Base(), Columns(), "");
  EXPECT_EQ(options.format, "json");
  ASSERT_EQ(options.payload.size(), 2u);
  EXPECT_EQ(options.payload[0].name, "id");
  EXPECT_EQ(options.payload[1].index, 1u);
  ASSERT_EQ(options.metadata.size(), 3u);
  EXPECT_EQ(options.metadata[0].first, 2u);
  EXPECT_EQ(options.metadata[2].second, KafkaSourceOptions::Metadata::kKey);
  EXPECT_EQ(options.properties.settings.at("bootstrap.servers"), "127.0.0.1:9092");
  EXPECT_EQ(options.on_error, OnBadRecord::kDeadLetter);
  EXPECT_EQ(options.startup_mode, KafkaSourceOptions::StartupMode::kEarliest);
}

TEST(KafkaSourceOptionsTest, RefusesWhatItCannotDo) {
  auto with = [](std::string key, std::string value) {
    std::map<std::string, std::string> options = Base();
    options[key] = value;
    return options;
  };
  EXPECT_EQ(SourceError({{"topic", "t"}}).substr(0, 5), "22023");
  EXPECT_NE(SourceError({{"topic", "t"}}).find("bootstrap"), std::string::npos);
  EXPECT_NE(SourceError({{"properties.bootstrap.server", "h:1"}}).find("'topic'"),
            std::string::npos);
  EXPECT_NE(SourceError(with("scan.startup.mode", "newest")).find("scan.startup.mode"),
            std::string::npos);
  EXPECT_NE(SourceError(with("scan.startup.mode", "timestamp")).find("timestamp_millis"),
            std::string::npos);
  EXPECT_NE(SourceError(with("on_error", "ignore")).find("on_error"), std::string::npos);
  EXPECT_NE(SourceError(with("colour", "blue")).find("unknown option 'colour'"), std::string::npos);
  // librdkafka checks its own settings; Stave keeps the offsets, so auto-commit is refused.
  EXPECT_NE(SourceError(with("properties.no.such.setting", "1")).find("no.such.setting"),
            std::string::npos);
  EXPECT_NE(SourceError(with("properties.enable.auto.commit", "true")).find("checkpoints"),
            std::string::npos);
  EXPECT_EQ(SourceError(Base(), {{"_offset", TypeId::kVarchar}}).substr(0, 5), "42P16");
  EXPECT_EQ(SourceError(Base(), {{"_timestamp", TypeId::kTimestampTz}}), "ok");
  EXPECT_EQ(SourceError(Base(), {{"_timestamp", TypeId::kDate}}).substr(0, 5), "42P16");
  EXPECT_EQ(SourceError(Base(), Columns(), "avro").substr(0, 5), "22023");
  EXPECT_EQ(SourceError(with("csv.delimiter", ";"), Columns(), "csv"), "ok");
}

TEST(KafkaSourceOptionsTest, SecretsNeverShowInErrors) {
  std::map<std::string, std::string> options = Base();
  options["properties.sasl.password.typo"] = "hunter2";
  std::string error = SourceError(options);
  EXPECT_NE(error.find("sasl.password.typo"), std::string::npos) << error;
  EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
  options.erase("properties.sasl.password.typo");
  options["properties.socket.timeout.ms"] = "soon";  // Not a secret: the value helps.
  EXPECT_NE(SourceError(options).find("'soon'"), std::string::npos);
}

TEST(KafkaSinkOptionsTest, DefaultsAndRefusals) {
  planner::SinkInput retracting{{{"k", TypeId::kInt64}, {"n", TypeId::kInt64}}, false};
  planner::SinkInput appending{retracting.columns, true};
  std::map<std::string, std::string> options = Base();
  KafkaSinkOptions append = KafkaSinkOptions::Parse(options, appending, "", "my sink");
  EXPECT_FALSE(append.upsert);
  EXPECT_EQ(append.progress_topic, "stave-progress.my_sink");
  EXPECT_EQ(append.transactional_id, "stave.my sink");
  EXPECT_EQ(append.Describe(), "kafka topic 't' at 127.0.0.1:9092, append");
  try {
    KafkaSinkOptions::Parse(options, retracting, "", "s");
    FAIL() << "a retracting input without a key was accepted";
  } catch (const SqlError& error) {
    EXPECT_NE(std::string(error.what()).find("needs 'key'"), std::string::npos);
  }
  options["key"] = "k";
  KafkaSinkOptions upsert = KafkaSinkOptions::Parse(options, retracting, "json", "s");
  EXPECT_TRUE(upsert.upsert);
  EXPECT_EQ(upsert.key, std::vector<size_t>{0});
  EXPECT_EQ(upsert.Describe(), "kafka topic 't' at 127.0.0.1:9092, key (k), upsert");
  options["key"] = "nope";
  EXPECT_THROW(KafkaSinkOptions::Parse(options, retracting, "", "s"), SqlError);
  options["key"] = "k";
  EXPECT_THROW(KafkaSinkOptions::Parse(options, retracting, "csv", "s"), SqlError);
  options["properties.transactional.id"] = "mine";
  EXPECT_THROW(KafkaSinkOptions::Parse(options, retracting, "", "s"), SqlError);
}

TEST(DeadLetterTest, RoundTripsAndShowsBytesSafely) {
  DeadLetter letter{7, 2, 99, "field \"id\": bad", std::string("\x00\xff{", 3)};
  DeadLetter decoded;
  ASSERT_TRUE(DecodeDeadLetter(EncodeDeadLetter(letter), &decoded));
  EXPECT_EQ(decoded.error, letter.error);
  EXPECT_EQ(decoded.raw, letter.raw);
  EXPECT_FALSE(DecodeDeadLetter("ab", &decoded));
  EXPECT_FALSE(DecodeDeadLetter(std::string("\0\0\0\x09x", 5), &decoded));
  EXPECT_EQ(RawBytesAsText("{\"a\": \"é\"}"), "{\"a\": \"é\"}");
  EXPECT_EQ(RawBytesAsText(std::string("\x00\xff{", 3)), "\\x00ff7b");
  EXPECT_EQ(RawBytesAsText("\xc0\xaf"), "\\xc0af");  // An overlong '/': not UTF-8.
}

TEST(KafkaPositionTest, SummarizesAndRefusesGarbage) {
  std::optional<KafkaPositionSummary> summary =
      SummarizeKafkaPosition(R"({"offsets":[[0,12],[1,-2]],"bad_records":3})");
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->offsets, "0:12,1:start");
  EXPECT_EQ(summary->bad_records, 3u);
  EXPECT_FALSE(SummarizeKafkaPosition("not json"));
  KafkaSource source(1, "s", KafkaSourceOptions::Parse(Base(), Columns(), "json"));
  EXPECT_FALSE(source.Seek("{\"offsets\": 5}").ok());
  EXPECT_FALSE(source.Seek("[").ok());
  EXPECT_TRUE(source.Seek("").ok());
}

// A mock cluster in this process: a Kafka protocol server on loopback.
class MockCluster {
 public:
  explicit MockCluster(int partitions) {
    char error[256];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    handle_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof(error));
    cluster_ = rd_kafka_mock_cluster_new(handle_, 1);
    bootstrap_ = rd_kafka_mock_cluster_bootstraps(cluster_);
    rd_kafka_mock_topic_create(cluster_, "t", partitions, 1);
    rd_kafka_conf_t* producer_conf = rd_kafka_conf_new();
    rd_kafka_conf_set(producer_conf, "bootstrap.servers", bootstrap_.c_str(), error, sizeof(error));
    producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, producer_conf, error, sizeof(error));
  }
  ~MockCluster() {
    rd_kafka_destroy(producer_);
    rd_kafka_mock_cluster_destroy(cluster_);
    rd_kafka_destroy(handle_);
  }
  const std::string& bootstrap() const { return bootstrap_; }

  void Produce(int32_t partition, const std::string& key, const std::string& value) {
    rd_kafka_producev(producer_, RD_KAFKA_V_TOPIC("t"), RD_KAFKA_V_PARTITION(partition),
                      RD_KAFKA_V_KEY(key.data(), key.size()),
                      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
  }
  void Flush() { rd_kafka_flush(producer_, 10000); }
  // A record with its own timestamp (milliseconds since 1970), as producers set them.
  void ProduceAt(int64_t timestamp_ms, const std::string& key, const std::string& value) {
    rd_kafka_producev(producer_, RD_KAFKA_V_TOPIC("t"), RD_KAFKA_V_PARTITION(0),
                      RD_KAFKA_V_KEY(key.data(), key.size()),
                      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                      RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                      RD_KAFKA_V_END);
  }

 private:
  rd_kafka_t* handle_;
  rd_kafka_mock_cluster_t* cluster_;
  rd_kafka_t* producer_;
  std::string bootstrap_;
};

// Polls until `rows` rows came and (if `drain`) nothing more is there, or 20 s passed;
// returns the ids and partitions read.
std::vector<std::pair<int64_t, int64_t>> Read(KafkaSource* source, size_t rows, bool drain,
                                              size_t max_rows = 1024) {
  std::vector<std::pair<int64_t, int64_t>> read;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline && (drain || read.size() < rows)) {
    Chunk chunk;
    auto wake = std::chrono::steady_clock::now();
    if (source->Poll(max_rows, &chunk, &wake) != SourceReader::PollStatus::kData) {
      if (read.size() >= rows) break;
      std::this_thread::sleep_until(wake);
      continue;
    }
    for (size_t row = 0; row < chunk.size(); ++row)
      read.emplace_back(chunk.columns[0].ints[row], chunk.columns[2].ints[row]);
  }
  return read;
}

TEST(KafkaSourceTest, ResumesExactlyAfterItsPosition) {
  MockCluster cluster(3);
  for (int i = 0; i < 300; ++i) {
    cluster.Produce(i % 3, std::to_string(i), "{\"id\": " + std::to_string(i) + "}");
  }
  cluster.Produce(1, "bad", "{\"id\": \"seven\"}");
  cluster.Flush();
  std::map<std::string, std::string> options = Base();
  options["properties.bootstrap.server"] = cluster.bootstrap();
  KafkaSourceOptions parsed = KafkaSourceOptions::Parse(options, Columns(), "json");

  std::string position;
  std::set<int64_t> ids;
  std::vector<DeadLetter> letters;
  {
    KafkaSource first(1, "s", parsed);
    // Small polls, so that the first reader stops midway.
    for (auto [id, partition] : Read(&first, 150, false, 10)) {
      EXPECT_EQ(id % 3, partition);
      ids.insert(id);
    }
    position = first.Position();
    letters = first.TakeDeadLetters();
  }
  size_t before = ids.size();
  EXPECT_GE(before, 150u);
  // A second reader from the first one's position reads the rest, and nothing twice.
  KafkaSource second(1, "s", parsed);
  ASSERT_TRUE(second.Seek(position).ok());
  for (auto [id, partition] : Read(&second, 300 - before, true)) {
    EXPECT_TRUE(ids.insert(id).second) << "row " << id << " read twice";
  }
  EXPECT_EQ(ids.size(), 300u);
  for (DeadLetter& letter : second.TakeDeadLetters()) letters.push_back(std::move(letter));
  ASSERT_EQ(letters.size(), 1u);
  EXPECT_EQ(letters[0].stream_id, 1u);
  EXPECT_EQ(letters[0].partition, 1);
  EXPECT_EQ(letters[0].offset, 100);
  EXPECT_EQ(letters[0].raw, "{\"id\": \"seven\"}");
  EXPECT_NE(letters[0].error.find("\"id\""), std::string::npos);
  EXPECT_EQ(second.bad_records(), 1u);  // Counted once, whichever reader met it.
}

// Rows read as (id, _key, _timestamp), until `rows` came and nothing more did for a moment.
std::vector<std::tuple<int64_t, std::string, int64_t>> ReadKeyed(KafkaSource* source, size_t rows) {
  std::vector<std::tuple<int64_t, std::string, int64_t>> read;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    Chunk chunk;
    auto wake = std::chrono::steady_clock::now();
    if (source->Poll(1024, &chunk, &wake) != SourceReader::PollStatus::kData) {
      if (read.size() >= rows) break;
      std::this_thread::sleep_until(wake);
      continue;
    }
    for (size_t row = 0; row < chunk.size(); ++row) {
      read.emplace_back(chunk.columns[0].ints[row], chunk.columns[1].strings[row],
                        chunk.columns[2].ints[row]);
    }
  }
  return read;
}

TEST(KafkaSourceTest, LatestStartsAtTheEndAndRowsCarryKeysAndTimestamps) {
  MockCluster cluster(1);
  for (int64_t i = 0; i < 5; ++i) {
    cluster.ProduceAt(1000 * (i + 1), "k" + std::to_string(i),
                      "{\"id\": " + std::to_string(i) + "}");
  }
  cluster.Flush();
  std::vector<planner::Column> columns = {
      {"id", TypeId::kInt64}, {"_key", TypeId::kVarchar}, {"_timestamp", TypeId::kInt64}};
  auto source_with = [&](std::map<std::string, std::string> extra) {
    std::map<std::string, std::string> options = Base();
    options["properties.bootstrap.server"] = cluster.bootstrap();
    options.merge(extra);
    return std::make_unique<KafkaSource>(1, "s",
                                         KafkaSourceOptions::Parse(options, columns, "json"));
  };
  using Row = std::tuple<int64_t, std::string, int64_t>;

  // earliest (the default): every record, with its key and its producer's timestamp.
  auto earliest = source_with({});
  EXPECT_EQ(
      ReadKeyed(earliest.get(), 5),
      (std::vector<Row>{
          {0, "k0", 1000}, {1, "k1", 2000}, {2, "k2", 3000}, {3, "k3", 4000}, {4, "k4", 5000}}));

  // latest: only what comes after the stream started. (scan.startup.mode = 'timestamp'
  // cannot be shown here: librdkafka 2.0.2's mock cluster answers no offset lookup by time.)
  auto latest = source_with({{"scan.startup.mode", "latest"}});
  EXPECT_TRUE(ReadKeyed(latest.get(), 0).empty());
  cluster.ProduceAt(6000, "k5", "{\"id\": 5}");
  cluster.Flush();
  EXPECT_EQ(ReadKeyed(latest.get(), 1), (std::vector<Row>{{5, "k5", 6000}}));
}

}  // namespace
}  // namespace stave::executor
