// kafka_pipeline_bench: Kafka -> stateless view -> Kafka sink, against plain librdkafka copy
// loops on the same topic, in the same process and run. See bench/README.md.
//
// Everything talks to librdkafka's mock cluster, started in this process (no Kafka broker is
// installable on our build machines). Each repeat fills a fresh input topic, then runs, in
// an order that rotates from repeat to repeat:
//   A. a copy loop: a consumer and a plain producer copying every record to a fresh topic;
//   B. the same with a transactional producer committing about once a second, which is
//      what Stave's sink does (one transaction per 1 s epoch);
//   Stave: CREATE STREAM over the topic and CREATE SINK of a stateless SELECT into a fresh
//      topic, timed from CREATE SINK until the sink has committed every record to Kafka.
// The mock broker runs on one thread of this process, so its CPU time is in the process's;
// the report shows it apart as well. The mock's and librdkafka's limits that shape the
// setup (5 MB per partition, the consumer's prefetch) are explained where they apply.

#include <librdkafka/rdkafka.h>
// rdkafka_mock.h must come after rdkafka.h.
#include <librdkafka/rdkafka_mock.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench/harness.h"
#include "executor/connectors/connectors.h"
#include "executor/database.h"
#include "planner/connector_spec.h"

namespace stave::bench {
namespace {

namespace fs = std::filesystem;
using executor::Database;
using executor::QueryResult;

constexpr char kProgram[] = "kafka_pipeline_bench";

struct Config {
  uint64_t records = 1'000'000;
  // The mock keeps at most 5 MB per partition and drops the oldest records beyond that; 1M
  // records of about 75 bytes each (value, key, record overhead) need 16 or more.
  int partitions = 32;
  int brokers = 1;
  int repeats = 3;
  bool markdown = false;
  bool threads = false;
  // The copy loops copy values only, as Stave's sink writes them (keyless records, which
  // librdkafka's sticky partitioner sends in long runs to one partition at a time).
  bool keyless_copies = false;
};

// ---------------------------------------------------------------------------------------
// Measuring

/// Each thread of this process: its name (`comm`, with trailing digits dropped, so that
/// "rdk:broker1" and "rdk:broker2" count together) and its time on a CPU in seconds.
std::map<int, std::pair<std::string, double>> ThreadTimes() {
  std::map<int, std::pair<std::string, double>> threads;
  for (const auto& entry : fs::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    while (!name.empty() && ((name.back() >= '0' && name.back() <= '9') || name.back() == '#'))
      name.pop_back();
    // The first field of schedstat is the thread's time on a CPU, in nanoseconds.
    std::ifstream schedstat(entry.path() / "schedstat");
    double nanoseconds = 0;
    if (!(schedstat >> nanoseconds)) continue;  // The thread ended meanwhile.
    int tid = 0;
    std::string file = entry.path().filename().string();
    std::from_chars(file.data(), file.data() + file.size(), tid);
    threads[tid] = {name, nanoseconds * 1e-9};
  }
  return threads;
}

/// CPU seconds per thread name between two ThreadTimes. A thread that ended in between is
/// missing (its time is in the process's total only).
std::map<std::string, double> ThreadCpuBetween(
    const std::map<int, std::pair<std::string, double>>& before,
    const std::map<int, std::pair<std::string, double>>& after) {
  std::map<std::string, double> by_name;
  for (const auto& [tid, thread] : after) {
    auto earlier = before.find(tid);
    double start = earlier != before.end() && earlier->second.first == thread.first
                       ? earlier->second.second
                       : 0;
    by_name[thread.first] += thread.second - start;
  }
  return by_name;
}

constexpr char kMockThread[] = "rdk:mock";

/// Wall time, process CPU time, and CPU time by thread (the mock broker's apart) of one
/// interval.
struct ScenarioSpan : Span {
  double broker_cpu = 0;
  std::map<std::string, double> thread_cpu;  // CPU seconds per thread name.
  // Stave only: seconds until CREATE SINK returned, until the stream had read every record,
  // and until a checkpoint held every output row (the sink publishes an epoch once its
  // checkpoint commits).
  double created = std::nan("");
  double read = std::nan("");
  double checkpointed = std::nan("");
};

/// A Stopwatch that also reads every thread's CPU clock, after the other two.
class ScenarioStopwatch {
 public:
  ScenarioStopwatch() : threads_(ThreadTimes()) {}
  ScenarioSpan Elapsed() const {
    ScenarioSpan span;
    static_cast<Span&>(span) = watch_.Elapsed();
    span.thread_cpu = ThreadCpuBetween(threads_, ThreadTimes());
    span.broker_cpu = span.thread_cpu[kMockThread];
    return span;
  }

