#include "executor/engine.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "common/cpu_time.h"
#include "common/failpoint.h"
#include "common/sql_error.h"
#include "common/temporal.h"
#include "common/thread_name.h"
#include "executor/batch/query_memory.h"
#include "executor/plan_builder.h"

namespace stave::executor {

using Clock = std::chrono::steady_clock;

Engine::Engine(storage::Store* store, Metrics* metrics,
               std::chrono::milliseconds checkpoint_interval, size_t state_memory, size_t workers)
    : store_(store),
      metrics_(metrics),
      state_memory_(state_memory),
      scheduler_(std::make_unique<Scheduler>(
          workers > 0 ? workers : std::max(1u, std::thread::hardware_concurrency()))),
      checkpoint_interval_(checkpoint_interval) {
  checkpoints_total_ = metrics_->Counter("stave_checkpoints_total", {}, "Committed checkpoints.");
  committed_epoch_gauge_ =
      metrics_->Gauge("stave_committed_epoch", {}, "The last committed epoch.");
  checkpoint_duration_ =
      metrics_->GetHistogram("stave_checkpoint_duration_seconds",
                             {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
                             "How long checkpoints took, from the barrier to the synced commit.");
  checkpoint_bytes_ = metrics_->Gauge("stave_last_checkpoint_bytes", {},
                                      "Bytes written by the last checkpoint's batch.");
  early_checkpoints_ = metrics_->Counter(
      "stave_checkpoints_early_total", {},
      "Checkpoints taken before their time because uncommitted state passed --state-memory.");
  buffered_bytes_ = metrics_->Gauge("stave_state_buffered_bytes", {},
                                    "Uncommitted state held in memory by all views.");
  throttled_total_ = metrics_->Counter(
      "stave_source_throttled_total", {},
      "Times the sources paused because uncommitted state passed twice --state-memory.");
  storage_failures_total_ =
      metrics_->Counter("stave_storage_failures_total", {},
                        "Checkpoints that failed to commit (a full disk, an I/O error).");
  storage_recoveries_total_ = metrics_->Counter(
      "stave_storage_recoveries_total", {},
      "Times the engine restarted its jobs in-process after a failed checkpoint.");
  committed_epoch_gauge_->store(static_cast<int64_t>(store_->committed_epoch()));
}

Engine::~Engine() { Stop(); }

void Engine::Start(JobSet jobs) {
  {
    std::lock_guard lock(jobs_mutex_);
    jobs_ = std::move(jobs);
  }
  for (auto& [id, job] : jobs_) {
    job->Start(scheduler_.get(), this);
    if (job->failed()) OnJobFailed(id, job->error());
  }
  thread_ = std::thread([this] {
    NameCurrentThread("stave:engine");
    Run();
  });
}

void Engine::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  StopJobs();  // If the coordinator never ran.
}

void Engine::StopJobs() {
  JobSet jobs;
  {
    std::lock_guard lock(jobs_mutex_);
    jobs.swap(jobs_);
  }
  for (auto& [id, job] : jobs) job->Stop();
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

std::vector<JobGraph> Engine::DescribeJobs() const {
  std::optional<Status> failure = storage_failure();
  std::vector<JobGraph> graphs;
  std::lock_guard lock(jobs_mutex_);
  for (const auto& [id, job] : jobs_) {
    graphs.push_back(job->Describe());
    if (failure && !graphs.back().failed) {
      graphs.back().failed = true;
      graphs.back().error = "stopped by a storage failure, retrying: " + failure->ToString();
    }
  }
  return graphs;
}

std::optional<Status> Engine::storage_failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

void Engine::Submit(std::unique_ptr<Request> request) {
  std::future<void> done = request->done.get_future();
  {
    std::lock_guard lock(mutex_);
    if (failure_) {
      throw SqlError(failure_->sqlstate(),
                     "the engine stopped after a storage failure: " + failure_->ToString())
          .WithHint(rebuild_jobs_
                        ? "It retries by itself and resumes from the last committed checkpoint "
                          "once the data directory can be written again."
                        : "Restart the server to recover from the last committed checkpoint.");
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
  std::lock_guard lock(jobs_mutex_);
  for (auto& [id, job] : jobs_) job->Wake();
}

void Engine::OnBarrierPassed(BarrierReport report) {
  {
    std::lock_guard lock(collect_mutex_);
    if (report.epoch != collecting_epoch_) return;  // From a job that failed meanwhile.
    ++reported_tasks_[report.job_id];
    reports_.push_back(std::move(report));
  }
  collected_.notify_all();
}

void Engine::OnJobFailed(uint32_t job_id, const std::string& error) {
  {
    std::lock_guard lock(mutex_);
    job_errors_.emplace(job_id, SqlError(sqlstate::kInternalError, error));
  }
  { std::lock_guard lock(collect_mutex_); }  // The coordinator waits under this lock.
  collected_.notify_all();
}

std::vector<BarrierReport> Engine::CollectBarrier(uint64_t epoch, const SourceTargets& targets) {
  {
    std::lock_guard lock(collect_mutex_);
    collecting_epoch_ = epoch;
    reports_.clear();
    reported_tasks_.clear();
  }
  // The epoch's processing time, what now() is in views: never behind an earlier epoch's,
  // should the clock step back.
  epoch_time_ = std::max(epoch_time_, temporal::CurrentTimestamp());
  for (auto& [id, job] : jobs_) {
    if (!job->started()) {
      {
        std::lock_guard lock(mutex_);  // Restarted by a change (a raised limit): afresh.
        job_errors_.erase(id);
        over_state_limit_.erase(id);
      }
      // Added by a change in this epoch. Its barrier is requested before its tasks run, so
      // it reads nothing in this epoch; and it does not wait for the targets, taken before
      // the job existed (a view over a view could only meet them after this very epoch).
      job->InjectBarrier(epoch, {}, epoch_time_);
      job->Start(scheduler_.get(), this);
      if (job->failed()) OnJobFailed(id, job->error());
    } else if (!job->failed()) {
      job->InjectBarrier(epoch, targets, epoch_time_);
    }
  }
  std::unique_lock lock(collect_mutex_);
  collected_.wait(lock, [&] {
    return std::all_of(jobs_.begin(), jobs_.end(), [&](const auto& entry) {
      auto it = reported_tasks_.find(entry.first);
      return entry.second->failed() ||
             (it != reported_tasks_.end() && it->second == entry.second->tasks());
    });
  });
  std::vector<BarrierReport> reports;
  for (auto& report : reports_) {
    auto it = jobs_.find(report.job_id);
    // A failed job's epoch may be partial: it keeps its last committed state.
    if (it != jobs_.end() && !it->second->failed()) reports.push_back(std::move(report));
  }
  reports_.clear();
  collecting_epoch_ = 0;
  return reports;
}

std::optional<SqlError> Engine::JobError(uint32_t job_id) const {
  std::lock_guard lock(mutex_);
  auto it = job_errors_.find(job_id);
  if (it == job_errors_.end()) return std::nullopt;
  return it->second;
}

std::set<uint32_t> Engine::JobsOverStateLimit() const {
  std::lock_guard lock(mutex_);
  return over_state_limit_;
}

void Engine::EnforceStateLimit() {
  uint64_t limit = view_state_limit_.load();
  if (limit == 0) return;
  for (auto& [id, job] : jobs_) {
    if (job->failed()) continue;
    // Every state table of an object has an id in [StateTableId(id, 0), StateTableId(id+1, 0)):
    // the same estimate as stave_job_state_bytes.
    uint64_t bytes =
        store_->ApproximateStateTablesSize(StateTableId(id, 0), StateTableId(id + 1, 0), limit);
    if (bytes <= limit) continue;
    std::string message =
        fmt::format("\"{}\" stopped at epoch {}: its state ({} bytes) passed view_state_limit ({})",
                    job->name(), store_->committed_epoch(), bytes, FormatByteSize(limit));
    {
      std::lock_guard lock(mutex_);
      over_state_limit_.insert(id);
      // Recorded first: the job's own report of the failure finds it and keeps it.
      job_errors_.emplace(id, SqlError(sqlstate::kProgramLimitExceeded, message)
                                  .WithHint("Raise the limit (ALTER SYSTEM SET view_state_limit "
                                            "= '...'): the view resumes from its last "
                                            "checkpoint."));
    }
    job->Fail(message);
  }
}

bool Engine::CommitEpoch(std::vector<std::unique_ptr<Request>>* requests) {
  auto start = Clock::now();
  auto started = std::chrono::system_clock::now();
  std::chrono::nanoseconds cpu_start = ThreadCpuTime();
  std::chrono::nanoseconds barrier_cpu{0};
  std::chrono::microseconds write{0};
  // The batch of every task's changes: it serves again for a later epoch.
  std::unique_ptr<storage::EpochBatch> pooled =
      batches_.Take(store_->committed_epoch() + 1, 0, last_commit_bytes_);
  storage::EpochBatch& batch = *pooled;
  Status status;
  try {
    SourceTargets targets;  // What every request needs the sources to have read.
    for (const auto& request : *requests) {
      for (const auto& [id, target] : request->targets) {
        targets[id] = std::max(targets[id], target);
      }
    }
    failpoint::Hit("epoch_barrier_injected");
    {
      std::lock_guard lock(jobs_mutex_);
      for (auto& request : *requests) {
        if (request->change) request->change(&jobs_, &batch);
      }
    }
    // Tables' logs: every record below the last may go unless a reader still needs it.
    std::map<uint32_t, uint64_t> retained;  // Log → the first record any reader needs.
    if (log_heads_) {
      for (const auto& [table, head] : log_heads_()) {
        if (head > 0) retained[table] = head - 1;  // The last record tells the next sequence.
      }
    }
    std::vector<BarrierReport> reports = CollectBarrier(batch.epoch(), targets);
    std::vector<const storage::WriteBatch*> parts;
    std::set<uint32_t> flushed_jobs;
    for (const BarrierReport& report : reports) {
      if (flushed_jobs.insert(report.job_id).second) failpoint::Hit("epoch_job_flushed");
      parts.push_back(report.batch.get());
      barrier_cpu += report.cpu;
      if (const auto& log = report.retained_log) {
        auto [it, inserted] = retained.try_emplace(log->first, log->second);
        if (!inserted) it->second = std::min(it->second, log->second);
      }
    }
    batch.Append(parts);
    for (const auto& [log, first] : retained) {
      if (truncated_logs_[log] < first) {
        batch.DeleteTableLogBelow(log, first);
        truncated_logs_[log] = first;
      }
    }
    failpoint::Hit("epoch_before_commit");
    auto write_start = Clock::now();
    status = store_->Commit(&batch);
    write = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - write_start);
    if (status.ok()) {
      for (BarrierReport& report : reports) batches_.GiveBack(std::move(report.batch));
      failpoint::Hit("epoch_after_commit");
    }
  } catch (const SqlError& error) {
    status = error.sqlstate() == sqlstate::kDiskFull ? Status::DiskFull(error.what())
                                                     : Status::IoError(error.what());
  }
  size_t bytes = batch.ByteSize();
  if (!status.ok()) {
    spdlog::critical("checkpoint of epoch {} failed: {}", batch.epoch(), status.ToString());
    storage_failures_total_->fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(mutex_);
      failure_ = status;
    }
    FailRequests(requests, status);
    return false;
  }
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
  CheckpointRecord record{batch.epoch(), started, std::chrono::microseconds(micros), write, bytes};
  record.barrier_cpu = std::chrono::duration_cast<std::chrono::microseconds>(barrier_cpu);
  record.commit_cpu =
      std::chrono::duration_cast<std::chrono::microseconds>(ThreadCpuTime() - cpu_start);
  barrier_cpu_micros_.fetch_add(static_cast<uint64_t>(record.barrier_cpu.count()),
                                std::memory_order_relaxed);
  commit_cpu_micros_.fetch_add(static_cast<uint64_t>(record.commit_cpu.count()),
                               std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    history_.push_back(record);
    if (history_.size() > kCheckpointHistory) history_.pop_front();
  }
  checkpoints_total_->fetch_add(1, std::memory_order_relaxed);
  committed_epoch_gauge_->store(static_cast<int64_t>(batch.epoch()));
  checkpoint_duration_->Observe(static_cast<double>(micros) / 1e6);
  checkpoint_bytes_->store(static_cast<int64_t>(bytes));
  spdlog::debug("committed epoch {} ({} bytes, {} us)", batch.epoch(), bytes, micros);
  for (auto& [id, job] : jobs_) job->OnEpochCommitted(batch.epoch());
  EnforceStateLimit();
  for (auto& request : *requests) request->done.set_value();
  requests->clear();
  last_commit_bytes_ = batch.RecordBytes();
  batches_.GiveBack(std::move(pooled));
  return true;
}

void Engine::FailRequests(std::vector<std::unique_ptr<Request>>* requests, const Status& failure) {
  for (auto& request : *requests) {
    request->done.set_exception(std::make_exception_ptr(
        SqlError(failure.sqlstate(), "checkpoint failed: " + failure.ToString())));
  }
  requests->clear();
}

bool Engine::RecoverFromStorageFailure() {
  // The jobs stop where they are: their uncommitted state and the epoch in flight are
  // dropped with them (RocksDB holds the last committed epoch whole), and they stay listed
  // with the failure as their error.
  {
    std::lock_guard lock(jobs_mutex_);
    for (auto& [id, job] : jobs_) job->Stop();
  }
  dirty_ = false;
  truncated_logs_.clear();  // Truncations of the failed epoch did not happen.
  throttle_.store(false);
  if (!rebuild_jobs_) return false;
  constexpr auto kFirstBackoff = std::chrono::milliseconds(100);
  constexpr auto kMaxBackoff = std::chrono::milliseconds(5000);
  auto backoff = kFirstBackoff;
  for (int attempt = 1;; ++attempt) {
    std::vector<std::unique_ptr<Request>> requests;
    std::optional<Status> failure;
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, backoff, [this] { return stopping_; });
      if (stopping_) return false;
      for (auto& request : pending_) requests.push_back(std::move(request));
      pending_.clear();
      failure = failure_;
    }
    FailRequests(&requests, *failure);  // Came in as the commit failed.
    backoff = std::min(backoff * 2, kMaxBackoff);
    // A synced write: it resumes RocksDB if the failure left it read-only, and succeeds only
    // once the disk takes writes and syncs again.
    Status probe = store_->CheckWritable();
    if (!probe.ok()) {
      // The first tries at warn, then seldom: a long outage must not flood the log.
      if (attempt > 3 && attempt % 20 != 0) {
        spdlog::debug("storage still failing (attempt {}): {}", attempt, probe.ToString());
      } else {
        spdlog::warn("storage still failing (attempt {}), next try in {} ms: {}", attempt,
                     backoff.count(), probe.ToString());
      }
      continue;
    }
    JobSet jobs;
    try {
      jobs = rebuild_jobs_();
    } catch (const SqlError& error) {
      spdlog::error("cannot restart the jobs after a storage failure: {}", error.what());
      continue;
    }
    JobSet stopped;
    {
      std::lock_guard lock(jobs_mutex_);
      stopped.swap(jobs_);
      jobs_ = std::move(jobs);
    }
    stopped.clear();  // Stopped already; their tasks ran out.
    {
      std::lock_guard lock(mutex_);
      failure_.reset();
      job_errors_.clear();  // Every job starts afresh.
      over_state_limit_.clear();
    }
    for (auto& [id, job] : jobs_) {
      job->Start(scheduler_.get(), this);
      if (job->failed()) OnJobFailed(id, job->error());
    }
    storage_recoveries_total_->fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("storage works again: {} jobs restarted from the checkpoint of epoch {}",
                 jobs_.size(), store_->committed_epoch());
    return true;
  }
}

