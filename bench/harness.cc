#include "bench/harness.h"

#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "parser/parser.h"

namespace stave::bench {

namespace fs = std::filesystem;

double Median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::string Table::Render(bool markdown) const {
  std::string text;
  if (markdown) {
    auto line = [](const std::vector<std::string>& cells) {
      std::string out = "|";
      for (const auto& cell : cells) out += " " + cell + " |";
      return out + "\n";
    };
    text += line(header_);
    std::string rule = "|";
    for (size_t i = 0; i < header_.size(); ++i) rule += i == 0 ? "---|" : "---:|";
    text += rule + "\n";
    for (const auto& row : rows_) text += line(row);
    return text;
  }
  std::vector<size_t> widths;
  auto measure = [&](const std::vector<std::string>& cells) {
    if (widths.size() < cells.size()) widths.resize(cells.size(), 0);
    for (size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], cells[i].size());
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) {
      out += i == 0 ? fmt::format("{:<{}}", cells[i], widths[i])
                    : fmt::format("  {:>{}}", cells[i], widths[i]);
    }
    return out + "\n";
  };
  text += line(header_);
  for (const auto& row : rows_) text += line(row);
  return text;
}

std::string Rate(double per_second) {
  if (std::isnan(per_second)) return "-";
  if (per_second >= 1e6) return fmt::format("{:.2f} M", per_second / 1e6);
  if (per_second >= 1e3) return fmt::format("{:.1f} K", per_second / 1e3);
  return fmt::format("{:.0f}", per_second);
}

std::string Ratio(double ratio) {
  if (std::isnan(ratio)) return "-";
  return fmt::format("{:.2f}", ratio);
}

std::string Millis(double seconds) {
  if (std::isnan(seconds)) return "-";
  return fmt::format("{:.1f} ms", seconds * 1e3);
}

std::string Bytes(double bytes) {
  if (std::isnan(bytes)) return "-";
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.1f} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.1f} KB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}

Machine DescribeMachine() {
  Machine machine;
  machine.online_cpus = std::thread::hardware_concurrency();
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) machine.usable_cpus = CPU_COUNT(&set);
  machine.cpu_model = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      machine.cpu_model = line.substr(line.find(':') + 2);
      break;
    }
  }
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) > 0) machine.load_average = load[0];
  return machine;
}

std::string CommandLine(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  return command;
}

int RunCatchingErrors(std::string_view program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& error) {
    fmt::print(stderr, "{}: {}\n", program, error.what());
    return 1;
  }
}

void Progress(std::string_view program, std::string_view message) {
  fmt::print(stderr, "[{}] {}\n", program, message);
  std::fflush(stderr);
}

executor::QueryResult ExecuteSql(executor::Database* database, const std::string& sql) {
  executor::QueryResult result;
  for (const auto& statement : parser::Parse(sql)) result = database->Execute(*statement);
  return result;
}

DataDirectory::DataDirectory(std::string_view prefix, const std::string& requested) {
  if (requested.empty()) {
    std::string pattern = (fs::temp_directory_path() / fmt::format("{}-XXXXXX", prefix)).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
    owned_ = true;
  } else {
    path_ = requested;
    fs::create_directories(path_);
  }
}

DataDirectory::~DataDirectory() {
  std::error_code error;
  if (owned_) fs::remove_all(path_, error);
}

fs::path DataDirectory::Fresh(const std::string& name) {
  fs::path path;
  do {
    path = path_ / fmt::format("{}-{}", name, ++counter_);
  } while (fs::exists(path));
  fs::create_directories(path);
  return path;
}

RemoveOnExit::~RemoveOnExit() {
  std::error_code error;
  fs::remove_all(path, error);
}

}  // namespace stave::bench
