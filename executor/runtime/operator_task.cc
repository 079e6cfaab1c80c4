#include "executor/runtime/operator_task.h"

#include <algorithm>

#include "common/cpu_time.h"
#include "common/failpoint.h"
#include "common/sql_error.h"

namespace stave::executor {
namespace {

// Messages handled per slice before the worker turns to other tasks.
constexpr int kMessagesPerSlice = 8;

}  // namespace

OperatorTask::OperatorTask(JobContext* job, std::vector<std::unique_ptr<StreamOperator>> operators,
                           std::unique_ptr<Outbox> outbox)
    : JobTask(job), operators_(std::move(operators)), outbox_(std::move(outbox)) {}

void OperatorTask::AddInput(std::shared_ptr<Channel> channel, size_t side) {
  inputs_.push_back(Input{std::move(channel), side});
}

Task::PollResult OperatorTask::PollSlice() {
  if (pending_report_) {
    if (operators_.back()->BarrierPending()) return PollResult::kWait;  // Woken when done.
    CompleteBarrier();
  }
  for (int slice = 0; slice < kMessagesPerSlice; ++slice) {
    if (outbox_ && !outbox_->Flush()) return PollResult::kWait;  // Backpressure.
    std::optional<Message> message;
    size_t index = 0;
    for (size_t tried = 0; tried < inputs_.size() && !message; ++tried) {
      index = next_input_;
      next_input_ = (next_input_ + 1) % inputs_.size();
      if (!inputs_[index].at_barrier) message = inputs_[index].channel->TryPop();
    }
    if (!message) break;  // Every input is empty or waits at the barrier.
    Handle(index, std::move(*message));
    if (pending_report_) return PollResult::kYield;  // Checks the operator at once.
  }
  size_t bytes = 0;
  for (const auto& op : operators_) bytes += op->BufferedBytes();
  buffered_bytes_.store(bytes, std::memory_order_relaxed);
  if (outbox_ && !outbox_->Flush()) return PollResult::kWait;
  for (const Input& input : inputs_) {
    if (!input.at_barrier && input.channel->HasMessage()) return PollResult::kYield;
  }
  return PollResult::kWait;  // A push into any input wakes this task.
}

void OperatorTask::Handle(size_t index, Message message) {
  Input& input = inputs_[index];
  switch (message.kind) {
    case Message::Kind::kChunk:
      rows_in_.fetch_add(message.chunk.size(), std::memory_order_relaxed);
      bytes_in_.fetch_add(message.chunk.EstimatedBytes(), std::memory_order_relaxed);
      operators_.front()->OnInputChunk(input.side, std::move(message.chunk));
      break;
    case Message::Kind::kBarrier:
      if (inputs_at_barrier_ == 0) {
        barrier_epoch_ = message.epoch;
        barrier_time_ = message.epoch_time;
      }
      if (message.epoch != barrier_epoch_) {
        throw SqlError(sqlstate::kInternalError, "barriers of different epochs met");
      }
      input.at_barrier = true;
      if (++inputs_at_barrier_ == inputs_.size()) PassBarrier(message.epoch);
      break;
    case Message::Kind::kWatermark: {
      input.watermark = std::max(input.watermark, message.watermark);
      int64_t side_lowest = INT64_MAX;
      for (const Input& each : inputs_) {
        if (each.side == input.side) side_lowest = std::min(side_lowest, each.watermark);
      }
      if (side_lowest > side_watermarks_[input.side]) {
        side_watermarks_[input.side] = side_lowest;
        operators_.front()->OnInputWatermark(input.side, side_lowest);
      }
      int64_t lowest = INT64_MAX;
      for (const Input& each : inputs_) lowest = std::min(lowest, each.watermark);
      if (lowest > watermark_) {
        watermark_ = lowest;
        operators_.front()->OnWatermark(watermark_);  // What it releases goes out first.
        if (outbox_) outbox_->Broadcast(Message::Watermark(watermark_));
      }
      break;
    }
  }
}

void OperatorTask::PassBarrier(uint64_t epoch) {
  BarrierReport report;
  report.job_id = job_->job_id();
  report.epoch = epoch;
  report.batch = job_->collector()->NewBatch(epoch, barrier_time_, last_batch_bytes_);
  std::chrono::nanoseconds cpu_start = ThreadCpuTime();
  operators_.front()->OnBarrier(report.batch.get());
  report.cpu = ThreadCpuTime() - cpu_start;
  pending_report_ = std::move(report);
  if (operators_.back()->BarrierPending()) return;
  CompleteBarrier();
}

void OperatorTask::CompleteBarrier() {
  std::chrono::nanoseconds cpu_start = ThreadCpuTime();
  operators_.back()->FinishBarrier(pending_report_->batch.get());
  pending_report_->cpu += ThreadCpuTime() - cpu_start;
  BarrierReport report = std::move(*pending_report_);
  pending_report_.reset();
  // Capped: after one huge epoch (a backfill) the next ones are ordinary again.
  constexpr size_t kMaxReservedBytes = size_t{64} << 20;
  last_batch_bytes_ = std::min(report.batch->RecordBytes(), kMaxReservedBytes);
  failpoint::Hit("epoch_operator_flushed");
  for (Input& input : inputs_) input.at_barrier = false;
  inputs_at_barrier_ = 0;
  if (outbox_) outbox_->Broadcast(Message::Barrier(report.epoch, report.batch->time()));
  job_->collector()->OnBarrierPassed(std::move(report));
}

}  // namespace stave::executor