 private:
  Stopwatch watch_;  // Declared first: started before the threads' clocks are read.
  std::map<int, std::pair<std::string, double>> threads_;
};

// ---------------------------------------------------------------------------------------
// The records

/// Record i (ids 1..N): {"id":…,"k":…,"v":…,"name":"user-…"}, about 60 bytes; its key is k.
struct Record {
  int64_t id;
  int64_t k;
  int64_t v;
  std::string name;

  explicit Record(uint64_t i)
      : id(static_cast<int64_t>(i) + 1),
        k(static_cast<int64_t>(SplitMix64(i) % 1000)),
        v(static_cast<int64_t>((SplitMix64(i) >> 16) % 1'000'000'000)),
        name(fmt::format("user-{:010}", id)) {}

  std::string Json() const {
    return fmt::format(R"({{"id":{},"k":{},"v":{},"name":"{}"}})", id, k, v, name);
  }
};

// ---------------------------------------------------------------------------------------
// librdkafka

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* handle) const { rd_kafka_destroy(handle); }
};
using RdKafkaHandle = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

/// Delivery reports of a producer: how many records the brokers acknowledged, and failed.
struct Deliveries {
  uint64_t acknowledged = 0;
  uint64_t failed = 0;
  std::string first_error;
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto* deliveries = static_cast<Deliveries*>(opaque);
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++deliveries->acknowledged;
  } else if (deliveries->failed++ == 0) {
    deliveries->first_error = rd_kafka_err2str(message->err);
  }
}

/// A client of `type` with `settings`; a producer's delivery reports go to `deliveries`.
RdKafkaHandle NewClient(rd_kafka_type_t type, const std::map<std::string, std::string>& settings,
                        Deliveries* deliveries = nullptr) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [key, value] : settings) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(fmt::format("librdkafka setting {}: {}", key, error));
    }
  }
  if (deliveries) {
    rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
    rd_kafka_conf_set_opaque(conf, deliveries);
  }
  rd_kafka_t* handle = rd_kafka_new(type, conf, error, sizeof error);  // Owns conf if it works.
  if (!handle) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("cannot create a Kafka client: ") + error);
  }
  return RdKafkaHandle(handle);
}

/// Throws if a transactional call failed.
void Check(rd_kafka_error_t* error, std::string_view what) {
  if (!error) return;
  std::string text = rd_kafka_error_string(error);
  rd_kafka_error_destroy(error);
  throw std::runtime_error(fmt::format("{}: {}", what, text));
}