void Engine::Run() {
  // A barrier every interval, counted from the previous barrier (not from its commit): a
  // commit that takes longer only makes the next barrier follow it at once.
  auto last_barrier = Clock::now();
  std::vector<std::unique_ptr<Request>> requests;
  EnforceStateLimit();  // A view recovered over a lowered limit stops at once.
  while (true) {
    bool stopping;
    auto next_checkpoint = Clock::time_point::max();
    {
      std::lock_guard lock(mutex_);
      for (auto& request : pending_) requests.push_back(std::move(request));
      pending_.clear();
      stopping = stopping_;
      if (checkpoint_interval_.count() > 0) next_checkpoint = last_barrier + checkpoint_interval_;
    }
    for (auto& [id, job] : jobs_) dirty_ |= job->TakeProgress();
    bool due = Clock::now() >= next_checkpoint;
    if (state_memory_ > 0) {
      size_t buffered = 0;
      for (const auto& [id, job] : jobs_) buffered += job->BufferedBytes();
      buffered_bytes_->store(static_cast<int64_t>(buffered), std::memory_order_relaxed);
      bool throttle = buffered > 2 * state_memory_;
      if (throttle && !throttle_.exchange(true)) {
        throttled_total_->fetch_add(1, std::memory_order_relaxed);
      } else if (!throttle) {
        throttle_.store(false);
      }
      if (dirty_ && !due && buffered > state_memory_) {
        due = true;  // Commit now: the buffers empty into RocksDB, and memory stays bounded.
        early_checkpoints_->fetch_add(1, std::memory_order_relaxed);
      }
    }
    for (const auto& [id, job] : jobs_) {
      if (dirty_ && !due && job->WantsEarlyCheckpoint()) {
        due = true;
        early_checkpoints_->fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (!requests.empty() || stopping || due) {
      last_barrier = Clock::now();
      if (!requests.empty() || dirty_) {
        dirty_ = false;                 // Rows read from now on belong to the next epoch.
        if (!CommitEpoch(&requests)) {  // Storage failed: see failure_.
          if (!RecoverFromStorageFailure()) {
            StopJobs();
            return;
          }
          last_barrier = Clock::now();
          continue;
        }
        throttle_.store(false);  // The buffers were sealed at the barrier.
      }
      if (stopping) {
        StopJobs();
        return;
      }
      continue;  // The next barrier may be due already.
    }
    // Look again soon: the memory budget is watched, and a changed interval takes effect.
    auto wake_at = std::min(next_checkpoint,
                            Clock::now() + std::chrono::milliseconds(state_memory_ > 0 ? 10 : 100));
    std::unique_lock lock(mutex_);
    wake_.wait_until(lock, wake_at, [this] { return !pending_.empty() || stopping_; });
  }
}

}  // namespace stave::executor
