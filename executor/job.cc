#include "executor/job.h"

#include <spdlog/spdlog.h>

#include "common/sql_error.h"
#include "executor/operators/materialize_operator.h"

namespace stave::executor {

namespace {
constexpr std::string_view kSourcePositionName = "source";
}  // namespace

Job::Job(uint32_t id, std::string name, std::unique_ptr<SourceReader> source,
         std::vector<std::unique_ptr<StreamOperator>> operators, Counters counters)
    : id_(id),
      name_(std::move(name)),
      source_(std::move(source)),
      operators_(std::move(operators)),
      counters_(counters) {
  for (size_t i = 0; i + 1 < operators_.size(); ++i) {
    operators_[i]->set_downstream(operators_[i + 1].get());
  }
}

void Job::Recover(const storage::Store& store) {
  std::optional<std::string> position =
      store.GetSourcePosition(id_, kSourcePositionName).ValueOrThrow();
  if (position) source_->Seek(*position).ThrowIfError();
  try {
    for (auto& op : operators_) op->Start();
  } catch (const SqlError& error) {
    failed_ = true;
    error_ = error.what();
    spdlog::error("materialized view \"{}\" stopped: {}", name_, error_);
  }
}

Job::StepResult Job::Step(std::chrono::steady_clock::time_point* wake_at) {
  if (failed_) return StepResult::kFailed;
  if (finished_) return StepResult::kFinished;
  Chunk chunk;
  try {
    switch (source_->Poll(kChunkRows, &chunk, wake_at)) {
      case SourceReader::PollStatus::kIdle:
        return StepResult::kIdle;
      case SourceReader::PollStatus::kFinished:
        finished_ = true;
        return StepResult::kFinished;
      case SourceReader::PollStatus::kData:
        break;
    }
    counters_.rows_in->fetch_add(chunk.size(), std::memory_order_relaxed);
    counters_.stream_rows->fetch_add(chunk.size(), std::memory_order_relaxed);
    operators_.front()->OnChunk(std::move(chunk));
  } catch (const SqlError& error) {
    // The epoch's partial effects stay in uncommitted buffers that are never flushed, so
    // the view keeps its last committed state; a restart retries from there.
    failed_ = true;
    error_ = error.what();
    spdlog::error("materialized view \"{}\" stopped: {}", name_, error_);
    return StepResult::kFailed;
  }
  return StepResult::kProgress;
}

size_t Job::BufferedBytes() const {
  size_t bytes = 0;
  for (const auto& op : operators_) bytes += op->BufferedBytes();
  return bytes;
}

void Job::set_log_changes(bool on) {
  static_cast<MaterializeOperator*>(operators_.back().get())->set_log_changes(on);
}

void Job::Checkpoint(storage::EpochBatch* batch) {
  if (failed_) return;
  batch->PutSourcePosition(id_, kSourcePositionName, source_->Position());
  operators_.front()->OnBarrier(batch);
}

}  // namespace stave::executor
