// engine_bench: throughput, checkpoint cost and recovery time of the checkpointed engine.
//
// Runs the engine in-process (Database::Open + parser::Parse + Database::Execute), times
// scenarios with the wall clock and the process CPU clock, and reports medians over
// --repeats runs beside baselines measured in the same run. See bench/README.md.

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/harness.h"
#include "common/sql_error.h"
#include "executor/chunk.h"
#include "executor/connectors/connectors.h"
#include "executor/connectors/datagen/datagen_source.h"
#include "executor/database.h"
#include "planner/catalog.h"
#include "planner/connector_spec.h"

namespace stave::bench {
namespace {

namespace fs = std::filesystem;
using executor::Database;
using executor::DatabaseOptions;
using executor::QueryResult;

constexpr char kProgram[] = "engine_bench";

// ---------------------------------------------------------------------------------------
// Files

/// Bytes of the regular files under `directory`; with `extension`, only files ending so.
uint64_t DirectoryBytes(const fs::path& directory, const std::string& extension = "") {
  uint64_t total = 0;
  for (const auto& entry : fs::recursive_directory_iterator(directory)) {
    if (!entry.is_regular_file()) continue;
    if (!extension.empty() && entry.path().extension() != extension) continue;
    total += entry.file_size();
  }
  return total;
}

/// Keys + values of every live entry of the RocksDB database in `directory`: the state's
/// logical size, whatever old versions and WAL the files still hold. Opens it read-only.
uint64_t LiveBytes(const fs::path& directory) {
  rocksdb::Options options;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status status = rocksdb::DB::OpenForReadOnly(options, directory.string(), &raw);
  if (!status.ok())
    throw std::runtime_error("reading " + directory.string() + ": " + status.ToString());
  std::unique_ptr<rocksdb::DB> db(raw);
  uint64_t total = 0;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) total += it->key().size() + it->value().size();
  if (!it->status().ok()) throw std::runtime_error("scanning: " + it->status().ToString());
  it.reset();
  (void)db->Close();
  return total;
}

/// Drops the directory's files from the page cache (written back first), so that the next
/// open reads them from the disk as after a reboot. Needs no privileges.
void EvictFromPageCache(const fs::path& directory) {
  for (const auto& entry : fs::recursive_directory_iterator(directory)) {
    if (!entry.is_regular_file()) continue;
    int fd = ::open(entry.path().c_str(), O_RDONLY);
    if (fd < 0) continue;
    (void)::fdatasync(fd);
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

// ---------------------------------------------------------------------------------------
// Configuration

struct Config {
  uint64_t rows = 5'000'000;
  uint64_t keys = 1'000'000;
  int repeats = 3;
  std::string data_dir;
  std::string scenarios = "generator,stateless,aggregate,commit,recovery";
  // Which checkpoint intervals the engine scenarios run: one alone is for profiling.
  std::string intervals = "1s,on-demand";
  bool markdown = false;
  double state_gb = 0;
  int baseline_writes = 10;
  int poll_ms = 2;
  int cpus = 0;
  uint64_t timeout_s = 3600;
  // The planner revision the views are created with (an older one: the layout of views
  // created by an earlier release, for comparing the two in one build).
  uint32_t plan_version = stave::planner::kPlanVersion;
};

const std::set<std::string> kScenarioNames = {"generator", "stateless", "aggregate", "commit",
                                              "recovery"};

std::set<std::string> ParseScenarios(const std::string& list) {
  std::set<std::string> chosen;
  std::stringstream stream(list);
  std::string name;
  while (std::getline(stream, name, ',')) {
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty()) continue;
    if (name == "none") continue;
    if (name == "all") {
      chosen.insert(kScenarioNames.begin(), kScenarioNames.end());
      continue;
    }
    if (!kScenarioNames.count(name)) {
      throw CLI::ValidationError("--scenarios", "unknown scenario '" + name +
                                                    "' (known: generator, stateless, aggregate, "
                                                    "commit, recovery, all, none)");
    }
    chosen.insert(name);
  }
  return chosen;
}

// ---------------------------------------------------------------------------------------
// SQL

int64_t CountRows(Database* database, const std::string& relation) {
  QueryResult result = ExecuteSql(database, "SELECT count(*) FROM " + relation);
  return result.rows.at(0).at(0).int_value();
}

/// The datagen options of the benchmark stream (without the connector), also used to build
/// the generator baseline, so both produce the same rows.
std::map<std::string, std::string> StreamOptions(uint64_t rows, uint64_t keys, int64_t pad_length) {
  std::map<std::string, std::string> options = {
      {"fields.id.kind", "sequence"},
      {"fields.id.start", "1"},
      {"fields.id.end", std::to_string(rows)},
      {"fields.v.min", "0"},
      {"fields.v.max", "1000"},
      {"seed", "1"},
  };
  if (pad_length > 0) {
    options["fields.pad.length"] = std::to_string(pad_length);
  } else {
    options["fields.k.min"] = "0";
    options["fields.k.max"] = std::to_string(keys - 1);
  }
  return options;
}

std::string StreamSql(uint64_t rows, uint64_t keys, int64_t pad_length) {
  std::string sql = pad_length > 0 ? "CREATE STREAM s (id BIGINT, v BIGINT, pad VARCHAR) WITH ("
                                   : "CREATE STREAM s (id BIGINT, k BIGINT, v BIGINT) WITH (";
  sql += "connector = 'datagen'";
  for (const auto& [key, value] : StreamOptions(rows, keys, pad_length)) {
    sql += fmt::format(", '{}' = '{}'", key, value);
  }
  return sql + ")";
}

constexpr char kStatelessView[] =
    "CREATE MATERIALIZED VIEW m AS SELECT id, v * 2 AS v2 FROM s WHERE v % 10 < 5";
constexpr char kAggregateView[] =
    "CREATE MATERIALIZED VIEW m AS SELECT k, count(*) AS n, sum(v) AS total FROM s GROUP BY k";

std::string LargeStateView(uint64_t keys) {
  return fmt::format(
      "CREATE MATERIALIZED VIEW m AS SELECT id % {0} AS k, count(*) AS n, sum(v) AS total, "
      "max(pad) AS pad FROM s GROUP BY id % {0}",
      keys);
}

stave::executor::DatagenSource MakeGenerator(uint64_t rows, uint64_t keys) {
  std::vector<stave::planner::Column> columns = {{"id", stave::TypeId::kInt64, false},
                                                 {"k", stave::TypeId::kInt64, false},
                                                 {"v", stave::TypeId::kInt64, false}};
  return stave::executor::DatagenSource(
      stave::executor::DatagenOptions::Parse(StreamOptions(rows, keys, 0), columns));
}

/// What the views must hold once every row is in, computed from the generator itself.
struct Expected {
  int64_t stateless_rows = 0;  // rows with v % 10 < 5
  int64_t distinct_keys = 0;
};

Expected ComputeExpected(uint64_t rows, uint64_t keys) {
  auto source = MakeGenerator(rows, keys);
  std::vector<bool> seen(keys, false);
  Expected expected;
  stave::executor::Chunk chunk;
  auto wake = Clock::time_point::max();
  while (source.Poll(stave::executor::kChunkRows, &chunk, &wake) ==
         stave::executor::SourceReader::PollStatus::kData) {
    const auto& k = chunk.columns[1].ints;
    const auto& v = chunk.columns[2].ints;
    for (size_t r = 0; r < chunk.size(); ++r) {
      if (v[r] % 10 < 5) ++expected.stateless_rows;
      if (!seen[static_cast<size_t>(k[r])]) {
        seen[static_cast<size_t>(k[r])] = true;
        ++expected.distinct_keys;
      }
    }
  }
  return expected;
}

// ---------------------------------------------------------------------------------------
// Scenario 1: the generator alone

struct GeneratorRun {
  Span span;
  uint64_t rows = 0;
};

/// Polls a fresh generator of the stream's rows until it finishes, in chunks of the size
/// jobs poll, and again until at least half a second has passed (one pass is too short to
/// time well).
GeneratorRun RunGenerator(const Config& config) {
  GeneratorRun run;
  Stopwatch watch;
  do {
    auto source = MakeGenerator(config.rows, config.keys);
    stave::executor::Chunk chunk;
    auto wake = Clock::time_point::max();
    uint64_t rows = 0;
    while (source.Poll(stave::executor::kChunkRows, &chunk, &wake) ==
           stave::executor::SourceReader::PollStatus::kData) {
      rows += chunk.size();
    }
    if (rows != config.rows) {
      throw std::runtime_error(fmt::format("generator made {} rows, not {}", rows, config.rows));
    }
    run.rows += rows;
    run.span = watch.Elapsed();
  } while (run.span.wall < 0.5);
  return run;
}

// ---------------------------------------------------------------------------------------
// Scenarios 2-5: a view in the engine

struct Workload {
  std::string name;
  std::string stream_sql;
  std::string view_sql;
  uint64_t rows = 0;
  int64_t expected_view_rows = -1;  // -1: not known in advance
};

struct Recovery {
  double state_bytes = 0;
  double wal_bytes = 0;     // of which RocksDB's write-ahead log, replayed by the first Open
  double live_bytes = 0;    // keys + values of the live (latest) entries: the logical state
  double cold_open_s = 0;   // Database::Open, page cache evicted
  double cold_serve_s = 0;  // ... until SELECT count(*) FROM m answers right
  double warm_open_s = 0;   // a second restart, files in the page cache
  double warm_serve_s = 0;
};

struct EngineRun {
  Span processing;  // CREATE MATERIALIZED VIEW until the view has read every row
  Span checkpoint;  // the final CHECKPOINT
  Span total() const {
    Span span = processing;
    span += checkpoint;
    return span;
  }
  std::vector<double> commit_us;  // commits while processing (every 1 s, or early)
  std::vector<double> write_us;   // of each, its synced write
  std::vector<double> commit_bytes;
  // CPU seconds of the commits while processing: their barrier work in the dataflow's tasks
  // and the coordinator's commit (stave_catalog.checkpoints); RocksDB's compactions.
  double barrier_cpu_s = 0;
  double commit_cpu_s = 0;
  double compaction_cpu_s = 0;
  uint64_t commits = 0;
  double final_commit_us = 0;
  double final_write_us = 0;  // of it, the synced write
  double final_commit_bytes = 0;
  int64_t view_rows = 0;
  std::optional<Recovery> recovery;
};

std::unique_ptr<Database> OpenDatabase(const fs::path& directory,
                                       std::chrono::milliseconds interval,
                                       const stave::planner::ConnectorRegistry* connectors,
                                       uint32_t plan_version) {
  DatabaseOptions options;
  options.data_directory = directory.string();
  options.checkpoint_interval = interval;
  options.plan_version = plan_version;
  return Database::Open(options, connectors);
}

/// Reopens `directory` and times recovery: Database::Open, then until `SELECT count(*)`
/// over the view answers `expected`.
std::pair<double, double> TimeRecovery(const fs::path& directory,
                                       const stave::planner::ConnectorRegistry* connectors,
                                       int64_t expected, uint64_t timeout_s) {
  auto start = Clock::now();
  // Recovery plans the view with the revision it was created with.
  auto database = OpenDatabase(directory, std::chrono::milliseconds(1000), connectors,
                               stave::planner::kPlanVersion);
  double open_s = Seconds(Clock::now() - start);
  while (true) {
    int64_t count = -1;
    try {
      count = CountRows(database.get(), "m");
    } catch (const stave::SqlError&) {
      // Not serving yet.
    }
    if (count == expected) break;
    if (Seconds(Clock::now() - start) > static_cast<double>(timeout_s)) {
      throw std::runtime_error(
          fmt::format("after recovery the view has {} rows, not {}", count, expected));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  double serve_s = Seconds(Clock::now() - start);
  database->Shutdown();
  return {open_s, serve_s};
}

EngineRun RunEngine(const Config& config, const fs::path& directory, const Workload& workload,
                    std::chrono::milliseconds interval, bool recovery) {
  stave::planner::ConnectorRegistry connectors;
  stave::executor::RegisterBuiltinConnectors(&connectors);
  auto database = OpenDatabase(directory, interval, &connectors, config.plan_version);
  ExecuteSql(database.get(), workload.stream_sql);

  EngineRun run;
  // Each commit is one epoch; the engine keeps a record of each (stave_catalog.checkpoints).
  auto* committed_epoch = database->metrics()->Gauge("stave_committed_epoch");
  uint64_t compaction_micros = database->store().compaction_cpu_micros();
  Stopwatch processing;
  ExecuteSql(database.get(), workload.view_sql);
  int64_t create_epoch = committed_epoch->load();  // the CREATE's own commit
  auto* rows_in = database->metrics()->Counter("stave_view_rows_in_total", {{"view", "m"}});
  uint64_t last_rows = 0;
  auto last_progress = Clock::now();
  while (true) {
    uint64_t rows = rows_in->load(std::memory_order_relaxed);
    if (rows >= workload.rows) break;
    if (rows != last_rows) {
      last_rows = rows;
      last_progress = Clock::now();
    } else if (Seconds(Clock::now() - last_progress) > 60) {
      auto view = database->catalog().Find("m");
      std::optional<SqlError> error = view ? database->engine()->JobError(view->id) : std::nullopt;
      throw std::runtime_error(fmt::format("view {} stalled at {} of {} rows{}{}", workload.name,
                                           rows, workload.rows, error ? ": " : "",
                                           error ? error->what() : ""));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(config.poll_ms));
  }
  run.processing = processing.Elapsed();
  run.compaction_cpu_s =
      static_cast<double>(database->store().compaction_cpu_micros() - compaction_micros) / 1e6;
  int64_t processed_epoch = committed_epoch->load();

  Stopwatch checkpoint;
  ExecuteSql(database.get(), "CHECKPOINT");
  run.checkpoint = checkpoint.Elapsed();
  int64_t final_epoch = committed_epoch->load();

  // The commits while the view processed (periodic, or early when uncommitted state passed
  // the engine's memory bound), and the final CHECKPOINT's.
  QueryResult history = ExecuteSql(
      database.get(),
      fmt::format("SELECT epoch, duration_ms, bytes, barrier_cpu_ms, commit_cpu_ms, write_ms "
                  "FROM stave_catalog.checkpoints WHERE epoch > {} ORDER BY epoch",
                  create_epoch));
  for (const auto& row : history.rows) {
    int64_t epoch = row.at(0).int_value();
    double micros = row.at(1).double_value() * 1000;
    double write_micros = row.at(5).double_value() * 1000;
    double bytes = static_cast<double>(row.at(2).int_value());
    if (epoch <= processed_epoch) {
      run.commit_us.push_back(micros);
      run.write_us.push_back(write_micros);
      run.commit_bytes.push_back(bytes);
      run.barrier_cpu_s += row.at(3).double_value() / 1000;
      run.commit_cpu_s += row.at(4).double_value() / 1000;
    } else if (epoch == final_epoch) {
      run.final_commit_us = micros;
      run.final_write_us = write_micros;
      run.final_commit_bytes = bytes;
    }
  }
  run.commits = static_cast<uint64_t>(processed_epoch - create_epoch);
  if (run.commit_us.size() != run.commits) {
    throw std::runtime_error(fmt::format("the checkpoint history holds {} of the {} commits",
                                         run.commit_us.size(), run.commits));
  }

  run.view_rows = CountRows(database.get(), "m");
  if (workload.expected_view_rows >= 0 && run.view_rows != workload.expected_view_rows) {
    throw std::runtime_error(fmt::format("view {} has {} rows, expected {}", workload.name,
                                         run.view_rows, workload.expected_view_rows));
  }
  database->Shutdown();
  database.reset();

  if (recovery) {
    Recovery result;
    result.state_bytes = static_cast<double>(DirectoryBytes(directory));
    result.wal_bytes = static_cast<double>(DirectoryBytes(directory, ".log"));
    result.live_bytes = static_cast<double>(LiveBytes(directory));
    EvictFromPageCache(directory);
    std::tie(result.cold_open_s, result.cold_serve_s) =
        TimeRecovery(directory, &connectors, run.view_rows, config.timeout_s);
    std::tie(result.warm_open_s, result.warm_serve_s) =
        TimeRecovery(directory, &connectors, run.view_rows, config.timeout_s);
    run.recovery = result;
  }
  return run;
}

// ---------------------------------------------------------------------------------------
// Scenario 4 baselines: synced writes of the same size, straight to RocksDB and to a file

struct SyncedWrites {
  std::vector<double> seconds;
  double bytes = 0;       // per write
  uint64_t keys = 0;      // per write (RocksDB)
  size_t value_size = 0;  // (RocksDB)
};

/// How a raw RocksDB baseline commits its batches.
enum class RawCommit {
  kWrite,   // one synced WriteBatch: the write-ahead log and the memtable
  kIngest,  // the records sorted into an SST file, synced, and ingested
};

/// Opens RocksDB and commits `writes` batches of `target_bytes` each (16-byte keys like a
/// state key, random values of `value_size` bytes, the same keys every time as an aggregate
/// updating its groups), each either as a synced write or as an ingested file. Only the
/// commit is timed: for a file that is writing the records, sorted beforehand, into an
/// uncompressed file, syncing it and ingesting it, the least any commit of these records
/// through RocksDB does (Stave's epoch files do the same from runs the dataflow's tasks
/// sorted, storage/epoch_file.h).
SyncedWrites RawRocksDbCommits(const fs::path& directory, double target_bytes, size_t value_size,
                               int writes, RawCommit how) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.IncreaseParallelism(2);
  options.OptimizeLevelStyleCompaction();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status status = rocksdb::DB::Open(options, directory.string(), &raw);
  if (!status.ok()) throw std::runtime_error("raw RocksDB: " + status.ToString());
  std::unique_ptr<rocksdb::DB> db(raw);

  std::mt19937_64 random(42);
  SyncedWrites result;
  for (int w = 0; w < writes; ++w) {
    std::vector<std::pair<std::string, std::string>> records;
    double bytes = 0;
    while (bytes < target_bytes) {
      std::string key(16, '\0');
      uint64_t prefix = 0x0300000001000000ULL;  // like a state key: section, table, vnode
      uint64_t id = __builtin_bswap64(records.size() * 0x9E3779B97F4A7C15ULL);
      std::memcpy(key.data(), &prefix, 8);
      std::memcpy(key.data() + 8, &id, 8);
      std::string value(value_size, '\0');
      for (size_t i = 0; i < value.size(); i += 8) {
        uint64_t bits = random();
        std::memcpy(value.data() + i, &bits, std::min<size_t>(8, value.size() - i));
      }
      bytes += static_cast<double>(key.size() + value.size() + 3);  // as in a WriteBatch
      records.emplace_back(std::move(key), std::move(value));
    }
    rocksdb::WriteBatch batch;
    if (how == RawCommit::kWrite) {
      for (const auto& [key, value] : records) batch.Put(key, value);
    } else {
      std::sort(records.begin(), records.end());
    }
    auto start = Clock::now();
    if (how == RawCommit::kWrite) {
      rocksdb::WriteOptions write_options;
      write_options.sync = true;
      status = db->Write(write_options, &batch);
    } else {
      std::string path = (directory / ("commit-" + std::to_string(w) + ".sst")).string();
      // Uncompressed, as Stave's epoch files: SstFileWriter would take the last level's LZ4.
      rocksdb::Options file_options = options;
      file_options.compression = rocksdb::kNoCompression;
      file_options.compression_per_level.clear();
      file_options.bottommost_compression = rocksdb::kDisableCompressionOption;
      rocksdb::SstFileWriter writer(rocksdb::EnvOptions(file_options), file_options);
      status = writer.Open(path);
      for (size_t i = 0; i < records.size() && status.ok(); ++i) {
        status = writer.Put(records[i].first, records[i].second);
      }
      if (status.ok()) status = writer.Finish();  // Syncs the file.
      rocksdb::IngestExternalFileOptions ingest;
      ingest.move_files = true;
      if (status.ok()) status = db->IngestExternalFile({path}, ingest);
    }
    result.seconds.push_back(Seconds(Clock::now() - start));
    if (!status.ok()) throw std::runtime_error("raw RocksDB commit: " + status.ToString());
    result.bytes = bytes;
    result.keys = records.size();
    result.value_size = value_size;
  }
  (void)db->Close();
  return result;
}

/// Appends `writes` blocks of `bytes` random bytes to a file, each followed by fdatasync:
/// the disk's raw synced write rate at that size.
SyncedWrites RawFileWrites(const fs::path& directory, double bytes, int writes) {
  fs::path path = directory / "synced-writes";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path.string());
  std::vector<char> block(static_cast<size_t>(bytes));
  std::mt19937_64 random(7);
  for (size_t i = 0; i + 8 <= block.size(); i += 8) {
    uint64_t bits = random();
    std::memcpy(block.data() + i, &bits, 8);
  }
  SyncedWrites result;
  result.bytes = static_cast<double>(block.size());
  for (int w = 0; w < writes; ++w) {
    auto start = Clock::now();
    size_t done = 0;
    while (done < block.size()) {
      ssize_t n = ::write(fd, block.data() + done, block.size() - done);
      if (n <= 0) throw std::runtime_error("write failed");
      done += static_cast<size_t>(n);
    }
    if (::fdatasync(fd) != 0) throw std::runtime_error("fdatasync failed");
    result.seconds.push_back(Seconds(Clock::now() - start));
  }
  ::close(fd);
  fs::remove(path);
  return result;
}

// ---------------------------------------------------------------------------------------
// Reporting

std::string MachineLine() {
  Machine machine = DescribeMachine();
  return fmt::format("{} CPUs online ({}), {} usable by this process; load average {:.2f}",
                     machine.online_cpus, machine.cpu_model, machine.usable_cpus,
                     machine.load_average);
}

// ---------------------------------------------------------------------------------------

int RunAndReport(const Config& config, const std::set<std::string>& scenarios,
                 const std::string& command) {
  if (config.cpus > 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c = 0; c < config.cpus; ++c) CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
      throw std::runtime_error("sched_setaffinity failed");
  }
  std::string machine_before = MachineLine();
  DataDirectory root("stave-bench", config.data_dir);
  Progress(kProgram, fmt::format("data under {}; {}", root.path().string(), machine_before));

  bool want_generator = scenarios.count("generator") > 0;
  bool want_stateless = scenarios.count("stateless") > 0;
  bool want_aggregate = scenarios.count("aggregate") > 0;
  bool want_commit = scenarios.count("commit") > 0;
  bool want_recovery = scenarios.count("recovery") > 0;
  // The commit-time distribution and recovery come from the aggregate's 1 s runs.
  bool run_aggregate_1s = want_aggregate || want_commit || want_recovery;

  Expected expected;
  bool want_1s = config.intervals.find("1s") != std::string::npos;
  bool want_on_demand = config.intervals.find("on-demand") != std::string::npos;
  if (want_stateless || run_aggregate_1s) {
    Progress(kProgram, "counting the expected view contents from the generator");
    expected = ComputeExpected(config.rows, config.keys);
  }
  Workload stateless{"stateless", StreamSql(config.rows, config.keys, 0), kStatelessView,
                     config.rows, expected.stateless_rows};
  Workload aggregate{"aggregate", StreamSql(config.rows, config.keys, 0), kAggregateView,
                     config.rows, expected.distinct_keys};

  std::vector<GeneratorRun> generator_runs;
  std::map<std::string, std::vector<EngineRun>> runs;  // "stateless/1s" → runs
  const auto one_second = std::chrono::milliseconds(1000);
  const auto on_demand = std::chrono::milliseconds(0);

  auto engine = [&](const Workload& workload, std::chrono::milliseconds interval, bool recovery) {
    if (!(interval.count() > 0 ? want_1s : want_on_demand)) return;
    std::string label = workload.name + (interval.count() > 0 ? "/1s" : "/on-demand");
    RemoveOnExit directory{root.Fresh(workload.name)};
    EngineRun run = RunEngine(config, directory.path, workload, interval, recovery);
    Progress(kProgram,
             fmt::format("{}: {:.2f} s processing ({:.2f} CPU-s) with {} commits, final CHECKPOINT "
                         "{:.3f} s, view rows {}{}",
                         label, run.processing.wall, run.processing.cpu, run.commits,
                         run.checkpoint.wall, run.view_rows,
                         run.recovery
                             ? fmt::format(", recovery {:.3f} s cold / {:.3f} s warm, "
                                           "{} on disk",
                                           run.recovery->cold_serve_s, run.recovery->warm_serve_s,
                                           Bytes(run.recovery->state_bytes))
                             : ""));
    runs[label].push_back(std::move(run));
  };

  // Repeats are interleaved (and the order of the two intervals alternates) so that a
  // change in the machine's load hits every configuration alike.
  for (int repeat = 0; repeat < config.repeats; ++repeat) {
    Progress(kProgram, fmt::format("repeat {} of {}", repeat + 1, config.repeats));
    bool one_second_first = repeat % 2 == 0;
    if (want_generator) {
      generator_runs.push_back(RunGenerator(config));
      Progress(kProgram, fmt::format("generator: {} rows in {:.2f} s", generator_runs.back().rows,
                                     generator_runs.back().span.wall));
    }
    if (want_stateless) {
      engine(stateless, one_second_first ? one_second : on_demand, false);
      engine(stateless, one_second_first ? on_demand : one_second, false);
    }
    if (run_aggregate_1s && one_second_first) engine(aggregate, one_second, want_recovery);
    if (want_aggregate) engine(aggregate, on_demand, false);
    if (run_aggregate_1s && !one_second_first) engine(aggregate, one_second, want_recovery);
  }

  // The grown state for the "1 GB" recovery target: id % keys groups (every key present),
  // each holding a random string in max(pad) and in the view's row.
  std::vector<EngineRun> large_runs;
  uint64_t large_keys = config.keys;
  int64_t pad_length = 0;
  if (config.state_gb > 0) {
    // Per group: the aggregate state and the view row each hold the string, plus ~100
    // bytes of keys, counters and RocksDB overhead.
    pad_length = std::max<int64_t>(
        8,
        static_cast<int64_t>((config.state_gb * 1e9 / static_cast<double>(large_keys) - 100) / 2));
    Workload large{"large-state", StreamSql(2 * large_keys, large_keys, pad_length),
                   LargeStateView(large_keys), 2 * large_keys, static_cast<int64_t>(large_keys)};
    for (int repeat = 0; repeat < config.repeats; ++repeat) {
      RemoveOnExit directory{root.Fresh(large.name)};
      Progress(kProgram, fmt::format("large state: {} keys, {}-byte strings, repeat {} of {}",
                                     large_keys, pad_length, repeat + 1, config.repeats));
      large_runs.push_back(RunEngine(config, directory.path, large, one_second, true));
      const EngineRun& run = large_runs.back();
      Progress(kProgram,
               fmt::format("large state: {:.2f} s processing, recovery {:.3f} s cold / {:.3f} s "
                           "warm, {} on disk",
                           run.processing.wall, run.recovery->cold_serve_s,
                           run.recovery->warm_serve_s, Bytes(run.recovery->state_bytes)));
    }
  }

  // Baselines for the commit time: synced writes of the Stave commits' median size.
  struct Baseline {
    std::string of;
    SyncedWrites rocksdb;                  // 100-byte values
    std::optional<SyncedWrites> matched;   // entries of Stave's average size
    std::optional<SyncedWrites> ingested;  // the same entries, committed as a file
    SyncedWrites file;
  };
  std::vector<Baseline> baselines;
  auto pooled = [&](const std::string& label, auto field) {
    std::vector<double> all;
    for (const auto& run : runs[label]) {
      const std::vector<double>& values = run.*field;
      all.insert(all.end(), values.begin(), values.end());
    }
    return all;
  };
  if (want_commit) {
    for (std::string label : {"stateless/1s", "aggregate/1s"}) {
      std::vector<double> bytes = pooled(label, &EngineRun::commit_bytes);
      if (bytes.empty()) continue;
      Baseline baseline;
      baseline.of = label;
      double size = Median(bytes);
      Progress(kProgram,
               fmt::format("baseline: {} synced writes of {} (RocksDB, then a plain file)",
                           config.baseline_writes, Bytes(size)));
      {
        RemoveOnExit directory{root.Fresh("raw-rocksdb")};
        baseline.rocksdb =
            RawRocksDbCommits(directory.path, size, 100, config.baseline_writes, RawCommit::kWrite);
      }
      // Stave's entries are smaller than 100 bytes, so equal bytes means more keys, and a
      // memtable insert per key. The on-demand run's one final commit holds a known number
      // of entries (each group's view row, which holds its state from plan revision 6 on,
      // and before that its state apart; each view row), which gives Stave's average entry
      // size: a second baseline writes entries of that size.
      std::string workload = label.substr(0, label.find('/'));
      const auto& on_demand_runs = runs[workload + "/on-demand"];
      if (!on_demand_runs.empty()) {
        std::vector<double> final_bytes;
        for (const auto& run : on_demand_runs) final_bytes.push_back(run.final_commit_bytes);
        double per_group = config.plan_version >= 6 ? 1.0 : 2.0;
        double entries = workload == "aggregate"
                             ? per_group * static_cast<double>(expected.distinct_keys)
                             : static_cast<double>(expected.stateless_rows);
        // Per entry in a WriteBatch: a type byte, two length varints, the 16-byte key.
        double value_size = Median(final_bytes) / entries - 16 - 3;
        if (value_size >= 1) {
          auto entry_size = static_cast<size_t>(std::lround(value_size));
          {
            RemoveOnExit directory{root.Fresh("raw-rocksdb")};
            baseline.matched = RawRocksDbCommits(directory.path, size, entry_size,
                                                 config.baseline_writes, RawCommit::kWrite);
          }
          RemoveOnExit directory{root.Fresh("raw-rocksdb-ingest")};
          baseline.ingested = RawRocksDbCommits(directory.path, size, entry_size,
                                                config.baseline_writes, RawCommit::kIngest);
        }
      }
      {
        RemoveOnExit directory{root.Fresh("raw-file")};
        baseline.file = RawFileWrites(directory.path, size, config.baseline_writes);
      }
      baselines.push_back(std::move(baseline));
    }
  }

  // ---- report
  std::string out;
  out += fmt::format("engine_bench: {}\n", command);
  out += fmt::format("machine at start: {}\n", machine_before);
  out += fmt::format("machine at end:   {}\n", MachineLine());
  out += fmt::format(
      "rows {}, keys {}, repeats {} (medians over repeats; ratios are medians of "
      "per-repeat ratios)\n\n",
      config.rows, config.keys, config.repeats);

  auto median_of = [](const std::vector<EngineRun>& list, auto get) {
    std::vector<double> values;
    for (const auto& run : list) values.push_back(get(run));
    return Median(values);
  };
  // Per-repeat ratio of the 1 s runs to the on-demand runs of the same repeat.
  auto paired_ratio = [&](const std::string& workload, auto get) {
    const auto& a = runs[workload + "/1s"];
    const auto& b = runs[workload + "/on-demand"];
    std::vector<double> ratios;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      ratios.push_back(get(a[i]) / get(b[i]));
    return Median(ratios);
  };

  std::vector<std::string> headline;  // each measurement against its target
  if (want_generator || want_stateless || want_aggregate) {
    out +=
        "Throughput (events = source rows; 'processing' = CREATE MATERIALIZED VIEW until the view "
        "has "
        "read every row; 'durable' adds the final CHECKPOINT; cores = CPU time / wall time of the "
        "whole process; commits in flight = share of the processing time during which a "
        "checkpoint was between its barrier and its synced commit; processing goes on "
        "meanwhile)\n\n";
    Table table({"scenario", "checkpoints", "events/s processing", "events/s durable", "cores used",
                 "events per CPU-s", "vs on-demand (processing)", "vs on-demand (durable)",
                 "commits in flight"});
    if (!generator_runs.empty()) {
      std::vector<double> rate, cores, per_cpu;
      for (const auto& run : generator_runs) {
        rate.push_back(static_cast<double>(run.rows) / run.span.wall);
        cores.push_back(run.span.cpu / run.span.wall);
        per_cpu.push_back(static_cast<double>(run.rows) / run.span.cpu);
      }
      table.Add({"generator (baseline)", "-", Rate(Median(rate)), "-", Ratio(Median(cores)),
                 Rate(Median(per_cpu)), "-", "-", "-"});
    }
    for (std::string workload : {"stateless", "aggregate"}) {
      if ((workload == "stateless" && !want_stateless) ||
          (workload == "aggregate" && !want_aggregate)) {
        continue;
      }
      uint64_t rows = config.rows;
      for (std::string interval : {"1s", "on-demand"}) {
        const auto& list = runs[workload + "/" + interval];
        if (list.empty()) continue;
        double rows_d = static_cast<double>(rows);
        bool periodic = interval == "1s";
        table.Add({
            workload + " " + (periodic ? "every 1 s" : "on demand"),
            [&] {
              double commits = median_of(
                  list, [](const EngineRun& r) { return static_cast<double>(r.commits); });
              return commits > 0 ? fmt::format("{:.0f} + final", commits)
                                 : std::string("final only");
            }(),
            Rate(median_of(list, [&](const EngineRun& r) { return rows_d / r.processing.wall; })),
            Rate(median_of(list, [&](const EngineRun& r) { return rows_d / r.total().wall; })),
            Ratio(
                median_of(list, [](const EngineRun& r) { return r.total().cpu / r.total().wall; })),
            Rate(median_of(list, [&](const EngineRun& r) { return rows_d / r.total().cpu; })),
            periodic
                ? Ratio(paired_ratio(
                      workload, [&](const EngineRun& r) { return rows_d / r.processing.wall; }))
                : "1",
            periodic ? Ratio(paired_ratio(
                           workload, [&](const EngineRun& r) { return rows_d / r.total().wall; }))
                     : "1",
            fmt::format("{:.1f} %", 100 * median_of(list,
                                                    [](const EngineRun& r) {
                                                      double sum = 0;
                                                      for (double us : r.commit_us) sum += us / 1e6;
                                                      return sum / r.processing.wall;
                                                    })),
        });
      }
    }
    out += table.Render(config.markdown) + "\n";

    out +=
        "Checkpoint CPU while processing, as a share of the process's CPU time (the commits made "
        "while the view processed: their barrier work in the dataflow's tasks and the "
        "coordinator's commit, from stave_catalog.checkpoints; RocksDB's compactions apart). "
        "Unlike the rates above it does not move with the machine's speed between runs; it "
        "leaves out what checkpoints cost the rows' own processing (caches, fresh memory)\n\n";
    Table cpu_table(
        {"scenario", "barrier CPU", "commit CPU", "barrier + commit", "compaction CPU"});
    // The median over a list of runs of `seconds(run)` as a share of the run's processing CPU.
    auto cpu_share = [&](const std::vector<EngineRun>& list, auto seconds) {
      return median_of(list, [&](const EngineRun& r) { return seconds(r) / r.processing.cpu; });
    };
    auto barrier = [](const EngineRun& r) { return r.barrier_cpu_s; };
    auto commit = [](const EngineRun& r) { return r.commit_cpu_s; };
    auto checkpoints = [](const EngineRun& r) { return r.barrier_cpu_s + r.commit_cpu_s; };
    auto compactions = [](const EngineRun& r) { return r.compaction_cpu_s; };
    auto percent = [](double share) { return fmt::format("{:.1f} %", 100 * share); };
    for (std::string workload : {"stateless", "aggregate"}) {
      for (std::string interval : {"1s", "on-demand"}) {
        const auto& list = runs[workload + "/" + interval];
        if (list.empty()) continue;
        cpu_table.Add({workload + (interval == "1s" ? " every 1 s" : " on demand"),
                       percent(cpu_share(list, barrier)), percent(cpu_share(list, commit)),
                       percent(cpu_share(list, checkpoints)),
                       percent(cpu_share(list, compactions))});
      }
    }
    out += cpu_table.Render(config.markdown) + "\n";
    for (std::string workload : {"stateless", "aggregate"}) {
      const auto& periodic = runs[workload + "/1s"];
      if (periodic.empty()) continue;
      headline.push_back(fmt::format(
          "{}: checkpoints every 1 s take {:.1f} % of the CPU in their barriers and commits, "
          "compactions {:.1f} % (target: overhead under 5 %)",
          workload, 100 * cpu_share(periodic, checkpoints),
          100 * cpu_share(periodic, compactions)));
    }
    for (std::string workload : {"stateless", "aggregate"}) {
      if (runs[workload + "/1s"].empty() || runs[workload + "/on-demand"].empty()) continue;
      double rows_d = static_cast<double>(config.rows);
      double processing =
          paired_ratio(workload, [&](const EngineRun& r) { return rows_d / r.processing.wall; });
      double durable =
          paired_ratio(workload, [&](const EngineRun& r) { return rows_d / r.total().wall; });
      headline.push_back(
          fmt::format("{}: checkpoints every 1 s change processing throughput by {:+.0f} % and "
                      "durable throughput "
                      "by {:+.0f} % against on-demand (target: overhead under 5 %)",
                      workload, 100 * (processing - 1), 100 * (durable - 1)));
    }
  }

  if (want_commit) {
    out +=
        "Checkpoint commit time (stave_catalog.checkpoints: barrier to synced commit, every commit "
        "made while the view processed, all repeats pooled), beside synced writes of the same size "
        "in the same run\n\n";
    Table table({"what", "n", "bytes per commit (median)", "p50", "p99", "MB/s at p50",
                 "Stave p50 / this p50"});
    for (const Baseline& baseline : baselines) {
      std::vector<double> us = pooled(baseline.of, &EngineRun::commit_us);
      std::vector<double> bytes = pooled(baseline.of, &EngineRun::commit_bytes);
      double p50 = Percentile(us, 50) / 1e6;
      table.Add({"Stave " + baseline.of + " commit", std::to_string(us.size()),
                 Bytes(Median(bytes)), Millis(p50), Millis(Percentile(us, 99) / 1e6),
                 fmt::format("{:.0f}", Median(bytes) / p50 / 1e6), "1"});
      // The commit's own write, once every task has reported its part of the epoch: the
      // part of the commit time that the disk's synced write rate bounds.
      std::vector<double> write_us = pooled(baseline.of, &EngineRun::write_us);
      double own_write_p50 = Percentile(write_us, 50) / 1e6;
      table.Add(
          {"Stave " + baseline.of + " commit: its synced write", std::to_string(write_us.size()),
           Bytes(Median(bytes)), Millis(own_write_p50), Millis(Percentile(write_us, 99) / 1e6),
           fmt::format("{:.0f}", Median(bytes) / own_write_p50 / 1e6), Ratio(p50 / own_write_p50)});
      auto add = [&](const std::string& what, const SyncedWrites& writes) {
        double write_p50 = Percentile(writes.seconds, 50);
        table.Add({what, std::to_string(writes.seconds.size()), Bytes(writes.bytes),
                   Millis(write_p50), Millis(Percentile(writes.seconds, 99)),
                   fmt::format("{:.0f}", writes.bytes / write_p50 / 1e6), Ratio(p50 / write_p50)});
      };
      double file_p50 = Percentile(baseline.file.seconds, 50);
      headline.push_back(fmt::format(
          "{} commit: p50 {} for {} ({:.0f} MB/s) = {:.1f}x the disk's write + fdatasync of the "
          "same bytes ({:.0f} MB/s); its synced write alone p50 {} = {:.1f}x{}",
          baseline.of, Millis(p50), Bytes(Median(bytes)), Median(bytes) / p50 / 1e6, p50 / file_p50,
          baseline.file.bytes / file_p50 / 1e6, Millis(own_write_p50), own_write_p50 / file_p50,
          baseline.ingested
              ? fmt::format(" and {:.2f}x RocksDB's own SST file of as many entries, written "
                            "from sorted records, synced and ingested (idle)",
                            own_write_p50 / Percentile(baseline.ingested->seconds, 50))
              : ""));
      if (baseline.matched) {
        add(fmt::format("raw RocksDB synced WriteBatch, {} keys x {} B (Stave's entry size)",
                        baseline.matched->keys, baseline.matched->value_size),
            *baseline.matched);
      }
      if (baseline.ingested) {
        add("raw RocksDB SST file of as many entries, from sorted records, synced, ingested",
            *baseline.ingested);
      }
      add(fmt::format("raw RocksDB synced WriteBatch, {} keys x 100 B", baseline.rocksdb.keys),
          baseline.rocksdb);
      add("raw file write + fdatasync", baseline.file);
    }
    for (std::string label : {"stateless/on-demand", "aggregate/on-demand"}) {
      const auto& list = runs[label];
      if (list.empty()) continue;
      double p50 = median_of(list, [](const EngineRun& r) { return r.final_commit_us / 1e6; });
      double bytes = median_of(list, [](const EngineRun& r) { return r.final_commit_bytes; });
      table.Add({"Stave " + label + ": the one final CHECKPOINT", std::to_string(list.size()),
                 Bytes(bytes), Millis(p50), "-", fmt::format("{:.0f}", bytes / p50 / 1e6), "-"});
      double write = median_of(list, [](const EngineRun& r) { return r.final_write_us / 1e6; });
      table.Add({"Stave " + label + ": the final CHECKPOINT's synced write",
                 std::to_string(list.size()), Bytes(bytes), Millis(write), "-",
                 fmt::format("{:.0f}", bytes / write / 1e6), "-"});
    }
    out += table.Render(config.markdown) + "\n";
  }

  auto recovery_rows = [&](Table* table, const std::string& what,
                           const std::vector<EngineRun>& list) {
    std::vector<EngineRun> with;
    for (const auto& run : list) {
      if (run.recovery) with.push_back(run);
    }
    if (with.empty()) return;
    auto get = [&](auto field) {
      return median_of(with, [&](const EngineRun& r) { return (*r.recovery).*field; });
    };
    headline.push_back(
        fmt::format("recovery of {} ({} of live state): {:.2f} s to the right count(*), of which "
                    "Database::Open "
                    "{:.2f} s (target: under 2 s for 1 GB)",
                    what, Bytes(get(&Recovery::live_bytes)), get(&Recovery::cold_serve_s),
                    get(&Recovery::cold_open_s)));
    table->Add({what, std::to_string(with.size()), Bytes(get(&Recovery::live_bytes)),
                Bytes(get(&Recovery::state_bytes)), Bytes(get(&Recovery::wal_bytes)),
                fmt::format("{:.3f} s", get(&Recovery::cold_open_s)),
                fmt::format("{:.3f} s", get(&Recovery::cold_serve_s)),
                fmt::format("{:.3f} s", get(&Recovery::warm_open_s)),
                fmt::format("{:.3f} s", get(&Recovery::warm_serve_s))});
  };
  if (want_recovery || !large_runs.empty()) {
    out +=
        "Recovery (after the final CHECKPOINT: Shutdown, then time Database::Open and until SELECT "
        "count(*) FROM m answers the committed count. 1st restart: data directory evicted from the "
        "page cache; Open replays RocksDB's WAL. 2nd restart: warm cache, WAL already flushed)\n\n";
    Table table({"state", "n", "live keys+values", "on disk", "of which WAL", "1st restart: Open",
                 "1st: serving", "2nd restart: Open", "2nd: serving"});
    if (want_recovery) {
      recovery_rows(&table, fmt::format("aggregate, {} groups", expected.distinct_keys),
                    runs["aggregate/1s"]);
    }
    if (!large_runs.empty()) {
      recovery_rows(
          &table,
          fmt::format("large state (--state-gb {}): {} rows, {} groups with {}-byte strings",
                      config.state_gb, 2 * large_keys, large_keys, pad_length),
          large_runs);
    }
    out += table.Render(config.markdown) + "\n";
  }

  if (!headline.empty()) {
    out += "Against the targets (medians)\n\n";
    for (const auto& line : headline) out += "- " + line + "\n";
  }
  fmt::print("{}", out);
  return 0;
}

/// Parses the command line and runs the benchmark; returns the exit status.
int Main(int argc, char** argv) {
  Config config;
  CLI::App app{"engine_bench: events/s, checkpoint commit time and recovery of the Stave engine"};
  app.add_option("--rows", config.rows, "Rows the stream produces")->capture_default_str();
  app.add_option("--keys", config.keys, "Distinct values of k (groups of the aggregate)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--repeats", config.repeats, "Runs of each scenario; medians are reported")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option(
      "--data-dir", config.data_dir,
      "Where runs put their data (default: a fresh directory under /tmp, removed at the end)");
  app.add_option("--scenarios", config.scenarios,
                 "Comma list of generator, stateless, aggregate, commit, recovery (or all, or none "
                 "to run only --state-gb)")
      ->capture_default_str();
  app.add_option("--intervals", config.intervals,
                 "Comma list of the checkpoint intervals the engine scenarios run: 1s, on-demand")
      ->capture_default_str();
  app.add_flag("--markdown", config.markdown, "Print markdown tables");
  app.add_option("--state-gb", config.state_gb,
                 "Also grow the aggregate's state to about this many GB and time its recovery "
                 "(0: skip)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--baseline-writes", config.baseline_writes,
                 "Synced writes per baseline (raw RocksDB, raw file)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--poll-ms", config.poll_ms, "How often the metrics are polled")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--plan-version", config.plan_version,
                 "The planner revision views are created with (6: aggregate states written "
                 "unpacked, as before revision 7; 5: a grouped view's aggregate keeps its "
                 "states apart from the view's rows, as before revision 6)")
      ->capture_default_str();
  app.add_option("--cpus", config.cpus, "Pin the process to the first N CPUs (0: all it may use)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  std::set<std::string> scenarios;
  try {
    app.parse(argc, argv);
    scenarios = ParseScenarios(config.scenarios);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  if (config.rows == 0) {
    std::fprintf(stderr, "--rows must be positive\n");
    return 2;
  }
  std::string command = CommandLine(argc, argv);
  spdlog::set_level(spdlog::level::warn);
  return RunCatchingErrors(kProgram, [&] { return RunAndReport(config, scenarios, command); });
}

}  // namespace
}  // namespace stave::bench

int main(int argc, char** argv) { return stave::bench::Main(argc, argv); }
