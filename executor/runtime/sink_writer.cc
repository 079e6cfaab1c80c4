#include "executor/runtime/sink_writer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

#include <nlohmann/json.hpp>

#include "common/failpoint.h"
#include "common/json_integer.h"
#include "common/redact.h"
#include "common/sql_error.h"
#include "common/thread_name.h"
#include "executor/change_record.h"
#include "storage/varint.h"

namespace stave::executor {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kFirstBackoff{200};
constexpr std::chrono::milliseconds kMaxBackoff{10000};

// SQLSTATE classes that retrying will not fix until someone changes the target: data
// exceptions, integrity violations, syntax errors and missing objects or permissions, and
// objects in the wrong state (a prepared transaction rolled back behind the sink's back).
bool IsTargetRefusal(const std::exception& error) {
  const auto* sql = dynamic_cast<const SqlError*>(&error);
  std::string state = sql ? sql->sqlstate() : "";
  return state.rfind("22", 0) == 0 || state.rfind("23", 0) == 0 || state.rfind("42", 0) == 0 ||
         state.rfind("55", 0) == 0;
}

}  // namespace

std::string SinkRecord::Encode() const {
  return nlohmann::json{{"generation", generation},
                        {"prepared_epoch", prepared_epoch},
                        {"prepared_id", prepared_id},
                        {"paused", paused}}
      .dump();
}

