#include "executor/runtime/source_task.h"

#include <algorithm>

#include "common/failpoint.h"
#include "executor/connectors/dead_letter.h"

namespace stave::executor {
namespace {

// Adds to `counter` what `total` (a count a recovered position starts from) grew by since
// the last look; the first look only remembers it.
void CountGrowth(std::atomic<uint64_t>* counter, uint64_t total, std::optional<uint64_t>* seen) {
  if (!counter) return;
  if (*seen && total > **seen) counter->fetch_add(total - **seen, std::memory_order_relaxed);
  *seen = total;
}

// Chunks read per slice before the worker turns to other tasks.
constexpr int kChunksPerSlice = 8;
// How long a throttled source pauses before it looks again.
constexpr std::chrono::milliseconds kThrottlePause{5};

}  // namespace

SourceTask::SourceTask(JobContext* job, std::unique_ptr<SourceReader> reader,
                       std::unique_ptr<Outbox> outbox, Counters counters,
                       const std::atomic<bool>* throttle, std::string position_name)
    : JobTask(job),
      reader_(std::move(reader)),
      outbox_(std::move(outbox)),
      counters_(counters),
      throttle_(throttle),
      position_name_(std::move(position_name)) {}

void SourceTask::RequestBarrier(uint64_t epoch, SourceTargets targets, int64_t time) {
  {
    std::lock_guard lock(mutex_);
    request_ = BarrierRequest{epoch, std::move(targets), time};
  }
  Wake();
}

void SourceTask::MaybeInjectBarrier() {
  std::optional<BarrierRequest> request;
  {
    std::lock_guard lock(mutex_);
    if (!request_ || !(finished_ || reader_->CaughtUp(request_->targets))) return;
    request.swap(request_);
  }
  BarrierReport report;
  report.job_id = job_->job_id();
  report.epoch = request->epoch;
  report.batch = job_->collector()->NewBatch(request->epoch, request->time, 0);
  report.batch->PutSourcePosition(job_->job_id(), position_name_, reader_->Position());
  for (const DeadLetter& letter : dead_letters_) {
    report.batch->PutDeadLetter(letter.stream_id, letter.partition, letter.offset,
                                EncodeDeadLetter(letter));
  }
  dead_letters_.clear();
  report.retained_log = reader_->RetainedLog();
  outbox_->Broadcast(Message::Barrier(request->epoch, request->time));
  job_->collector()->OnBarrierPassed(std::move(report));
}

void SourceTask::CountBytes(const Chunk& chunk) {
  if (!counters_.bytes_in && !counters_.stream_bytes) return;
  uint64_t bytes = 0;
  if (std::optional<uint64_t> payload = reader_->payload_bytes()) {
    bytes = *payload - std::min(*payload, payload_bytes_seen_);
    payload_bytes_seen_ = *payload;
  } else {
    bytes = chunk.EstimatedBytes();
  }
  if (bytes == 0) return;
  if (counters_.bytes_in) counters_.bytes_in->fetch_add(bytes, std::memory_order_relaxed);
  if (counters_.stream_bytes) counters_.stream_bytes->fetch_add(bytes, std::memory_order_relaxed);
}

bool SourceTask::Paused() const {
  {
    // A barrier that waits for rows still to be read is never held up by a pause.
    std::lock_guard lock(mutex_);
    if (request_) return false;
  }
  if (throttle_ && throttle_->load(std::memory_order_acquire)) return true;
  for (const std::atomic<bool>* flag : paused_while_) {
    if (flag->load(std::memory_order_acquire)) return true;
  }
  return false;
}

Task::PollResult SourceTask::PollSlice() {
  for (int slice = 0; slice < kChunksPerSlice; ++slice) {
    if (!outbox_->Flush()) return PollResult::kWait;  // Downstream is full: backpressure.
    MaybeInjectBarrier();
    if (!outbox_->Flush()) return PollResult::kWait;
    if (finished_) return PollResult::kWait;  // Woken for barriers only.
    if (Paused()) {
      WakeAt(std::chrono::steady_clock::now() + kThrottlePause);
      return PollResult::kWait;
    }
    Chunk chunk;
    auto wake_at = std::chrono::steady_clock::time_point::max();
    SourceReader::PollStatus status = reader_->Poll(kChunkRows, &chunk, &wake_at);
    for (DeadLetter& letter : reader_->TakeDeadLetters())
      dead_letters_.push_back(std::move(letter));
    CountGrowth(counters_.bad_records, reader_->bad_records(), &bad_records_seen_);
    CountGrowth(counters_.late_rows, reader_->late_rows(), &late_rows_seen_);
    CountBytes(chunk);
    switch (status) {
      case SourceReader::PollStatus::kIdle:
        // Event time may move without rows: an idle split stops holding it back.
        if (std::optional<int64_t> watermark = reader_->TakeWatermark()) {
          outbox_->Broadcast(Message::Watermark(*watermark));
        }
        if (wake_at != std::chrono::steady_clock::time_point::max()) WakeAt(wake_at);
        return PollResult::kWait;
      case SourceReader::PollStatus::kFinished:
        finished_ = true;
        continue;  // A barrier may wait for the source to finish.
      case SourceReader::PollStatus::kData:
        break;
    }
    failpoint::Hit("source_chunk_read");
    job_->NoteProgress();
    if (!chunk.empty()) {
      if (counters_.rows_in) counters_.rows_in->fetch_add(chunk.size(), std::memory_order_relaxed);
      if (counters_.stream_rows) {
        counters_.stream_rows->fetch_add(chunk.size(), std::memory_order_relaxed);
      }
      outbox_->Send(std::move(chunk));
    }
    // After the rows that raised it: downstream sees every row below it first.
    if (std::optional<int64_t> watermark = reader_->TakeWatermark()) {
      outbox_->Broadcast(Message::Watermark(*watermark));
    }
  }
  return outbox_->Flush() ? PollResult::kYield : PollResult::kWait;
}

}  // namespace stave::executor
