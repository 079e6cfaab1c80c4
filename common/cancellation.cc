#include "common/cancellation.h"

#include "common/sql_error.h"

namespace stave {

void Cancellation::BeginStatement(std::optional<Clock::time_point> deadline) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = true;
  requested_.store(false, std::memory_order_relaxed);
  deadline_ = deadline;
}

void Cancellation::EndStatement() {
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = false;
  requested_.store(false, std::memory_order_relaxed);
  deadline_.reset();
}

void Cancellation::Cancel() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_) requested_.store(true, std::memory_order_relaxed);
}

void Cancellation::ThrowIfCancelled() const {
  if (requested_.load(std::memory_order_relaxed)) {
    throw SqlError(sqlstate::kQueryCanceled, "canceling statement due to user request");
  }
  if (deadline_ && Clock::now() >= *deadline_) {
    throw SqlError(sqlstate::kQueryCanceled, "canceling statement due to statement timeout");
  }
}

}  // namespace stave
