#include "executor/recovery_progress.h"

#include <utility>

namespace stave::executor {

void RecoveryProgress::Start(uint64_t objects_total, uint64_t epoch) {
  std::lock_guard lock(mutex_);
  status_ = Status{"running", "planning", 0, objects_total, epoch, 0};
  started_ = Clock::now();
}

void RecoveryProgress::ObjectDone() {
  std::lock_guard lock(mutex_);
  ++status_.objects_done;
}

void RecoveryProgress::SetPhase(std::string phase) {
  std::lock_guard lock(mutex_);
  status_.phase = std::move(phase);
}

void RecoveryProgress::Finish() {
  std::lock_guard lock(mutex_);
  status_.state = "done";
  status_.phase = "";
  finished_ = Clock::now();
}

RecoveryProgress::Status RecoveryProgress::status() const {
  std::lock_guard lock(mutex_);
  Status status = status_;
  if (status.state != "pending") {
    Clock::time_point end = status.state == "done" ? finished_ : Clock::now();
    status.seconds = std::chrono::duration<double>(end - started_).count();
  }
  return status;
}

}  // namespace stave::executor
