#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace stave::executor {

class Scheduler;

/// A cooperative task: a piece of a dataflow (a source, or one parallel instance of a chain
/// of operators) that the scheduler's workers run a slice at a time. A task never blocks its
/// worker: when it cannot go on (its input is empty, its output channel full) it returns
/// kWait and is woken when that changes, so any number of tasks share a small pool without
/// deadlock.
class Task : public std::enable_shared_from_this<Task> {
 public:
  enum class PollResult {
    kYield,  ///< More work is ready; run again after the other ready tasks.
    kWait,   ///< Nothing to do until Wake() (a channel, a timer, a request).
    kDone,   ///< Finished for good.
  };

  virtual ~Task() = default;

  /// Runs one slice: a bounded amount of work. Called by one worker at a time.
  virtual PollResult Poll() = 0;

  /// Makes the task ready: it runs again soon, even if it is running now.
  void Wake();
  /// Wakes the task at `when` (one pending timer per call; earlier wakes are harmless).
  void WakeAt(std::chrono::steady_clock::time_point when);

  bool done() const { return state_.load(std::memory_order_acquire) == kDone; }

 private:
  friend class Scheduler;
  enum State : int { kNew, kIdle, kQueued, kRunning, kRunningWoken, kDone };

  Scheduler* scheduler_ = nullptr;  // Set by Spawn, before the task can be woken.
  std::atomic<int> state_{kNew};    // Wakes before Spawn are ignored: Spawn queues it anyway.
};

/// A pool of worker threads running tasks. Ready tasks wait in one FIFO queue; timers wake
/// tasks that asked to run later (an idle source polling again). Thread-safe.
class Scheduler {
 public:
  /// How much lower than the process's other threads the workers run (a nice value).
  static constexpr int kWorkerNiceness = 10;

  /// `workers` threads (at least one).
  explicit Scheduler(size_t workers);
  /// Stops the workers; tasks still queued are not run again.
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Adds tasks and makes them ready. They may wake each other as soon as one runs, so
  /// tasks connected by channels are spawned together.
  void Spawn(const std::vector<std::shared_ptr<Task>>& tasks);

  size_t workers() const { return threads_.size(); }

 private:
  friend class Task;
  struct Timer {
    std::chrono::steady_clock::time_point when;
    std::shared_ptr<Task> task;
    bool operator>(const Timer& other) const { return when > other.when; }
  };

  void Enqueue(std::shared_ptr<Task> task);
  void AddTimer(std::chrono::steady_clock::time_point when, std::shared_ptr<Task> task);
  void WorkerLoop();
  void Run(const std::shared_ptr<Task>& task);

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::shared_ptr<Task>> queue_;                                // GUARDED_BY(mutex_)
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;  // GUARDED_BY(mutex_)
  bool stopping_ = false;                                                  // GUARDED_BY(mutex_)
  std::vector<std::thread> threads_;
};

}  // namespace stave::executor