/// Produces a copy of key and value, waiting while the local queue is full.
void Produce(rd_kafka_t* producer, const std::string& topic, const void* key, size_t key_size,
             const void* value, size_t value_size) {
  while (true) {
    rd_kafka_resp_err_t code =
        rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(key, key_size),
                          RD_KAFKA_V_VALUE(const_cast<void*>(value), value_size),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (code == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    if (code != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      throw std::runtime_error(fmt::format("producing to {}: {}", topic, rd_kafka_err2str(code)));
    }
    rd_kafka_poll(producer, 10);  // Let deliveries drain the queue.
  }
}

/// Flushes and throws unless every one of `expected` records was acknowledged.
void FlushAll(rd_kafka_t* producer, const Deliveries& deliveries, uint64_t expected,
              std::string_view what) {
  rd_kafka_resp_err_t code = rd_kafka_flush(producer, 120'000);
  if (code != RD_KAFKA_RESP_ERR_NO_ERROR || deliveries.failed > 0 ||
      deliveries.acknowledged != expected) {
    throw std::runtime_error(
        fmt::format("{}: {} of {} records acknowledged, {} failed ({}){}", what,
                    deliveries.acknowledged, expected, deliveries.failed, deliveries.first_error,
                    code ? std::string(", flush: ") + rd_kafka_err2str(code) : ""));
  }
}

/// librdkafka's mock cluster in this process, and a client to ask it for watermarks.
class MockCluster {
 public:
  MockCluster(int brokers, int partitions) : partitions_(partitions) {
    // The owning handle connects to nothing; quiet its "no bootstrap.servers" notice.
    owner_ = NewClient(RD_KAFKA_PRODUCER, {{"log_level", "4"}});
    cluster_ = rd_kafka_mock_cluster_new(owner_.get(), brokers);
    if (!cluster_) throw std::runtime_error("cannot start librdkafka's mock cluster");
    bootstrap_ = rd_kafka_mock_cluster_bootstraps(cluster_);
    watermarks_ = NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap_}});
  }
  ~MockCluster() {
    watermarks_.reset();
    rd_kafka_mock_cluster_destroy(cluster_);
  }
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  int partitions() const { return partitions_; }

  /// The mock has no CreateTopics API and would auto-create a topic a client asks about
  /// with 4 partitions, so every topic is made here first.
  void CreateTopic(const std::string& name, int partitions) {
    rd_kafka_resp_err_t code = rd_kafka_mock_topic_create(cluster_, name.c_str(), partitions, 1);
    if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error(fmt::format("creating topic {}: {}", name, rd_kafka_err2str(code)));
    }
  }
  void CreateTopic(const std::string& name) { CreateTopic(name, partitions_); }

  /// Each partition's low and high watermark. The mock keeps at most 5 MB (or 100,000
  /// batches) per partition and drops the oldest batches beyond that, which moves the low
  /// watermark; the high watermark counts every record ever appended.
  std::vector<std::pair<int64_t, int64_t>> Watermarks(const std::string& topic) {
    std::vector<std::pair<int64_t, int64_t>> watermarks;
    for (int32_t partition = 0; partition < partitions_; ++partition) {
      int64_t low = 0;
      int64_t high = 0;
      rd_kafka_resp_err_t code = rd_kafka_query_watermark_offsets(watermarks_.get(), topic.c_str(),
                                                                  partition, &low, &high, 10'000);
      if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
        throw std::runtime_error(
            fmt::format("watermarks of {} [{}]: {}", topic, partition, rd_kafka_err2str(code)));
      }
      watermarks.emplace_back(low, high);
    }
    return watermarks;
  }

  /// The records ever written to `topic`: the sum of its high watermarks.
  int64_t Records(const std::string& topic) {
    int64_t total = 0;
    for (auto [low, high] : Watermarks(topic)) total += high;
    return total;
  }

 private:
  int partitions_;
  RdKafkaHandle owner_;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  RdKafkaHandle watermarks_;
  std::string bootstrap_;
};

/// Writes records 0..N-1 to `topic` with a plain producer, keyed by k, and waits for every
/// acknowledgement. Returns the bytes of the values.
uint64_t FillInput(MockCluster* cluster, const std::string& topic, uint64_t records) {
  Deliveries deliveries;
  RdKafkaHandle producer =
      NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", cluster->bootstrap()}}, &deliveries);
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < records; ++i) {
    Record record(i);
    std::string key = std::to_string(record.k);
    std::string value = record.Json();
    bytes += value.size();
    Produce(producer.get(), topic, key.data(), key.size(), value.data(), value.size());
    rd_kafka_poll(producer.get(), 0);
  }
  FlushAll(producer.get(), deliveries, records, "filling " + topic);
  int64_t held = 0;
  for (auto [low, high] : cluster->Watermarks(topic)) {
    // Every scenario reads the input from its first record: none may have been dropped.
    if (low != 0) {
      throw std::runtime_error(fmt::format(
          "the mock cluster dropped the oldest records of {} (it keeps at most 5 MB per "
          "partition): use more --partitions or fewer --records",
          topic));
    }
    held += high;
  }
  if (held != static_cast<int64_t>(records))
    throw std::runtime_error(fmt::format("{} holds {} records, not {}", topic, held, records));
  return bytes;
}

/// The prefetch settings of every consumer here, Stave's included. librdkafka 2.0.2 stops
/// fetching once queued.min.messages (100,000 by default) records wait in the consumer's
/// queue, and looks again only up to a second later: with the defaults each reader drains
/// its queue and then idles for most of that second, and a run measures those pauses, not
/// the client's cost. So the queue may hold the whole input, bounded by 64 MB: the defaults
/// Stave's source sets for itself too.
const std::map<std::string, std::string> kConsumerPrefetch = {
    {"queued.min.messages", "1000000"},
    {"queued.max.messages.kbytes", "65536"},
};

