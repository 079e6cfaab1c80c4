// nexmark_generator_bench: the nexmark connector's generator, single-threaded, per table type,
// beside a baseline that only writes the same bytes. See bench/README.md.
//
// For each table type (bid, auction, person) and N events:
// - baseline: copies the rows' bytes (every field, taken from rows generated beforehand, in
//   turn) into a reused buffer, 1024 rows at a time: the cost of moving the bytes alone;
// - generator: nexmark::Generate<Type> for each event of the type into a reused struct;
// - source: a NexmarkSource with every column polled in 1024-row chunks until it finishes,
//   as a job polls it.
// Reports the medians of --repeats interleaved runs.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/harness.h"
#include "executor/chunk.h"
#include "executor/connectors/nexmark/nexmark_source.h"

namespace stave::executor {
namespace {

using nexmark::EventType;

struct Config {
  uint64_t events = 1'000'000;
  int repeats = 3;
};

volatile int64_t sink = 0;

std::string TypeName(EventType type) {
  return type == EventType::kPerson ? "person" : type == EventType::kAuction ? "auction" : "bid";
}

std::vector<planner::Column> AllColumns(EventType type) {
  std::vector<planner::Column> columns;
  for (const std::string& name : NexmarkColumnNames(type)) {
    bool is_int = name == "id" || name == "date_time" || name == "initial_bid" ||
                  name == "reserve" || name == "expires" || name == "seller" ||
                  name == "category" || name == "auction" || name == "bidder" || name == "price";
    columns.push_back({name, is_int ? TypeId::kInt64 : TypeId::kVarchar});
  }
  return columns;
}

NexmarkOptions Options(EventType type, uint64_t events) {
  return NexmarkOptions::Parse(
      {{"nexmark.table.type", TypeName(type)}, {"nexmark.event.num", std::to_string(events)}},
      AllColumns(type));
}

// Polls a source with every column until it finishes; returns the rows and their bytes.
std::pair<uint64_t, uint64_t> RunSource(EventType type, uint64_t events) {
  NexmarkSource source(Options(type, events));
  Chunk chunk;
  std::chrono::steady_clock::time_point wake;
  uint64_t rows = 0;
  uint64_t bytes = 0;
  while (source.Poll(kChunkRows, &chunk, &wake) == SourceReader::PollStatus::kData) {
    rows += chunk.size();
    for (const Column& column : chunk.columns) {
      bytes += column.ints.size() * 8;
      for (const std::string& value : column.strings) bytes += value.size();
    }
  }
  return {rows, bytes};
}

void RunGenerator(EventType type, uint64_t events) {
  nexmark::GeneratorConfig config;
  nexmark::Person person;
  nexmark::Auction auction;
  nexmark::Bid bid;
  int64_t sum = 0;
  for (uint64_t e = nexmark::NextEventOfType(type, 0); e < events;
       e = nexmark::NextEventOfType(type, e + 1)) {
    switch (type) {
      case EventType::kPerson:
        nexmark::GeneratePerson(config, e, true, &person);
        sum += person.id + static_cast<int64_t>(person.extra.size());
        break;
      case EventType::kAuction:
        nexmark::GenerateAuction(config, e, true, &auction);
        sum += auction.seller + static_cast<int64_t>(auction.extra.size());
        break;
      case EventType::kBid:
        nexmark::GenerateBid(config, e, true, &bid);
        sum += bid.price + static_cast<int64_t>(bid.extra.size());
        break;
    }
  }
  sink = sink + sum;
}

// The rows of one chunk, each as its fields' bytes, for the baseline to copy.
std::vector<std::vector<std::string>> SampleRows(EventType type) {
  NexmarkSource source(Options(type, UINT64_MAX / 2));
  Chunk chunk;
  std::chrono::steady_clock::time_point wake;
  source.Poll(kChunkRows, &chunk, &wake);
  std::vector<std::vector<std::string>> rows(chunk.size());
  for (const Column& column : chunk.columns) {
    for (size_t r = 0; r < chunk.size(); ++r) {
      if (column.type.IsString()) {
        rows[r].push_back(column.strings[r]);
      } else {
        rows[r].emplace_back(reinterpret_cast<const char*>(&column.ints[r]), 8);
      }
    }
  }
  return rows;
}

void RunBaseline(const std::vector<std::vector<std::string>>& sample, uint64_t rows) {
  std::string buffer;
  buffer.reserve(kChunkRows * 1024);
  int64_t sum = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    if (r % kChunkRows == 0) {
      sum += static_cast<int64_t>(buffer.size());
      buffer.clear();
    }
    for (const std::string& field : sample[r % sample.size()]) buffer.append(field);
  }
  sink = sink + sum + static_cast<int64_t>(buffer.size());
}

template <typename F>
double Time(F&& body) {
  bench::Stopwatch watch;
  body();
  return watch.Elapsed().wall;
}

int Run(const Config& config) {
  bench::Machine machine = bench::DescribeMachine();
  fmt::print("{} events per run, median of {} runs, one thread; {} ({} CPUs, load {:.2f})\n\n",
             config.events, config.repeats, machine.cpu_model, machine.online_cpus,
             machine.load_average);
  bench::Table table({"table", "what", "rows/s", "events/s", "MB/s", "ns per row", "vs baseline"});
  for (EventType type : {EventType::kBid, EventType::kAuction, EventType::kPerson}) {
    auto sample = SampleRows(type);
    auto [rows, bytes] = RunSource(type, config.events);  // Warms up, and counts.
    std::vector<double> baseline, generator, source, generator_ratio, source_ratio;
    for (int repeat = 0; repeat < config.repeats; ++repeat) {
      double b = 0, g = 0, s = 0;
      auto run_all = [&] {
        b = Time([&] { RunBaseline(sample, rows); });
        g = Time([&] { RunGenerator(type, config.events); });
        s = Time([&] { RunSource(type, config.events); });
      };
      run_all();
      baseline.push_back(b);
      generator.push_back(g);
      source.push_back(s);
      generator_ratio.push_back(b / g);
      source_ratio.push_back(b / s);
      bench::Progress("nexmark_generator_bench",
                      fmt::format("{} repeat {}: baseline {:.3f} s, generator {:.3f} s, source "
                                  "{:.3f} s",
                                  TypeName(type), repeat + 1, b, g, s));
    }
    double n = static_cast<double>(rows);
    double megabytes = static_cast<double>(bytes) / 1e6;
    double events = static_cast<double>(config.events);
    auto add = [&](const std::string& what, double seconds, const std::string& ratio) {
      table.Add({TypeName(type), what, bench::Rate(n / seconds), bench::Rate(events / seconds),
                 fmt::format("{:.0f}", megabytes / seconds),
                 fmt::format("{:.0f}", seconds / n * 1e9), ratio});
    };
    add("copy of the same bytes (baseline)", bench::Median(baseline), "1");
    add("generator into a reused struct", bench::Median(generator),
        bench::Ratio(bench::Median(generator_ratio)));
    add("NexmarkSource into 1024-row chunks", bench::Median(source),
        bench::Ratio(bench::Median(source_ratio)));
  }
  fmt::print("{}", table.Render(/*markdown=*/true));
  return 0;
}

}  // namespace
}  // namespace stave::executor

int main(int argc, char** argv) {
  stave::executor::Config config;
  CLI::App app{"nexmark_generator_bench: the nexmark generator beside a copy of its bytes"};
  app.add_option("--events", config.events, "Events (of all types) per run")
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
  return stave::bench::RunCatchingErrors("nexmark_generator_bench",
                                         [&] { return stave::executor::Run(config); });
}
