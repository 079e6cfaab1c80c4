#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace stave::executor {

/// Where the recovery at start has got to: what /readyz, the admin API,
/// stave_catalog.progress and the log show while a large catalog comes back. Shared between
/// the database that recovers and the admin endpoint, which serves before the database is
/// open. Thread-safe.
class RecoveryProgress {
 public:
  struct Status {
    std::string state = "pending";  ///< "pending", "running" or "done".
    std::string phase;              ///< "planning", "restoring state", "starting sinks".
    uint64_t objects_done = 0;      ///< Catalog objects planned so far.
    uint64_t objects_total = 0;
    uint64_t epoch = 0;  ///< The committed epoch recovered.
    double seconds = 0;  ///< Since it started (its whole duration once done).
  };

  void Start(uint64_t objects_total, uint64_t epoch);
  void ObjectDone();
  void SetPhase(std::string phase);
  void Finish();

  Status status() const;

 private:
  using Clock = std::chrono::steady_clock;

  mutable std::mutex mutex_;
  Status status_;               // GUARDED_BY(mutex_)
  Clock::time_point started_;   // GUARDED_BY(mutex_)
  Clock::time_point finished_;  // GUARDED_BY(mutex_)
};

}  // namespace stave::executor
