#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

namespace stave::failpoint {

/// What an armed failpoint does when reached.
enum class Action {
  kOff,
  kCrash,  ///< Kills the process at once with SIGKILL, as an operator's kill -9 would.
  kError,  ///< Throws SqlError XX000 naming the failpoint.
  kDelay,  ///< Sleeps for the armed number of milliseconds.
};

/// Arms failpoints from a specification such as "before_commit=crash;after_barrier=delay(50)"
/// (also "name=error", "name=off"). Returns false and says why in `error` if the text is
/// malformed or names an unknown failpoint; nothing is armed then.
bool ArmFromSpec(std::string_view spec, std::string* error);

/// Arms the failpoints named in the STAVE_FAILPOINTS environment variable, if set.
bool ArmFromEnvironment(std::string* error);

void DisarmAll();

/// Every failpoint compiled into Stave, for tests that visit each.
const std::vector<std::string_view>& Names();

namespace internal {
extern std::atomic<int> armed_count;
void Trigger(std::string_view name);
bool TriggerReportingError(std::string_view name);
}  // namespace internal

/// Evaluates failpoint `name`. Free when nothing is armed: one relaxed atomic load.
inline void Hit(std::string_view name) {
  if (internal::armed_count.load(std::memory_order_relaxed) == 0) return;
  internal::Trigger(name);
}

/// Evaluates failpoint `name` where errors are values, not exceptions (the storage's file
/// system under RocksDB): true when it is armed with `error`, which the caller then returns
/// as its own error; `crash` and `delay` act as in Hit.
inline bool Fails(std::string_view name) {
  if (internal::armed_count.load(std::memory_order_relaxed) == 0) return false;
  return internal::TriggerReportingError(name);
}

}  // namespace stave::failpoint
