// json_decode_bench: the JSON record decoder (executor/connectors/format) against simdjson's
// own On Demand parse of the same records, single-threaded. See bench/README.md.
//
// Both sides copy each record into a reused padded buffer first, as a Kafka source must.
// The baseline reads every field's key and value into a volatile sink; the decoder lands
// the values in 1024-row chunks, as a source hands them on. Reports the medians of
// --repeats interleaved runs.

#include <fmt/format.h>
#include <simdjson.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bench/harness.h"
#include "executor/chunk.h"
#include "executor/connectors/format/record_decoder.h"

namespace stave::executor {
namespace {

namespace ondemand = simdjson::ondemand;

struct Config {
  size_t records = 1'000'000;
  int repeats = 5;
};

// What a correct pass over all records must add up to, so that a fast but wrong run fails.
struct Checksum {
  int64_t ids = 0;
  int64_t ks = 0;
  int64_t vs = 0;
  int64_t name_bytes = 0;
  double prices = 0;
  int64_t oks = 0;
  bool operator==(const Checksum&) const = default;
};

// The records back to back, as a consumer's fetch buffer holds them.
struct Records {
  std::string bytes;
  std::vector<size_t> starts;  // records + 1 entries; record i is [starts[i], starts[i+1]).
  size_t longest = 0;
  Checksum expected;

