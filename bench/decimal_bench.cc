// decimal_bench: numeric operations per second, one thread, beside the same loop on int64 (the
// baseline). See bench/README.md.
//
// Three sets of N values, each parsed from text:
// - int64: whole numbers, parsed with std::from_chars and added, multiplied and compared as
//   int64_t: what a native column costs;
// - narrow: amounts like 12345.67 (held in place, 128-bit arithmetic);
// - wide: 60-digit values with 10 digits after the point (held on the heap).
// Each operation runs over every value in turn: text → value, a running sum, the product of
// each value with itself, a comparison with the next, value → text. Reports the medians of
// --repeats runs, and each numeric rate over the int64 rate of the same operation.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/harness.h"
#include "common/decimal.h"

namespace stave {
namespace {

struct Config {
  int values = 1'000'000;
  int repeats = 5;
};

volatile int64_t sink = 0;

struct Operations {
  std::function<void()> parse, add, multiply, compare, format;
};

Operations IntegerOperations(const std::vector<std::string>& texts, std::vector<int64_t>* values) {
  Operations ops;
  ops.parse = [&texts, values] {
    values->clear();
    for (const std::string& text : texts) {
      int64_t value = 0;
      std::from_chars(text.data(), text.data() + text.size(), value);
      values->push_back(value);
    }
  };
  ops.add = [values] {
    int64_t sum = 0;
    for (int64_t value : *values) sum += value;
    sink = sink + sum;
  };
  ops.multiply = [values] {
    int64_t total = 0;
    for (int64_t value : *values) total ^= value * value;
    sink = sink + total;
  };
  ops.compare = [values] {
    int64_t less = 0;
    for (size_t i = 1; i < values->size(); ++i) less += (*values)[i - 1] < (*values)[i];
    sink = sink + less;
  };
  ops.format = [values] {
    size_t bytes = 0;
    for (int64_t value : *values) bytes += std::to_string(value).size();
    sink = sink + static_cast<int64_t>(bytes);
  };
  return ops;
}

Operations DecimalOperations(const std::vector<std::string>& texts, std::vector<Decimal>* values) {
  Operations ops;
  ops.parse = [&texts, values] {
    values->clear();
    for (const std::string& text : texts) values->push_back(decimal::Parse(text));
  };
  ops.add = [values] {
    Decimal sum;
    for (const Decimal& value : *values) sum = decimal::Add(sum, value);
    sink = sink + sum.scale;
  };
  ops.multiply = [values] {
    int64_t scales = 0;
    for (const Decimal& value : *values) scales += decimal::Multiply(value, value).scale;
    sink = sink + scales;
  };
  ops.compare = [values] {
    int64_t less = 0;
    for (size_t i = 1; i < values->size(); ++i) {
      less += decimal::Compare((*values)[i - 1], (*values)[i]) < 0;
    }
    sink = sink + less;
  };
  ops.format = [values] {
    size_t bytes = 0;
    for (const Decimal& value : *values) bytes += decimal::Format(value).size();
    sink = sink + static_cast<int64_t>(bytes);
  };
  return ops;
}

double Time(const std::function<void()>& body) {
  bench::Stopwatch watch;
  body();
  return watch.Elapsed().wall;
}

int Run(const Config& config) {
  bench::Machine machine = bench::DescribeMachine();
  fmt::print("{} values per run, median of {} runs, one thread; {} ({} CPUs, load {:.2f})\n\n",
             config.values, config.repeats, machine.cpu_model, machine.online_cpus,
             machine.load_average);
  std::vector<std::string> integer_texts, narrow_texts, wide_texts;
  for (int i = 0; i < config.values; ++i) {
    uint64_t random = bench::SplitMix64(static_cast<uint64_t>(i));
    integer_texts.push_back(std::to_string(random % 10'000'000));
    narrow_texts.push_back(fmt::format("{}.{:02}", random % 100'000, (random >> 20) % 100));
    wide_texts.push_back(fmt::format("{:020}{:020}{:010}.{:010}", random % 100'000'000'000'000'000,
                                     (random >> 7) % 100'000'000'000'000'000,
                                     random % 10'000'000'000, (random >> 3) % 10'000'000'000));
  }
  std::vector<int64_t> integers;
  std::vector<Decimal> narrow, wide;
  const std::vector<std::pair<std::string, Operations>> sets = {
      {"int64 (baseline)", IntegerOperations(integer_texts, &integers)},
      {"narrow numeric", DecimalOperations(narrow_texts, &narrow)},
      {"wide numeric", DecimalOperations(wide_texts, &wide)}};
  const std::vector<std::pair<std::string, std::function<void()> Operations::*>> operations = {
      {"parse", &Operations::parse},
      {"add", &Operations::add},
      {"multiply", &Operations::multiply},
      {"compare", &Operations::compare},
      {"format", &Operations::format}};
  bench::Table table({"operation", "values", "ops/s", "ns per op", "vs int64"});
  for (const auto& [operation, member] : operations) {
    std::vector<double> baseline;
    for (const auto& [set, ops] : sets) {
      ops.parse();  // the values every other operation works on
      std::vector<double> seconds;
      for (int repeat = 0; repeat < config.repeats; ++repeat) seconds.push_back(Time(ops.*member));
      double median = bench::Median(seconds);
      if (baseline.empty()) baseline.push_back(median);
      double n = static_cast<double>(config.values);
      table.Add({operation, set, bench::Rate(n / median), fmt::format("{:.1f}", median / n * 1e9),
                 bench::Ratio(baseline.front() / median)});
    }
  }
  fmt::print("{}", table.Render(/*markdown=*/true));
  return 0;
}

}  // namespace
}  // namespace stave

int main(int argc, char** argv) {
  stave::Config config;
  CLI::App app{"decimal_bench: numeric operations beside the same loops on int64"};
  app.add_option("--values", config.values, "Values in each set")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--repeats", config.repeats, "Runs of each operation; medians are reported")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return stave::bench::RunCatchingErrors("decimal_bench", [&] { return stave::Run(config); });
}
