#include "executor/engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/failpoint.h"
#include "common/sql_error.h"

namespace stave::executor {

using Clock = std::chrono::steady_clock;

Engine::Engine(storage::Store* store, Metrics* metrics,
               std::chrono::milliseconds checkpoint_interval, size_t state_memory)
    : store_(store),
      metrics_(metrics),
      state_memory_(state_memory),
      checkpoint_interval_(checkpoint_interval) {
  snapshot_ = store_->NewSnapshot();
  checkpoints_total_ = metrics_->Counter("stave_checkpoints_total", {}, "Committed checkpoints.");
  committed_epoch_gauge_ =
      metrics_->Gauge("stave_committed_epoch", {}, "The last committed epoch.");
  checkpoint_duration_us_ =
      metrics_->Gauge("stave_last_checkpoint_duration_microseconds", {},
                      "How long the last checkpoint took, barrier to commit.");
  checkpoint_bytes_ = metrics_->Gauge("stave_last_checkpoint_bytes", {},
                                      "Bytes written by the last checkpoint's batch.");
  early_checkpoints_ = metrics_->Counter(
      "stave_checkpoints_early_total", {},
      "Checkpoints taken before their time because uncommitted state passed --state-memory.");
  buffered_bytes_ = metrics_->Gauge("stave_state_buffered_bytes", {},
                                    "Uncommitted state held in memory by all views.");
  committed_epoch_gauge_->store(static_cast<int64_t>(store_->committed_epoch()));
}

Engine::~Engine() { Stop(); }

void Engine::Start(JobSet jobs) {
  jobs_ = std::move(jobs);
  thread_ = std::thread([this] { Run(); });
}

void Engine::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Engine::set_checkpoint_interval(std::chrono::milliseconds interval) {
  {
    std::lock_guard lock(mutex_);
    checkpoint_interval_ = interval;
  }
  wake_.notify_all();
}

std::chrono::milliseconds Engine::checkpoint_interval() const {
  std::lock_guard lock(mutex_);
  return checkpoint_interval_;
}

std::vector<CheckpointRecord> Engine::CheckpointHistory() const {
  std::lock_guard lock(mutex_);
  return {history_.begin(), history_.end()};
}

void Engine::Submit(std::unique_ptr<Request> request) {
  std::future<void> done = request->done.get_future();
  {
    std::lock_guard lock(mutex_);
    if (failure_) {
      throw SqlError(sqlstate::kIoError, "the engine stopped after a storage failure: " + *failure_)
          .WithHint("Restart the server to recover from the last committed checkpoint.");
    }
    if (stopping_ || !thread_.joinable()) {
      throw SqlError(sqlstate::kAdminShutdown, "the server is shutting down");
    }
    pending_.push_back(std::move(request));
  }
  wake_.notify_all();
  done.get();  // Rethrows the commit's failure.
}

void Engine::ApplyChange(Change change) {
  auto request = std::make_unique<Request>();
  request->change = std::move(change);
  Submit(std::move(request));
}

void Engine::Checkpoint(const SourceTargets& targets) {
  auto request = std::make_unique<Request>();
  request->targets = targets;
  Submit(std::move(request));
}

void Engine::Wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  wake_.notify_all();
}

std::shared_ptr<const storage::Snapshot> Engine::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

std::optional<std::string> Engine::JobError(uint32_t job_id) const {
  std::lock_guard lock(mutex_);
  auto it = job_errors_.find(job_id);
  if (it == job_errors_.end()) return std::nullopt;
  return it->second;
}