std::optional<SinkRecord> SinkRecord::Decode(std::string_view bytes) {
  nlohmann::json json = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  try {
    SinkRecord record;
    record.generation = JsonInteger<uint64_t>(json.at("generation"));
    record.prepared_epoch = JsonInteger<uint64_t>(json.at("prepared_epoch"));
    record.prepared_id = json.at("prepared_id").get<std::string>();
    record.paused = json.at("paused").get<bool>();
    return record;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::string SinkWriter::EncodeOwed(const Chunk& changes, const storage::RowTypes& types) {
  return EncodeChangeRecord(changes, types);
}

SinkWriter::SinkWriter(uint32_t log_id, std::string name, std::unique_ptr<SinkTarget> target,
                       const storage::Store* store, storage::RowTypes types, SinkRecord recovered,
                       std::atomic<uint64_t>* rows_delivered)
    : log_id_(log_id),
      name_(std::move(name)),
      target_(std::move(target)),
      store_(store),
      types_(std::move(types)),
      generation_(recovered.generation + 1),
      rows_delivered_(rows_delivered),
      record_(std::move(recovered)) {
  record_.generation = generation_;
}

SinkWriter::~SinkWriter() { Stop(); }

void SinkWriter::Start(uint64_t committed_epoch) {
  {
    std::lock_guard lock(mutex_);
    committed_ = committed_epoch;
  }
  // Epochs an earlier run owed: whatever the sink's log holds.
  std::set<uint64_t> owed;
  store_
      ->ReadTableLog(log_id_, 0,
                     [&](uint64_t sequence, std::string_view) {
                       owed.insert(sequence >> 16);
                       return true;
                     })
      .ThrowIfError();
  {
    std::lock_guard lock(mutex_);
    owed_.insert(owed.begin(), owed.end());
    UpdateLagging();
  }
  thread_ = std::thread([this] {
    NameCurrentThread("stave:sink");
    Run();
  });
}

void SinkWriter::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::unique_lock lock(mutex_);
  if (prepare_) RefusePrepare(&lock);
}

std::string SinkWriter::DropTarget() {
  Stop();
  try {
    target_->Drop();
    return "";
  } catch (const std::exception& error) {
    return error.what();
  }
}

void SinkWriter::RequestPrepare(uint64_t epoch, std::shared_ptr<const SinkEpochChanges> changes,
                                uint64_t count,
                                std::function<void(std::optional<std::string>)> done) {
  {
    std::lock_guard lock(mutex_);
    // Refused at once when it is clear the epoch must be owed, so that the barrier never
    // waits for the thread to finish a long delivery or a backoff.
    if (!MustOwe(epoch, count) && Clock::now() >= retry_at_) {
      prepare_ = PrepareRequest{epoch, std::move(changes), count, std::move(done)};
      wake_.notify_all();
      return;
    }
  }
  done(std::nullopt);
}

bool SinkWriter::MustOwe(uint64_t epoch, size_t changes) const {
  bool earlier_owed = false;
  for (uint64_t owed : owed_) earlier_owed |= owed > finished_ && owed < epoch;
  return stopping_ || record_.paused || earlier_owed ||
         changes > target_->max_changes_per_transaction();
}

void SinkWriter::NoteOwed(uint64_t epoch, std::shared_ptr<const SinkEpochChanges> changes,
                          uint64_t count, size_t bytes) {
  std::lock_guard lock(mutex_);
  owed_.insert(epoch);
  if (changes && owed_memory_bytes_ + bytes <= kOwedMemoryBytes) {
    owed_in_memory_[epoch] = {std::move(changes), count, bytes};
    owed_memory_bytes_ += bytes;
  }
  UpdateLagging();
}

void SinkWriter::UpdateLagging() {
  size_t waiting = 0;
  for (uint64_t epoch : owed_) waiting += epoch > finished_;
  lagging_.store(waiting >= kOwedEpochsToPause, std::memory_order_release);
}

void SinkWriter::OnEpochCommitted(uint64_t epoch) {
  {
    std::lock_guard lock(mutex_);
    committed_ = std::max(committed_, epoch);
  }
  wake_.notify_all();
}

uint64_t SinkWriter::finished_epoch() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

SinkRecord SinkWriter::record() const {
  std::lock_guard lock(mutex_);
  return record_;
}

void SinkWriter::SetPaused(bool paused) {
  {
    std::lock_guard lock(mutex_);
    record_.paused = paused;
  }
  wake_.notify_all();
}

SinkStatus SinkWriter::status() const {
  std::lock_guard lock(mutex_);
  SinkStatus status;
  status.state = record_.paused && state_ == "running" ? "paused" : state_;
  status.committed_epoch = committed_;
  status.finished_epoch = finished_;
  for (uint64_t epoch : owed_) status.owed_epochs += epoch > finished_ && epoch <= committed_;
  if (record_.prepared_epoch > finished_ && record_.prepared_epoch <= committed_) {
    ++status.owed_epochs;
  }
  status.last_error = last_error_;
  return status;
}

void SinkWriter::RefusePrepare(std::unique_lock<std::mutex>* lock) {
  PrepareRequest request = std::move(*prepare_);
  prepare_.reset();
  lock->unlock();
  request.done(std::nullopt);
  lock->lock();
}

SinkChangeBatches SinkWriter::OwedChanges(uint64_t epoch) const {
  std::shared_ptr<const SinkEpochChanges> in_memory;
  {
    std::lock_guard lock(mutex_);
    auto it = owed_in_memory_.find(epoch);
    if (it != owed_in_memory_.end()) in_memory = it->second.changes;
  }
  if (in_memory) {
    // The same parts as the records in the checkpoint, so a staged delivery may resume.
    return [in_memory](const std::function<void(const Chunk&)>& consume) {
      for (const Chunk& part : *in_memory) consume(part);
    };
  }
  return [this, epoch](const std::function<void(const Chunk&)>& consume) {
    Status status = store_->ReadTableLog(
        log_id_, ViewLogSequence(epoch, 0), [&](uint64_t sequence, std::string_view bytes) {
          if (sequence >> 16 != epoch) return false;
          Chunk chunk = Chunk::WithTypes(types_);
          if (!DecodeChangeRecord(bytes, types_, &chunk)) {
            throw SqlError("XX001", fmt::format("sink \"{}\": the owed changes of epoch {} are "
                                                "corrupt",
                                                name_, epoch));
          }
          consume(chunk);
          return true;
        });
    status.ThrowIfError();
  };
}

uint64_t SinkWriter::CountOwed(uint64_t epoch) const {
  {
    std::lock_guard lock(mutex_);
    auto it = owed_in_memory_.find(epoch);
    if (it != owed_in_memory_.end()) return it->second.count;
  }
  uint64_t count = 0;
  store_
      ->ReadTableLog(log_id_, ViewLogSequence(epoch, 0),
                     [&](uint64_t sequence, std::string_view bytes) {
                       if (sequence >> 16 != epoch) return false;
                       uint64_t changes = 0;
                       if (storage::ReadVarint(&bytes, &changes)) count += changes;
                       return true;
                     })
      .ThrowIfError();
  return count;
}

void SinkWriter::Run() {
  std::unique_lock lock(mutex_);
  bool recovered = false;  // Whether the target was reconciled with the checkpoint once.
  while (!stopping_) {
    bool commit_due = record_.prepared_epoch > finished_ && record_.prepared_epoch <= committed_;
    bool owed_due = !record_.paused && !owed_.empty() && *owed_.begin() <= committed_;
    if (!prepare_ && !commit_due && !owed_due && recovered) {
      wake_.wait(lock);
      continue;
    }
    if (Clock::now() < retry_at_) {
      // The target failed a moment ago: owe the epoch rather than hold the checkpoint.
      if (prepare_) RefusePrepare(&lock);
      wake_.wait_until(lock, retry_at_);
      continue;
    }
    try {
      Step(&lock);
      recovered = true;
      if (state_ != "running") spdlog::info("sink \"{}\" writes to its target again", name_);
      state_ = "running";
      last_error_.clear();
      backoff_ = std::chrono::milliseconds(0);
    } catch (const std::exception& error) {
      if (!lock.owns_lock()) lock.lock();
      connected_ = false;
      target_->Disconnect();
      backoff_ = std::min(kMaxBackoff, std::max(kFirstBackoff, backoff_ * 2));
      retry_at_ = Clock::now() + backoff_;
      state_ = IsTargetRefusal(error) ? "failed" : "retrying";
      // A target's message may quote the connection string it failed to parse.
      std::string message = RedactConnectionString(error.what());
      if (last_error_ != message) {
        spdlog::warn("sink \"{}\": {} (retrying in {} ms)", name_, message, backoff_.count());
      }
      last_error_ = message;
      if (prepare_) RefusePrepare(&lock);
    }
  }
}

void SinkWriter::Step(std::unique_lock<std::mutex>* lock) {
  if (!connected_) {
    std::optional<std::string> keep;
    if (record_.prepared_epoch > finished_) keep = record_.prepared_id;
    lock->unlock();
    target_->Connect();
    uint64_t progress = target_->Recover(keep);
    lock->lock();
    connected_ = true;
    finished_ = std::max(finished_, progress);
    UpdateLagging();
  }
  // A transaction prepared for an epoch whose checkpoint has committed.
  if (record_.prepared_epoch > finished_ && record_.prepared_epoch <= committed_) {
    uint64_t epoch = record_.prepared_epoch;
    std::string id = record_.prepared_id;
    lock->unlock();
    failpoint::Hit("sink_before_commit_prepared");
    target_->CommitPrepared(epoch, id);
    failpoint::Hit("sink_after_commit_prepared");
    CountDelivered(std::exchange(prepared_changes_, 0));
    lock->lock();
    finished_ = std::max(finished_, epoch);
  }
  // Owed epochs whose checkpoints have committed, in order.
  while (!stopping_ && !record_.paused && !owed_.empty() && *owed_.begin() <= committed_) {
    uint64_t epoch = *owed_.begin();
    if (epoch > finished_) {
      lock->unlock();
      failpoint::Hit("sink_before_deliver");
      uint64_t changes = CountOwed(epoch);
      target_->Deliver(epoch, changes, OwedChanges(epoch));
      failpoint::Hit("sink_after_deliver");
      CountDelivered(changes);
      lock->lock();
      finished_ = std::max(finished_, epoch);
    }
    owed_.erase(epoch);
    if (auto it = owed_in_memory_.find(epoch); it != owed_in_memory_.end()) {
      owed_memory_bytes_ -= it->second.bytes;
      owed_in_memory_.erase(it);
    }
    UpdateLagging();
  }
  if (!prepare_) return;
  // Pre-commit at the barrier: only once every earlier epoch is finished.
  uint64_t epoch = prepare_->epoch;
  if (MustOwe(epoch, prepare_->count) || record_.prepared_epoch > finished_) {
    RefusePrepare(lock);
    return;
  }
  PrepareRequest request = std::move(*prepare_);
  prepare_.reset();
  std::string id = fmt::format("stave:{}:0:{}:{}", name_, generation_, epoch);
  lock->unlock();
  try {
    failpoint::Hit("sink_before_prepare");
    target_->Prepare(epoch, id, [&](const auto& consume) {
      for (const Chunk& part : *request.changes) consume(part);
    });
    failpoint::Hit("sink_after_prepare");
  } catch (...) {
    request.done(std::nullopt);  // Owed instead; a half-prepared id is rolled back on reconnect.
    throw;
  }
  prepared_changes_ = request.count;
  lock->lock();
  record_.prepared_epoch = epoch;
  record_.prepared_id = id;
  lock->unlock();
  request.done(id);
  lock->lock();
}

}  // namespace stave::executor