  size_t size() const { return starts.size() - 1; }
  std::string_view operator[](size_t i) const {
    return std::string_view(bytes).substr(starts[i], starts[i + 1] - starts[i]);
  }
};

// {"id":123,"k":45,"v":6789,"name":"user-000123","price":12.5,"ok":true}
Records Generate(size_t count) {
  Records records;
  records.starts.reserve(count + 1);
  records.bytes.reserve(count * 80);
  for (size_t i = 0; i < count; ++i) {
    records.starts.push_back(records.bytes.size());
    uint64_t hash = bench::SplitMix64(i);
    int64_t id = static_cast<int64_t>(i) + 1;
    int64_t k = static_cast<int64_t>(hash % 100);
    int64_t v = static_cast<int64_t>((hash >> 8) % 10000);
    double price = static_cast<double>((hash >> 24) % 40000) / 4;  // Exact in binary.
    bool ok = ((hash >> 40) & 1) != 0;
    std::string name = fmt::format("user-{:06}", id);
    fmt::format_to(std::back_inserter(records.bytes),
                   R"({{"id":{},"k":{},"v":{},"name":"{}","price":{},"ok":{}}})", id, k, v, name,
                   price, ok);
    records.longest = std::max(records.longest, records.bytes.size() - records.starts.back());
    Checksum& sum = records.expected;
    sum.ids += id;
    sum.ks += k;
    sum.vs += v;
    sum.name_bytes += static_cast<int64_t>(name.size());
    sum.prices += price;
    sum.oks += ok ? 1 : 0;
  }
  records.starts.push_back(records.bytes.size());
  return records;
}

volatile int64_t int_sink;
volatile double double_sink;

// simdjson On Demand reading every key and value; returns seconds.
double RunSimdjson(const Records& records) {
  ondemand::parser parser;
  size_t capacity = records.longest + simdjson::SIMDJSON_PADDING;
  auto buffer = std::make_unique<char[]>(capacity);
  auto start = bench::Clock::now();
  for (size_t i = 0; i < records.size(); ++i) {
    std::string_view record = records[i];
    std::memcpy(buffer.get(), record.data(), record.size());
    std::memset(buffer.get() + record.size(), 0, simdjson::SIMDJSON_PADDING);
    ondemand::document document;
    ondemand::object object;
    if (parser.iterate(buffer.get(), record.size(), capacity).get(document) ||
        document.get_object().get(object)) {
      throw std::runtime_error(fmt::format("simdjson refused record {}", i));
    }
    bool failed = false;
    for (auto field : object) {
      std::string_view key;
      ondemand::value value;
      ondemand::json_type type;
      failed = failed || field.unescaped_key().get(key) || field.value().get(value) ||
               value.type().get(type);
      if (failed) break;
      int_sink = static_cast<int64_t>(key.size());
      switch (type) {
        case ondemand::json_type::number: {
          ondemand::number_type number_type;
          int64_t integer = 0;
          double number = 0;
          failed = value.get_number_type().get(number_type);
          if (!failed && number_type == ondemand::number_type::signed_integer) {
            failed = value.get_int64().get(integer);
            int_sink = integer;
          } else if (!failed) {
            failed = value.get_double().get(number);
            double_sink = number;
          }
          break;
        }
        case ondemand::json_type::string: {
          std::string_view text;
          failed = value.get_string().get(text);
          int_sink = static_cast<int64_t>(text.size());
          break;
        }
        case ondemand::json_type::boolean: {
          bool flag = false;
          failed = value.get_bool().get(flag);
          int_sink = flag;
          break;
        }
        default:
          failed = true;
      }
    }
    if (failed) throw std::runtime_error(fmt::format("simdjson refused record {}", i));
  }
  return bench::Seconds(bench::Clock::now() - start);
}

// The Stave decoder into 1024-row chunks (a fresh chunk each time, as a source hands each
// full one on); returns seconds.
double RunDecoder(const Records& records) {
  std::vector<PayloadColumn> columns = {
      {0, "id", TypeId::kInt64},     {1, "k", TypeId::kInt32},       {2, "v", TypeId::kInt64},
      {3, "name", TypeId::kVarchar}, {4, "price", TypeId::kFloat64}, {5, "ok", TypeId::kBoolean}};
  std::vector<DataType> types;
  for (const PayloadColumn& column : columns) types.push_back(column.type);
  std::unique_ptr<RecordDecoder> decoder = MakeRecordDecoder("json", columns, {});
  auto fresh_chunk = [&] {
    Chunk chunk = Chunk::WithTypes(types);
    for (Column& column : chunk.columns) column.Reserve(kChunkRows);
    chunk.ops.reserve(kChunkRows);
    return chunk;
  };
  Checksum sum;
  auto add = [&](const Chunk& chunk) {
    for (size_t row = 0; row < chunk.size(); ++row) {
      sum.ids += chunk.columns[0].ints[row];
      sum.ks += chunk.columns[1].ints[row];
      sum.vs += chunk.columns[2].ints[row];
      sum.name_bytes += static_cast<int64_t>(chunk.columns[3].strings[row].size());
      sum.prices += chunk.columns[4].doubles[row];
      sum.oks += chunk.columns[5].ints[row];
    }
  };
  std::string error;
  auto start = bench::Clock::now();
  Chunk chunk = fresh_chunk();
  for (size_t i = 0; i < records.size(); ++i) {
    if (!decoder->Decode(records[i], &chunk, &error)) {
      throw std::runtime_error(fmt::format("the decoder refused record {}: {}", i, error));
    }
    chunk.ops.push_back(RowOp::kInsert);
    if (chunk.size() == kChunkRows) {
      add(chunk);
      chunk = fresh_chunk();
    }
  }
  add(chunk);
  double seconds = bench::Seconds(bench::Clock::now() - start);
  if (!(sum == records.expected)) throw std::runtime_error("the decoded values are wrong");
  return seconds;
}

int Run(const Config& config) {
  Records records = Generate(config.records);
  double megabytes = static_cast<double>(records.bytes.size()) / 1e6;
  fmt::print(stderr, "generated {} records, {:.1f} MB\n", records.size(), megabytes);
  std::vector<double> baseline_seconds;
  std::vector<double> decoder_seconds;
  std::vector<double> ratios;
  for (int repeat = 0; repeat < config.repeats; ++repeat) {
    // Alternate the order, so that a change in the machine's load hits both alike.
    double baseline = 0;
    double decoder = 0;
    if (repeat % 2 == 0) {
      baseline = RunSimdjson(records);
      decoder = RunDecoder(records);
    } else {
      decoder = RunDecoder(records);
      baseline = RunSimdjson(records);
    }
    baseline_seconds.push_back(baseline);
    decoder_seconds.push_back(decoder);
    ratios.push_back(baseline / decoder);
    fmt::print(stderr, "repeat {}: simdjson {:.3f} s, decoder {:.3f} s\n", repeat + 1, baseline,
               decoder);
  }
  double baseline = bench::Median(baseline_seconds);
  double decoder = bench::Median(decoder_seconds);
  double n = static_cast<double>(records.size());
  fmt::print(
      "{} records, {:.1f} MB ({:.1f} bytes each), median of {} runs; simdjson {} "
      "(On Demand compiled for '{}', structural indexing at run time with '{}')\n\n",
      records.size(), megabytes, static_cast<double>(records.bytes.size()) / n, config.repeats,
      fmt::format("{}.{}.{}", static_cast<int>(simdjson::SIMDJSON_VERSION_MAJOR),
                  static_cast<int>(simdjson::SIMDJSON_VERSION_MINOR),
                  static_cast<int>(simdjson::SIMDJSON_VERSION_REVISION)),
      // The On Demand code is compiled into this program, for the CPUs its flags allow.
      SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION),
      simdjson::get_active_implementation()->name());
  bench::Table table({"what", "records/s", "MB/s", "ns per record", "vs simdjson"});
  table.Add({"simdjson On Demand, every field read (baseline)", bench::Rate(n / baseline),
             fmt::format("{:.0f}", megabytes / baseline), fmt::format("{:.0f}", baseline / n * 1e9),
             "1"});
  table.Add({"Stave JSON decoder into 1024-row chunks", bench::Rate(n / decoder),
             fmt::format("{:.0f}", megabytes / decoder), fmt::format("{:.0f}", decoder / n * 1e9),
             bench::Ratio(bench::Median(ratios))});
  fmt::print("{}", table.Render(/*markdown=*/true));
  return 0;
}

}  // namespace
}  // namespace stave::executor

int main(int argc, char** argv) {
  stave::executor::Config config;
  CLI::App app{"json_decode_bench: the JSON record decoder against simdjson's own parse"};
  app.add_option("--records", config.records, "Records to generate and decode")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--repeats", config.repeats, "Runs of each side; medians are reported")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return stave::bench::RunCatchingErrors("json_decode_bench",
                                         [&] { return stave::executor::Run(config); });
}
