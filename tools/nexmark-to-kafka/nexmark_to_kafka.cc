// nexmark-to-kafka: fills Kafka topics with the Nexmark generator's events, as JSON records, for
// the Kafka-fed Nexmark runs (bench/nexmark/run.py --source kafka).
//
// It runs the same generator as the `nexmark` connector (executor/connectors/nexmark/), so a
// stream reading the topics with FORMAT JSON holds exactly the rows a `nexmark` stream of the
// same seed and event count holds: events 0 .. N-1, each table type into its own topic
// (`<prefix>person`, `<prefix>auction`, `<prefix>bid`), in event order, keyless. Each record is
// one JSON object whose fields are the columns bench/nexmark/nexmark_sql.py declares, times as
// "YYYY-MM-DD HH:MM:SS.ffffff" text (exact to the microsecond, unlike epoch milliseconds).
//
// It prints one summary line on stdout when every record is acknowledged, and exits non-zero
// with the reason if any is not.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <CLI/CLI.hpp>

#include "common/json_string.h"
#include "common/temporal.h"
#include "executor/connectors/nexmark/nexmark_generator.h"
#include "executor/connectors/nexmark/nexmark_source.h"

namespace {

// The records `topic` holds (the sum over its partitions of high minus low watermark), or
// nullopt if the cluster does not say.
std::optional<int64_t> RecordsHeld(rd_kafka_t* client, const std::string& topic) {
  rd_kafka_topic_t* handle = rd_kafka_topic_new(client, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(client, 0, handle, &metadata, 10'000);
  rd_kafka_topic_destroy(handle);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
  std::unique_ptr<const rd_kafka_metadata_t, void (*)(const rd_kafka_metadata_t*)> owner(
      metadata, rd_kafka_metadata_destroy);
  if (metadata->topic_cnt != 1) return std::nullopt;
  int64_t held = 0;
  for (int p = 0; p < metadata->topics[0].partition_cnt; ++p) {
    int64_t low = 0;
    int64_t high = 0;
    if (rd_kafka_query_watermark_offsets(client, topic.c_str(),
                                         metadata->topics[0].partitions[p].id, &low, &high,
                                         10'000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return std::nullopt;
    }
    held += high - low;
  }
  return held;
}

namespace nexmark = stave::executor::nexmark;
using nexmark::EventType;

struct Options {
  std::string bootstrap_servers;
  uint64_t events = 1'000'000;
  uint64_t seed = 0;
  uint64_t first_event_rate = nexmark::kDefaultEventRate;
  std::string topic_prefix;
  std::vector<std::string> tables = {"person", "auction", "bid"};
};

// Appends `"name":` and the value, with a comma before every field but the first.
class JsonRecord {
 public:
  void Clear() {
    text_ = "{";
    first_ = true;
  }
  void Int(const char* name, int64_t value) {
    Name(name);
    fmt::format_to(std::back_inserter(text_), "{}", value);
  }
  void Text(const char* name, std::string_view value) {
    Name(name);
    stave::AppendJsonString(value, &text_);
  }
  void Time(const char* name, int64_t unix_micros) {
    Name(name);
    // TIMESTAMP values count from 2000-01-01, as PostgreSQL's do.
    int64_t micros = unix_micros - stave::executor::kTimestampEpochOffsetMicros;
    stave::AppendJsonString(stave::temporal::FormatTimestamp(micros, /*with_time_zone=*/false),
                            &text_);
  }
  const std::string& Finish() {
    text_ += '}';
    return text_;
  }

 private:
  void Name(const char* name) {
    if (!first_) text_ += ',';
    first_ = false;
    stave::AppendJsonString(name, &text_);
    text_ += ':';
  }
  std::string text_;
  bool first_ = true;
};

void EncodePerson(const nexmark::Person& p, JsonRecord* out) {
  out->Int("id", p.id);
  out->Text("name", p.name);
  out->Text("email_address", p.email_address);
  out->Text("credit_card", p.credit_card);
  out->Text("city", p.city);
  out->Text("state", p.state);
  out->Time("date_time", p.date_time);
  out->Text("extra", p.extra);
}

void EncodeAuction(const nexmark::Auction& a, JsonRecord* out) {
  out->Int("id", a.id);
  out->Text("item_name", a.item_name);
  out->Text("description", a.description);
  out->Int("initial_bid", a.initial_bid);
  out->Int("reserve", a.reserve);
  out->Time("date_time", a.date_time);
  out->Time("expires", a.expires);
  out->Int("seller", a.seller);
  out->Int("category", a.category);
  out->Text("extra", a.extra);
}

void EncodeBid(const nexmark::Bid& b, JsonRecord* out) {
  out->Int("auction", b.auction);
  out->Int("bidder", b.bidder);
  out->Int("price", b.price);
  out->Text("channel", b.channel);
  out->Text("url", b.url);
  out->Time("date_time", b.date_time);
  out->Text("extra", b.extra);
}

struct Delivery {
  uint64_t acknowledged = 0;
  uint64_t failed = 0;
  std::string first_error;
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto* delivery = static_cast<Delivery*>(opaque);
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++delivery->acknowledged;
  } else if (delivery->failed++ == 0) {
    delivery->first_error = rd_kafka_err2str(message->err);
  }
}

int Run(const Options& options) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  auto set = [&](const char* name, const std::string& value) {
    if (rd_kafka_conf_set(conf, name, value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      throw std::runtime_error(fmt::format("{}: {}", name, error));
    }
  };
  set("bootstrap.servers", options.bootstrap_servers);
  set("enable.idempotence", "true");  // No duplicates from retries: the topics are an input.
  set("linger.ms", "20");
  set("batch.num.messages", "10000");
  set("queue.buffering.max.messages", "1000000");
  // Keyless records go to one partition at a time by default (sticky, switching when a batch
  // goes out), which fills a few partitions many times over their share: a test cluster that
  // keeps a few MB per partition then drops their oldest records before anyone reads them.
  // A random partition per record spreads them evenly.
  set("sticky.partitioning.linger.ms", "0");
  Delivery delivery;
  rd_kafka_conf_set_opaque(conf, &delivery);
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (producer == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("cannot create the producer: ") + error);
  }
  std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> owner(producer, rd_kafka_destroy);

  nexmark::GeneratorConfig config;
  config.seed = options.seed;
  config.event_rate = options.first_event_rate;
  bool want[3] = {false, false, false};
  for (const std::string& table : options.tables) {
    want[table == "person" ? 0 : table == "auction" ? 1 : 2] = true;
  }
  const std::string topics[3] = {options.topic_prefix + "person", options.topic_prefix + "auction",
                                 options.topic_prefix + "bid"};
  nexmark::Person person;
  nexmark::Auction auction;
  nexmark::Bid bid;
  JsonRecord record;
  uint64_t produced = 0;
  int64_t produced_per_topic[3] = {0, 0, 0};
  for (uint64_t event = 0; event < options.events; ++event) {
    EventType type = nexmark::TypeOfEvent(event);
    size_t index = static_cast<size_t>(type);
    if (!want[index]) continue;
    record.Clear();
    switch (type) {
      case EventType::kPerson:
        nexmark::GeneratePerson(config, event, /*extra=*/true, &person);
        EncodePerson(person, &record);
        break;
      case EventType::kAuction:
        nexmark::GenerateAuction(config, event, /*extra=*/true, &auction);
        EncodeAuction(auction, &record);
        break;
      case EventType::kBid:
        nexmark::GenerateBid(config, event, /*extra=*/true, &bid);
        EncodeBid(bid, &record);
        break;
    }
    const std::string& value = record.Finish();
    for (;;) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          producer, RD_KAFKA_V_TOPIC(topics[index].c_str()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        throw std::runtime_error(
            fmt::format("cannot produce to {}: {}", topics[index], rd_kafka_err2str(err)));
      }
      rd_kafka_poll(producer, 10);  // The local queue is full: wait for acknowledgements.
    }
    ++produced;
    ++produced_per_topic[index];
    if (produced % 10000 == 0) rd_kafka_poll(producer, 0);
  }
  rd_kafka_resp_err_t err = rd_kafka_flush(producer, 120'000);
  rd_kafka_poll(producer, 0);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR || delivery.failed > 0 ||
      delivery.acknowledged != produced) {
    std::fprintf(stderr, "nexmark-to-kafka: %llu of %llu records acknowledged; %s\n",
                 static_cast<unsigned long long>(delivery.acknowledged),
                 static_cast<unsigned long long>(produced),
                 delivery.failed > 0 ? delivery.first_error.c_str() : rd_kafka_err2str(err));
    return 1;
  }
  // A test cluster keeps a bounded size per partition: records dropped by its retention
  // would be missing from every run, silently. Counted here, they fail the fill.
  for (size_t index = 0; index < 3; ++index) {
    if (!want[index]) continue;
    std::optional<int64_t> held = RecordsHeld(producer, topics[index]);
    if (held && *held != produced_per_topic[index]) {
      std::fprintf(stderr,
                   "nexmark-to-kafka: topic %s holds %lld of the %lld records written: the "
                   "cluster's retention dropped the oldest; give it more partitions\n",
                   topics[index].c_str(), static_cast<long long>(*held),
                   static_cast<long long>(produced_per_topic[index]));
      return 1;
    }
  }
  std::printf("events=%llu records=%llu\n", static_cast<unsigned long long>(options.events),
              static_cast<unsigned long long>(produced));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"nexmark-to-kafka: fills Kafka topics with the Nexmark generator's events (JSON)"};
  app.add_option("--bootstrap-servers", options.bootstrap_servers, "Kafka brokers, host:port,...")
      ->required();
  app.add_option("--events", options.events, "Events 0 .. N-1 of all types")->capture_default_str();
  app.add_option("--seed", options.seed, "The generator's seed, as 'nexmark.seed'")
      ->capture_default_str();
  app.add_option("--first-event-rate", options.first_event_rate,
                 "Events per second of event time, as 'nexmark.first-event-rate'")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, UINT64_MAX));
  app.add_option("--topic-prefix", options.topic_prefix,
                 "Topics are <prefix>person, <prefix>auction and <prefix>bid");
  app.add_option("--tables", options.tables, "Which table types to write")
      ->delimiter(',')
      ->check(CLI::IsMember({"person", "auction", "bid"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    return Run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nexmark-to-kafka: %s\n", e.what());
    return 1;
  }
}
