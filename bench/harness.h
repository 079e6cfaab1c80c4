// The measuring and reporting harness the benchmark programs share: clocks, medians and
// percentiles, the report's table and number formats, the machine line, progress on stderr,
// SQL against an in-process Database, and scratch directories. Each program keeps its own
// scenarios; only what they would otherwise each write again lives here.

#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "executor/database.h"

namespace stave::bench {

/// The wall clock every benchmark times with.
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------
// Measuring

/// CPU seconds this process (every thread) has used so far: CLOCK_PROCESS_CPUTIME_ID.
/// Inline, as it is read at the edges of timed intervals.
inline double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// `duration` in seconds.
inline double Seconds(Clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

/// A wall-clock and process-CPU-clock interval, in seconds.
struct Span {
  double wall = 0;
  double cpu = 0;

  Span& operator+=(const Span& other) {
    wall += other.wall;
    cpu += other.cpu;
    return *this;
  }
};

/// Starts both clocks when made; Elapsed reads them again, wall clock first.
class Stopwatch {
 public:
  Stopwatch() : wall_(Clock::now()), cpu_(CpuSeconds()) {}

  /// The interval since construction.
  Span Elapsed() const { return {Seconds(Clock::now() - wall_), CpuSeconds() - cpu_}; }

 private:
  Clock::time_point wall_;
  double cpu_;
};

/// The median; the mean of the middle two for an even count; NaN for none.
double Median(std::vector<double> values);

/// The nearest-rank percentile, p in (0, 100]; NaN for none. With fewer than 100 values,
/// p99 is the largest.
double Percentile(std::vector<double> values, double p);

/// SplitMix64's finalizer: deterministic, well-mixed bits for generated field values.
uint64_t SplitMix64(uint64_t x);

// ---------------------------------------------------------------------------------------
// Reporting

/// A table of text cells, printed aligned (first column left, the others right) or as a
/// markdown table with right-aligned number columns.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}

  /// Appends a row; rows may have more or fewer cells than the header.
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  /// The header and every row, one line each, each line ending in a newline.
  std::string Render(bool markdown) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

/// Events per second: "1.23 M", "456.7 K", "89"; "-" for NaN.
std::string Rate(double per_second);

/// Two decimals, "1.05"; "-" for NaN.
std::string Ratio(double ratio);

/// Seconds as milliseconds, "12.3 ms"; "-" for NaN.
std::string Millis(double seconds);

/// Decimal units, "1.23 GB", "4.5 MB", "6.7 KB", "89 B"; "-" for NaN.
std::string Bytes(double bytes);

/// The machine a run ran on, for the report's first lines (each program words its own).
struct Machine {
  unsigned online_cpus = 0;  // std::thread::hardware_concurrency()
  int usable_cpus = 0;       // the CPUs this process's affinity mask allows
  std::string cpu_model;     // "model name" of /proc/cpuinfo, or "unknown CPU"
  double load_average = 0;   // over the last minute
};

/// Reads the machine's state now (the load changes during a run).
Machine DescribeMachine();

/// The command line, its words joined by spaces, as the report's first line repeats it.
std::string CommandLine(int argc, char** argv);

/// Runs a program's `body` and returns its exit status; if it throws, prints
/// "program: what()" to stderr and returns 1.
int RunCatchingErrors(std::string_view program, const std::function<int()>& body);

/// Prints "[program] message" on its own line to stderr and flushes it, so that progress
/// shows while the report (stdout) is still being gathered.
void Progress(std::string_view program, std::string_view message);

// ---------------------------------------------------------------------------------------
// Running SQL and keeping data

/// Parses `sql` and executes its statements in order; returns the last one's result.
/// Throws what parsing or executing throws.
executor::QueryResult ExecuteSql(executor::Database* database, const std::string& sql);

/// Where a program's runs put their data: a fresh directory `<temp>/<prefix>-XXXXXX`,
/// removed with everything in it when this goes away, or, when `requested` names one, that
/// directory (created if need be, and kept). Not thread-safe.
class DataDirectory {
 public:
  explicit DataDirectory(std::string_view prefix, const std::string& requested = "");
  ~DataDirectory();
  DataDirectory(const DataDirectory&) = delete;
  DataDirectory& operator=(const DataDirectory&) = delete;

  /// A fresh, empty subdirectory "<name>-<n>", never one that exists already.
  std::filesystem::path Fresh(const std::string& name);

  /// The directory itself.
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  bool owned_ = false;
  int counter_ = 0;
};

/// Removes `path` and everything in it when this goes away, however a run ends.
struct RemoveOnExit {
  std::filesystem::path path;
  ~RemoveOnExit();
};

}  // namespace stave::bench