bool Engine::CommitEpoch(std::vector<std::unique_ptr<Request>>* requests) {
  auto start = Clock::now();
  auto started = std::chrono::system_clock::now();
  storage::EpochBatch batch(store_->committed_epoch() + 1);
  Status status;
  try {
    failpoint::Hit("epoch_barrier_injected");
    for (auto& request : *requests) {
      if (request->change) request->change(&jobs_, &batch);
    }
    std::map<uint32_t, uint64_t> retained;  // View log → the first record any reader needs.
    for (auto& [id, job] : jobs_) {
      job->Checkpoint(&batch);
      failpoint::Hit("epoch_job_flushed");
      if (auto log = job->RetainedLog()) {
        auto [it, inserted] = retained.try_emplace(log->first, log->second);
        if (!inserted) it->second = std::min(it->second, log->second);
      }
    }
    for (const auto& [log, first] : retained) {
      if (truncated_logs_[log] < first) {
        batch.DeleteTableLogBelow(log, first);
        truncated_logs_[log] = first;
      }
    }
    failpoint::Hit("epoch_before_commit");
    status = store_->Commit(&batch);
    if (status.ok()) failpoint::Hit("epoch_after_commit");
  } catch (const SqlError& error) {
    status = Status::IoError(error.what());
  }
  size_t bytes = batch.ByteSize();
  if (!status.ok()) {
    spdlog::critical("checkpoint of epoch {} failed: {}", batch.epoch(), status.ToString());
    std::lock_guard lock(mutex_);
    failure_ = status.ToString();
    for (auto& request : *requests) {
      request->done.set_exception(std::make_exception_ptr(
          SqlError(sqlstate::kIoError, "checkpoint failed: " + status.ToString())));
    }
    requests->clear();
    return false;
  }
  dirty_ = false;
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
  {
    std::lock_guard lock(mutex_);
    snapshot_ = store_->NewSnapshot();
    history_.push_back({batch.epoch(), started, std::chrono::microseconds(micros), bytes});
    if (history_.size() > kCheckpointHistory) history_.pop_front();
  }
  checkpoints_total_->fetch_add(1, std::memory_order_relaxed);
  committed_epoch_gauge_->store(static_cast<int64_t>(batch.epoch()));
  checkpoint_duration_us_->store(micros);
  checkpoint_bytes_->store(static_cast<int64_t>(bytes));
  spdlog::debug("committed epoch {} ({} bytes, {} us)", batch.epoch(), bytes, micros);
  for (auto& request : *requests) request->done.set_value();
  requests->clear();
  return true;
}

void Engine::Run() {
  auto next_checkpoint = Clock::time_point::max();
  auto schedule = [&] {
    std::lock_guard lock(mutex_);
    next_checkpoint = checkpoint_interval_.count() > 0 ? Clock::now() + checkpoint_interval_
                                                       : Clock::time_point::max();
  };
  schedule();
  // Requests whose source targets the jobs have not reached yet.
  std::vector<std::unique_ptr<Request>> waiting;
  while (true) {
    std::vector<std::unique_ptr<Request>> requests;
    bool stopping;
    {
      std::lock_guard lock(mutex_);
      for (auto& request : pending_) waiting.push_back(std::move(request));
      pending_.clear();
      woken_ = false;
      stopping = stopping_;
    }
    for (auto it = waiting.begin(); it != waiting.end();) {
      bool ready = stopping || std::all_of(jobs_.begin(), jobs_.end(), [&](const auto& entry) {
                     return entry.second->CaughtUp((*it)->targets);
                   });
      if (ready) {
        requests.push_back(std::move(*it));
        it = waiting.erase(it);
      } else {
        ++it;
      }
    }
    bool due = Clock::now() >= next_checkpoint;
    if (state_memory_ > 0 && dirty_ && !due) {
      size_t buffered = 0;
      for (const auto& [id, job] : jobs_) buffered += job->BufferedBytes();
      buffered_bytes_->store(static_cast<int64_t>(buffered), std::memory_order_relaxed);
      if (buffered > state_memory_) {
        due = true;  // Commit now: the buffers empty into RocksDB, and memory stays bounded.
        early_checkpoints_->fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (!requests.empty() || stopping || due) {
      if (!requests.empty() || dirty_) {
        if (!CommitEpoch(&requests)) return;  // Storage failed: stop processing; see failure_.
      }
      if (stopping) return;
      schedule();
    }

    bool progress = false;
    auto wake_at = next_checkpoint;
    for (auto& [id, job] : jobs_) {
      auto job_wake = Clock::time_point::max();
      switch (job->Step(&job_wake)) {
        case Job::StepResult::kProgress:
          progress = true;
          dirty_ = true;
          break;
        case Job::StepResult::kIdle:
          wake_at = std::min(wake_at, job_wake);
          break;
        case Job::StepResult::kFailed: {
          std::lock_guard lock(mutex_);
          job_errors_.emplace(id, job->error());
          break;
        }
        case Job::StepResult::kFinished:
          break;
      }
    }
    if (!progress) {
      // Wake at least every 100 ms so a changed interval takes effect soon.
      wake_at = std::min(wake_at, Clock::now() + std::chrono::milliseconds(100));
      std::unique_lock lock(mutex_);
      wake_.wait_until(lock, wake_at, [this] { return !pending_.empty() || stopping_ || woken_; });
    }
  }
}

}  // namespace stave::executor
