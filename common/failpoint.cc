#include "common/failpoint.h"

#include <csignal>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "common/sql_error.h"

namespace stave::failpoint {
namespace {

struct Armed {
  Action action = Action::kOff;
  int delay_ms = 0;
};

std::mutex& Mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, Armed, std::less<>>& ArmedPoints() {
  static std::map<std::string, Armed, std::less<>> points;
  return points;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

}  // namespace

namespace internal {
std::atomic<int> armed_count{0};

void Trigger(std::string_view name) {
  Armed armed;
  {
    std::lock_guard lock(Mutex());
    auto it = ArmedPoints().find(name);
    if (it == ArmedPoints().end()) return;
    armed = it->second;
  }
  switch (armed.action) {
    case Action::kOff:
      return;
    case Action::kCrash:
      std::raise(SIGKILL);
      std::_Exit(137);  // Not reached.
    case Action::kError:
      throw SqlError(sqlstate::kInternalError, "failpoint " + std::string(name) + " fired");
    case Action::kDelay:
      std::this_thread::sleep_for(std::chrono::milliseconds(armed.delay_ms));
      return;
  }
}

bool TriggerReportingError(std::string_view name) {
  {
    std::lock_guard lock(Mutex());
    auto it = ArmedPoints().find(name);
    if (it == ArmedPoints().end()) return false;
    if (it->second.action == Action::kError) return true;
  }
  Trigger(name);
  return false;
}
}  // namespace internal

const std::vector<std::string_view>& Names() {
  // Every STAVE failpoint, in the order an epoch meets them. Keep in sync with the call sites.
  static const std::vector<std::string_view> names = {
      "table_write_before_sync",  // A table write is about to be made durable.
      "table_write_after_sync",   // A table write is durable; the client has not heard yet.
      "source_chunk_read",        // A source read rows that no checkpoint holds yet.
      "epoch_barrier_injected",   // A checkpoint began; no job has flushed yet.
      "epoch_operator_flushed",   // One operator instance wrote its share of the epoch.
      "epoch_job_flushed",        // The coordinator took one job's state delta into the batch.
      "epoch_before_commit",      // The epoch batch is complete, not yet written.
      "epoch_after_commit",       // The epoch is durable; snapshot and waiters not updated.
      // Sinks, on their writer threads.
      "sink_before_prepare",          // Two-phase: the epoch's transaction is not written yet.
      "sink_after_prepare",           // Prepared in the target; its checkpoint not committed.
      "sink_before_commit_prepared",  // The checkpoint committed; COMMIT PREPARED not sent.
      "sink_after_commit_prepared",   // The target committed; the sink does not know it yet.
      "sink_before_deliver",          // The checkpoint holding owed rows committed; not sent.
      "sink_after_staged_part",       // One part of a large epoch is staged in the target.
      "kafka_sink_before_commit",     // A Kafka transaction holds the epoch; not committed.
      "sink_after_deliver",           // The target committed them with its progress row.
      // The storage's files, wherever RocksDB writes (error: the write fails, as a disk would).
      "storage_write_no_space",  // A write to a file of the data directory: the disk is full.
      "storage_sync_error",      // An fsync of a file of the data directory fails (EIO).
  };
  return names;
}

bool ArmFromSpec(std::string_view spec, std::string* error) {
  std::map<std::string, Armed, std::less<>> parsed;
  while (!spec.empty()) {
    size_t end = spec.find(';');
    std::string_view item = Trim(spec.substr(0, end));
    spec = end == std::string_view::npos ? std::string_view() : spec.substr(end + 1);
    if (item.empty()) continue;
    size_t equals = item.find('=');
    if (equals == std::string_view::npos) {
      *error = "failpoint \"" + std::string(item) +
               "\" has no action (use name=crash|error|delay(ms)|off)";
      return false;
    }
    std::string_view name = Trim(item.substr(0, equals));
    std::string_view action = Trim(item.substr(equals + 1));
    bool known = false;
    for (std::string_view candidate : Names()) known |= candidate == name;
    if (!known) {
      *error = "unknown failpoint \"" + std::string(name) + "\"";
      return false;
    }
    Armed armed;
    if (action == "crash") {
      armed.action = Action::kCrash;
    } else if (action == "error") {
      armed.action = Action::kError;
    } else if (action == "off") {
      armed.action = Action::kOff;
    } else if (action.substr(0, 6) == "delay(" && action.back() == ')') {
      armed.action = Action::kDelay;
      armed.delay_ms = std::atoi(std::string(action.substr(6, action.size() - 7)).c_str());
    } else {
      *error = "unknown failpoint action \"" + std::string(action) + "\"";
      return false;
    }
    parsed[std::string(name)] = armed;
  }
  std::lock_guard lock(Mutex());
  for (auto& [name, armed] : parsed) {
    bool was_armed = ArmedPoints().count(name) > 0;
    if (armed.action == Action::kOff) {
      if (was_armed) {
        ArmedPoints().erase(name);
        internal::armed_count.fetch_sub(1);
      }
      continue;
    }
    ArmedPoints()[name] = armed;
    if (!was_armed) internal::armed_count.fetch_add(1);
  }
  return true;
}

bool ArmFromEnvironment(std::string* error) {
  const char* spec = std::getenv("STAVE_FAILPOINTS");
  if (!spec) return true;
  return ArmFromSpec(spec, error);
}

void DisarmAll() {
  std::lock_guard lock(Mutex());
  ArmedPoints().clear();
  internal::armed_count.store(0);
}

}  // namespace stave::failpoint
