#include "executor/runtime/scheduler.h"

#include "common/thread_name.h"
#include "common/thread_priority.h"

namespace stave::executor {

using Clock = std::chrono::steady_clock;

void Task::Wake() {
  int state = state_.load(std::memory_order_acquire);
  while (true) {
    int next;
    switch (state) {
      case kIdle:
        next = kQueued;
        break;
      case kRunning:
        next = kRunningWoken;  // The worker running it queues it again when the slice ends.
        break;
      default:
        return;  // Already queued, already woken, or done.
    }
    if (state_.compare_exchange_weak(state, next, std::memory_order_acq_rel)) {
      if (next == kQueued) scheduler_->Enqueue(shared_from_this());
      return;
    }
  }
}

void Task::WakeAt(Clock::time_point when) {
  int state = state_.load(std::memory_order_acquire);
  if (state == kNew || state == kDone) return;
  scheduler_->AddTimer(when, shared_from_this());
}

Scheduler::Scheduler(size_t workers) {
  if (workers == 0) workers = 1;
  for (size_t i = 0; i < workers; ++i) {
    threads_.emplace_back([this] {
      NameCurrentThread("stave:worker");
      // The workers keep every core busy while rows flow; the threads that wait on them
      // (the checkpoint's commit, queries, sinks' deliveries) run first when they need a
      // core. With 1M groups changed per epoch the commit's write went from a p99 of
      // 484-544 ms to 255-280 ms at the same throughput (docs/decisions.md).
      LowerCurrentThreadPriority(kWorkerNiceness);
      WorkerLoop();
    });
  }
}

Scheduler::~Scheduler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void Scheduler::Spawn(const std::vector<std::shared_ptr<Task>>& tasks) {
  for (const auto& task : tasks) {
    task->scheduler_ = this;
    task->state_.store(Task::kQueued, std::memory_order_release);
  }
  for (const auto& task : tasks) Enqueue(task);
}

void Scheduler::Enqueue(std::shared_ptr<Task> task) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  ready_.notify_one();
}

void Scheduler::AddTimer(Clock::time_point when, std::shared_ptr<Task> task) {
  bool earliest;
  {
    std::lock_guard lock(mutex_);
    earliest = timers_.empty() || when < timers_.top().when;
    timers_.push({when, std::move(task)});
  }
  if (earliest) ready_.notify_one();  // A sleeping worker must shorten its wait.
}

void Scheduler::WorkerLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    auto now = Clock::now();
    std::vector<std::shared_ptr<Task>> due;
    while (!timers_.empty() && timers_.top().when <= now) {
      due.push_back(timers_.top().task);
      timers_.pop();
    }
    if (!due.empty()) {
      lock.unlock();
      for (auto& task : due) task->Wake();
      lock.lock();
      continue;
    }
    if (stopping_) return;
    if (!queue_.empty()) {
      std::shared_ptr<Task> task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      Run(task);
      lock.lock();
      continue;
    }
    if (timers_.empty()) {
      ready_.wait(lock);
    } else {
      // A copy: wait_until reads the deadline while unlocked, when a new timer may move it.
      Clock::time_point deadline = timers_.top().when;
      ready_.wait_until(lock, deadline);
    }
  }
}

void Scheduler::Run(const std::shared_ptr<Task>& task) {
  task->state_.store(Task::kRunning, std::memory_order_release);
  Task::PollResult result = task->Poll();
  if (result == Task::PollResult::kDone) {
    task->state_.store(Task::kDone, std::memory_order_release);
    return;
  }
  if (result == Task::PollResult::kWait) {
    int expected = Task::kRunning;
    if (task->state_.compare_exchange_strong(expected, Task::kIdle, std::memory_order_acq_rel)) {
      return;
    }
    // Woken while it ran: what it waited for may already be there.
  }
  task->state_.store(Task::kQueued, std::memory_order_release);
  Enqueue(task);
}

}  // namespace stave::executor