/// A consumer assigned every partition of `topic` from its beginning; it joins no group and
/// commits nothing, as Stave's source.
RdKafkaHandle AssignedConsumer(const MockCluster& cluster, const std::string& topic,
                               const std::string& group) {
  std::map<std::string, std::string> settings = kConsumerPrefetch;
  settings.insert({{"bootstrap.servers", cluster.bootstrap()},
                   {"group.id", group},
                   {"enable.auto.commit", "false"},
                   {"enable.partition.eof", "false"}});
  RdKafkaHandle consumer = NewClient(RD_KAFKA_CONSUMER, settings);
  rd_kafka_topic_partition_list_t* partitions =
      rd_kafka_topic_partition_list_new(cluster.partitions());
  for (int32_t partition = 0; partition < cluster.partitions(); ++partition) {
    rd_kafka_topic_partition_list_add(partitions, topic.c_str(), partition)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_resp_err_t code = rd_kafka_assign(consumer.get(), partitions);
  rd_kafka_topic_partition_list_destroy(partitions);
  if (code != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw std::runtime_error(fmt::format("assigning {}: {}", topic, rd_kafka_err2str(code)));
  return consumer;
}

// ---------------------------------------------------------------------------------------
// Baselines A and B: consume -> produce with plain librdkafka

/// Copies every record of `in` (key and value; only the value with `keyless`) to `out`.
/// With `transactional`, the producer commits a transaction about once a second, as Stave's
/// sink commits one per 1 s epoch. The clock includes creating the clients, as Stave's does.
ScenarioSpan CopyLoop(MockCluster* cluster, const std::string& in, const std::string& out,
                      uint64_t records, bool transactional, bool keyless) {
  ScenarioStopwatch watch;
  Deliveries deliveries;
  std::map<std::string, std::string> settings = {{"bootstrap.servers", cluster->bootstrap()}};
  if (transactional) settings["transactional.id"] = "bench-copy." + out;
  RdKafkaHandle producer = NewClient(RD_KAFKA_PRODUCER, settings, &deliveries);
  RdKafkaHandle consumer = AssignedConsumer(*cluster, in, "bench-copy");
  const auto commit_every = std::chrono::seconds(1);
  auto transaction_start = Clock::now();
  if (transactional) {
    Check(rd_kafka_init_transactions(producer.get(), 30'000), "init_transactions");
    Check(rd_kafka_begin_transaction(producer.get()), "begin_transaction");
  }
  uint64_t copied = 0;
  while (copied < records) {
    rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer.get(), 100);
    if (!message) continue;
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::string error = rd_kafka_message_errstr(message);
      rd_kafka_message_destroy(message);
      throw std::runtime_error(fmt::format("consuming {}: {}", in, error));
    }
    Produce(producer.get(), out, keyless ? nullptr : message->key, keyless ? 0 : message->key_len,
            message->payload, message->len);
    rd_kafka_message_destroy(message);
    rd_kafka_poll(producer.get(), 0);
    ++copied;
    if (transactional && Clock::now() - transaction_start >= commit_every) {
      Check(rd_kafka_commit_transaction(producer.get(), 60'000), "commit_transaction");
      Check(rd_kafka_begin_transaction(producer.get()), "begin_transaction");
      transaction_start = Clock::now();
    }
  }
  if (transactional)
    Check(rd_kafka_commit_transaction(producer.get(), 60'000), "commit_transaction");
  FlushAll(producer.get(), deliveries, records, "copying to " + out);
  rd_kafka_consumer_close(consumer.get());
  ScenarioSpan span = watch.Elapsed();
  int64_t held = cluster->Records(out);
  if (held != static_cast<int64_t>(records))
    throw std::runtime_error(fmt::format("{} holds {} records, not {}", out, held, records));
  return span;
}

// ---------------------------------------------------------------------------------------
// Stave: CREATE STREAM + CREATE SINK

/// The integer after `"name":` in a compact JSON object, or nothing.
std::optional<int64_t> JsonInt(std::string_view json, std::string_view name) {
  std::string needle = fmt::format("\"{}\":", name);
  size_t at = json.find(needle);
  if (at == std::string_view::npos) return std::nullopt;
  const char* begin = json.data() + at + needle.size();
  int64_t value = 0;
  auto [end, error] = std::from_chars(begin, json.data() + json.size(), value);
  if (error != std::errc()) return std::nullopt;
  return value;
}

/// Throws unless `topic` holds what the sink's SELECT makes of records 0..N-1. The mock
/// keeps at most 5 MB per partition, and Stave's sink spreads its keyless records unevenly
/// (librdkafka's sticky partitioner), so the oldest records of a busy partition may be gone:
/// the count is checked on every record ever written (the high watermarks), the contents on
/// every record still held, each id at most once. Returns how many were checked so.
uint64_t VerifySinkOutput(MockCluster* cluster, const std::string& topic, uint64_t records) {
  std::vector<std::pair<int64_t, int64_t>> watermarks = cluster->Watermarks(topic);
  int64_t written = 0;
  int64_t held = 0;
  for (auto [low, high] : watermarks) {
    written += high;
    held += high - low;
  }
  if (written != static_cast<int64_t>(records))
    throw std::runtime_error(fmt::format("{} holds {} records, not {}", topic, written, records));
  RdKafkaHandle consumer = AssignedConsumer(*cluster, topic, "bench-verify");
  std::vector<bool> seen(records, false);
  int64_t read = 0;
  auto deadline = Clock::now() + std::chrono::seconds(120);
  while (read < held) {
    if (Clock::now() > deadline) {
      throw std::runtime_error(
          fmt::format("verifying {}: only {} of {} records read", topic, read, held));
    }
    rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer.get(), 100);
    if (!message) continue;
    std::string_view json(static_cast<const char*>(message->payload), message->len);
    bool ok = message->err == RD_KAFKA_RESP_ERR_NO_ERROR;
    std::optional<int64_t> id = ok ? JsonInt(json, "id") : std::nullopt;
    if (id && *id >= 1 && static_cast<uint64_t>(*id) <= records &&
        !seen[static_cast<size_t>(*id - 1)]) {
      Record expected(static_cast<uint64_t>(*id - 1));
      ok = JsonInt(json, "k") == expected.k && JsonInt(json, "v2") == 2 * expected.v &&
           json.find(fmt::format(R"("name":"{}")", expected.name)) != std::string_view::npos;
      seen[static_cast<size_t>(*id - 1)] = true;
    } else {
      ok = false;  // No id, one out of range, or one seen before.
    }
    std::string shown(json.substr(0, 200));
    rd_kafka_message_destroy(message);
    if (!ok) throw std::runtime_error(fmt::format("{}: unexpected record {}", topic, shown));
    ++read;
  }
  rd_kafka_consumer_close(consumer.get());
  return static_cast<uint64_t>(read);
}

/// Runs the pipeline from `in` to `out` in a fresh database. The clock runs from just
/// before CREATE SINK until the sink's Kafka transactions hold all N records; the output
/// topic is checked after.
ScenarioSpan StavePipeline(MockCluster* cluster, const std::string& in, const std::string& out,
                           uint64_t records) {
  DataDirectory directory("stave-kafka-bench");
  stave::planner::ConnectorRegistry connectors;
  stave::executor::RegisterBuiltinConnectors(&connectors);
  stave::executor::DatabaseOptions options;
  options.data_directory = directory.path().string();
  options.checkpoint_interval = std::chrono::milliseconds(1000);
  std::unique_ptr<Database> database = Database::Open(options, &connectors);
  std::string prefetch;
  for (const auto& [key, value] : kConsumerPrefetch)
    prefetch += fmt::format(", properties.{}='{}'", key, value);
  ExecuteSql(
      database.get(),
      fmt::format("CREATE STREAM s (id BIGINT, k BIGINT, v BIGINT, name VARCHAR) WITH "
                  "(connector='kafka', topic='{}', properties.bootstrap.server='{}'{}) FORMAT JSON",
                  in, cluster->bootstrap(), prefetch));
  // at_least_once: the mock shows aborted transactions to read_committed readers, so
  // CREATE SINK refuses exactly_once against it. at_least_once runs the very same
  // transactional protocol (one transaction per epoch, with its progress record).
  std::string create_sink = fmt::format(
      "CREATE SINK o WITH (connector='kafka', topic='{}', properties.bootstrap.server='{}', "
      "delivery='at_least_once') AS SELECT id, k, v * 2 AS v2, name FROM s",
      out, cluster->bootstrap());

  auto* rows_read = database->metrics()->Counter("stave_stream_rows_read_total", {{"stream", "s"}});
  auto* rows_out = database->metrics()->Counter("stave_sink_rows_out_total", {{"sink", "o"}});
  // Rows in Kafka transactions the sink has committed: the clock stops when all are, and
  // the topic's watermarks are checked after, off the clock (asking costs a round trip per
  // partition, which would load the process being measured).
  auto* rows_delivered =
      database->metrics()->Counter("stave_sink_rows_delivered_total", {{"sink", "o"}});
  ScenarioStopwatch watch;
  auto start = Clock::now();
  ExecuteSql(database.get(), create_sink);
  double created = Seconds(Clock::now() - start);
  double read = std::nan("");
  double checkpointed = std::nan("");
  uint64_t progress = 0;  // Moves whenever any of the three counts does.
  auto last_change = Clock::now();
  while (rows_delivered->load() < records) {
    auto now = Clock::now();
    if (std::isnan(read) && rows_read->load() >= records) read = Seconds(now - start);
    if (std::isnan(checkpointed) && rows_out->load() >= records)
      checkpointed = Seconds(now - start);
    uint64_t moved = rows_read->load() + rows_out->load() + rows_delivered->load();
    if (moved != progress) {
      progress = moved;
      last_change = now;
    } else if (Seconds(now - last_change) > 60) {
      QueryResult sinks = ExecuteSql(
          database.get(), "SELECT state, last_error FROM stave_catalog.sinks WHERE name = 'o'");
      std::string status;
      for (const auto& row : sinks.rows) {
        status = row.at(0).string_value();
        if (!row.at(1).is_null()) status += ": " + row.at(1).string_value();
      }
      throw std::runtime_error(fmt::format(
          "stalled: {} records read, {} rows checkpointed, {} delivered of {} (sink {})",
          rows_read->load(), rows_out->load(), rows_delivered->load(), records, status));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ScenarioSpan span = watch.Elapsed();
  span.created = created;
  span.read = read;
  span.checkpointed = checkpointed;
  if (std::isnan(span.read)) span.read = span.wall;
  if (std::isnan(span.checkpointed)) span.checkpointed = span.wall;
  database->Shutdown();
  database.reset();
  uint64_t checked = VerifySinkOutput(cluster, out, records);
  Progress(kProgram,
           fmt::format("Stave's output: {} records, the {} the mock still holds checked one by one",
                       records, checked));
  return span;
}

// ---------------------------------------------------------------------------------------
// Reporting

std::string MachineLine() {
  Machine machine = DescribeMachine();
  return fmt::format("{} CPUs ({}), librdkafka {}; load average {:.2f}", machine.online_cpus,
                     machine.cpu_model, rd_kafka_version_str(), machine.load_average);
}

// ---------------------------------------------------------------------------------------

enum Scenario { kCopy, kTransactionalCopy, kStave, kScenarioCount };

constexpr const char* kScenarioNames[] = {
    "A: librdkafka copy loop (baseline)",
    "B: librdkafka transactional copy loop, commit every 1 s (baseline)",
    "Stave: Kafka -> SELECT id, k, v * 2, name -> Kafka sink",
};

/// Each scenario's CPU by thread name, averaged over the repeats: where the time goes.
std::string ThreadReport(const std::vector<ScenarioSpan> (&spans)[kScenarioCount], int repeats,
                         double records) {
  std::string out =
      "CPU by thread (mean over repeats; CPU-µs per event, and share of the "
      "scenario's process CPU):\n";
  for (int s = 0; s < kScenarioCount; ++s) {
    std::map<std::string, double> seconds;
    double total = 0;
    for (const ScenarioSpan& span : spans[s]) {
      total += span.cpu;
      for (const auto& [name, cpu] : span.thread_cpu) seconds[name] += cpu;
    }
    std::vector<std::pair<double, std::string>> sorted;
    for (const auto& [name, cpu] : seconds) {
      if (cpu > 0.001 * repeats) sorted.emplace_back(cpu, name);
    }
    std::sort(sorted.rbegin(), sorted.rend());
    out += fmt::format("  {}: {:.3f} CPU-µs per event\n", kScenarioNames[s],
                       1e6 * total / repeats / records);
    for (const auto& [cpu, name] : sorted) {
      out += fmt::format("    {:<20} {:7.3f} ({:4.1f} %)\n", name, 1e6 * cpu / repeats / records,
                         100 * cpu / total);
    }
  }
  return out;
}

int RunAndReport(const Config& config, const std::string& command) {
  std::string machine_before = MachineLine();
  Progress(kProgram, machine_before);
  MockCluster cluster(config.brokers, config.partitions);
  // The sink's own progress topic: one partition, as CREATE SINK would create it on a real
  // cluster (the mock has no CreateTopics). Every repeat's sink "o" reuses it; CREATE SINK
  // writes epoch 0 first, so a new sink starts from nothing.
  cluster.CreateTopic("stave-progress.o", 1);
  Progress(kProgram,
           fmt::format("mock cluster: {} broker(s) at {}", config.brokers, cluster.bootstrap()));

  std::vector<ScenarioSpan> spans[kScenarioCount];
  uint64_t value_bytes = 0;
  for (int repeat = 0; repeat < config.repeats; ++repeat) {
    std::string in = fmt::format("in-{}", repeat);
    cluster.CreateTopic(in);
    Progress(kProgram, fmt::format("repeat {} of {}: filling {} with {} records", repeat + 1,
                                   config.repeats, in, config.records));
    value_bytes = FillInput(&cluster, in, config.records);
    // The order rotates, so that a change in the machine's load hits every scenario alike.
    for (int step = 0; step < kScenarioCount; ++step) {
      auto scenario = static_cast<Scenario>((repeat + step) % kScenarioCount);
      std::string out = fmt::format("out-{}-{}", repeat, static_cast<int>(scenario));
      cluster.CreateTopic(out);
      ScenarioSpan span = scenario == kStave
                              ? StavePipeline(&cluster, in, out, config.records)
                              : CopyLoop(&cluster, in, out, config.records,
                                         scenario == kTransactionalCopy, config.keyless_copies);
      Progress(kProgram,
               fmt::format("{}: {:.2f} s, {:.2f} CPU-s of which the mock broker {:.2f}{}",
                           kScenarioNames[scenario], span.wall, span.cpu, span.broker_cpu,
                           scenario == kStave ? fmt::format(" (input read after {:.2f} s, every "
                                                            "row checkpointed after {:.2f} s)",
                                                            span.read, span.checkpointed)
                                              : ""));
      spans[scenario].push_back(span);
    }
  }

  const double n = static_cast<double>(config.records);
  auto rate = [&](const ScenarioSpan& span) { return n / span.wall; };
  auto per_cpu = [&](const ScenarioSpan& span) { return n / span.cpu; };
  auto per_client_cpu = [&](const ScenarioSpan& span) { return n / (span.cpu - span.broker_cpu); };
  auto median = [&](Scenario scenario, const std::function<double(const ScenarioSpan&)>& get) {
    std::vector<double> values;
    for (const ScenarioSpan& span : spans[scenario]) values.push_back(get(span));
    return Median(values);
  };
  // Stave against a baseline: the median of the per-repeat ratios (same repeat, same topic).
  // `of_stave` defaults to `get`.
  auto versus = [&](Scenario baseline, const std::function<double(const ScenarioSpan&)>& get,
                    const std::function<double(const ScenarioSpan&)>& of_stave = nullptr) {
    std::vector<double> ratios;
    for (int r = 0; r < config.repeats; ++r)
      ratios.push_back((of_stave ? of_stave : get)(spans[kStave][r]) / get(spans[baseline][r]));
    return Median(ratios);
  };
  auto after_create = [&](const ScenarioSpan& span) { return n / (span.wall - span.created); };

  std::string out;
  out += fmt::format("kafka_pipeline_bench: {}\n", command);
  out += fmt::format("machine at start: {}\n", machine_before);
  out += fmt::format("machine at end:   {}\n", MachineLine());
  out += fmt::format(
      "{} records of {:.0f} bytes (JSON) in {} partitions, {} mock broker(s) in this process; "
      "medians of {} interleaved repeats\n",
      config.records, static_cast<double>(value_bytes) / n, config.partitions, config.brokers,
      config.repeats);
  out +=
      "Stave's sink runs with delivery = 'at_least_once': the mock cluster shows aborted "
      "transactions to read_committed readers, so CREATE SINK refuses exactly_once against it. "
      "at_least_once runs the very same transactional protocol (one Kafka transaction per 1 s "
      "epoch, after its checkpoint).\n";
  out += config.keyless_copies
             ? "The copy loops copy values only: keyless records, as Stave's sink writes them.\n"
             : "The copy loops copy keys and values; Stave's sink writes keyless records.\n";
  std::string prefetch;
  for (const auto& [key, value] : kConsumerPrefetch) prefetch += fmt::format(" {}={}", key, value);
  out += fmt::format(
      "Every consumer, Stave's stream included, runs with{}: librdkafka 2.0.2 otherwise stops "
      "fetching at 100,000 queued records and idles up to a second before it looks again.\n",
      prefetch);
  out +=
      "CPU = the whole process (clients, Stave and the mock broker thread); 'without the "
      "broker' leaves out the mock broker's thread, which a real deployment runs elsewhere. "
      "Ratios are medians of per-repeat ratios.\n\n";
  Table table({"scenario", "events/s", "cores used", "events per CPU-s", "broker share of CPU",
               "events per CPU-s without the broker", "Stave/A events/s", "Stave/A per CPU-s",
               "Stave/B events/s", "Stave/B per CPU-s"});
  for (int s = 0; s < kScenarioCount; ++s) {
    auto scenario = static_cast<Scenario>(s);
    bool stave = scenario == kStave;
    table.Add({kScenarioNames[s], Rate(median(scenario, rate)),
               Ratio(median(scenario, [](const ScenarioSpan& x) { return x.cpu / x.wall; })),
               Rate(median(scenario, per_cpu)),
               fmt::format("{:.0f} %", 100 * median(scenario,
                                                    [](const ScenarioSpan& x) {
                                                      return x.broker_cpu / x.cpu;
                                                    })),
               Rate(median(scenario, per_client_cpu)), stave ? Ratio(versus(kCopy, rate)) : "-",
               stave ? Ratio(versus(kCopy, per_cpu)) : "-",
               stave ? Ratio(versus(kTransactionalCopy, rate)) : "-",
               stave ? Ratio(versus(kTransactionalCopy, per_cpu)) : "-"});
  }
  out += table.Render(config.markdown) + "\n";
  out += fmt::format(
      "Stave's timeline (medians, from the start of CREATE SINK): the statement returned after "
      "{:.2f} s, the stream had read every record after {:.2f} s, a checkpoint held every "
      "output row after {:.2f} s, the output topic had them all after {:.2f} s. Without the "
      "time CREATE SINK itself takes: {} events/s, {:.0f} % of A.\n\n",
      median(kStave, [](const ScenarioSpan& x) { return x.created; }),
      median(kStave, [](const ScenarioSpan& x) { return x.read; }),
      median(kStave, [](const ScenarioSpan& x) { return x.checkpointed; }),
      median(kStave, [](const ScenarioSpan& x) { return x.wall; }),
      Rate(median(kStave, after_create)), 100 * versus(kCopy, rate, after_create));
  double target = versus(kCopy, rate);
  out += fmt::format(
      "Against the target (Stave at least 70 % of the copy loop A): events/s {:.0f} % ({}), "
      "events per CPU-s {:.0f} %, events per CPU-s without the broker {:.0f} %; against the "
      "transactional copy loop B: {:.0f} %, {:.0f} %, {:.0f} %\n",
      100 * target, target >= 0.7 ? "met" : "missed", 100 * versus(kCopy, per_cpu),
      100 * versus(kCopy, per_client_cpu), 100 * versus(kTransactionalCopy, rate),
      100 * versus(kTransactionalCopy, per_cpu), 100 * versus(kTransactionalCopy, per_client_cpu));
  if (config.threads) out += ThreadReport(spans, config.repeats, n);
  fmt::print("{}", out);
  return 0;
}

/// Parses the command line and runs the benchmark; returns the exit status.
int Main(int argc, char** argv) {
  Config config;
  CLI::App app{
      "kafka_pipeline_bench: Kafka -> stateless view -> Kafka sink against plain librdkafka copy "
      "loops, on librdkafka's mock cluster in this process"};
  app.add_option("--records", config.records, "Records in the input topic")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--partitions", config.partitions, "Partitions of every data topic")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--brokers", config.brokers, "Brokers of the mock cluster")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--repeats", config.repeats, "Runs of each scenario; medians are reported")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--markdown", config.markdown, "Print a markdown table");
  app.add_flag("--threads", config.threads, "Also print each scenario's CPU by thread name");
  app.add_flag("--keyless-copies", config.keyless_copies,
               "The copy loops copy values only, keyless like Stave's output");
  CLI11_PARSE(app, argc, argv);
  std::string command = CommandLine(argc, argv);
  spdlog::set_level(spdlog::level::warn);
  return RunCatchingErrors(kProgram, [&] { return RunAndReport(config, command); });
}

}  // namespace
}  // namespace stave::bench

int main(int argc, char** argv) { return stave::bench::Main(argc, argv); }
