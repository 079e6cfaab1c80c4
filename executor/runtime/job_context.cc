#include "executor/runtime/job_context.h"

#include <spdlog/spdlog.h>

#include "common/sql_error.h"

namespace stave::executor {

void JobContext::Fail(const std::string& error) {
  {
    std::lock_guard lock(mutex_);
    if (failed_.load(std::memory_order_acquire)) return;
    error_ = error;
    failed_.store(true, std::memory_order_release);
  }
  spdlog::error("materialized view \"{}\" stopped: {}", name_, error);
  if (collector_) collector_->OnJobFailed(job_id_, error);
  WakeAll();
}

void JobContext::Cancel() {
  cancelled_.store(true, std::memory_order_release);
  WakeAll();
  std::unique_lock lock(mutex_);
  all_done_.wait(lock, [this] { return live_tasks_.load(std::memory_order_acquire) == 0; });
}

void JobContext::TaskDone() {
  std::lock_guard lock(mutex_);
  if (live_tasks_.fetch_sub(1, std::memory_order_acq_rel) == 1) all_done_.notify_all();
}

void JobContext::WakeAll() {
  for (const auto& task : tasks_) task->Wake();
}

Task::PollResult JobTask::Poll() {
  if (!job_->stopping()) {
    try {
      return PollSlice();
    } catch (const SqlError& error) {
      job_->Fail(error.what());
    }
  }
  job_->TaskDone();
  return PollResult::kDone;
}

}  // namespace stave::executor
