#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/connectors/source_reader.h"
#include "executor/job_graph.h"
#include "executor/runtime/job_context.h"
#include "executor/runtime/operator_task.h"
#include "executor/runtime/partitioner.h"
#include "executor/runtime/scheduler.h"
#include "executor/runtime/source_task.h"
#include "storage/store.h"

namespace stave::executor {

/// How a stage of a dataflow receives its rows: which upstream exchange routes them to its
/// instances.
struct StageInput {
  bool round_robin = true;                  ///< Append-only input: whole chunks in turn.
  std::vector<planner::BoundExprPtr> keys;  ///< Else by these keys over the stage's input.

  Partitioner MakePartitioner(size_t instances) const {
    return round_robin ? Partitioner::RoundRobin(instances) : Partitioner::ByKey(instances, keys);
  }
};

/// Where a stage's output goes: the next stage in the list (stage -1), or stage `stage` (a
/// later one) as its input `side`.
struct StageOutput {
  int stage = -1;
  size_t side = 0;
};

/// A chain of operators after a stage's own (its trunk's), reading the trunk's output, with
/// an output of its own: a stage whose result several parts of a query read has one branch
/// per reader (planner/shared_subplans.h).
struct StageBranch {
  size_t operators = 0;  ///< How many of each instance's operators are the branch's.
  StageOutput output;
};

/// One stage of a dataflow: parallel instances of the same chain of operators, each owning
/// the keys of a range of virtual nodes.
struct Stage {
  StageInput input;
  /// For a stage whose first operator has two inputs (a join): the routing of its right
  /// input (side 1); `input` routes side 0.
  StageInput right_input;
  /// Per instance, the operators in dataflow order: the trunk's, then each branch's.
  std::vector<std::vector<std::unique_ptr<StreamOperator>>> instances;
  /// Where the trunk's output goes, if the stage has no branches. Ignored for the last stage.
  StageOutput output;
  /// Chains reading the trunk's output, each to its own output (the last stage has none).
  std::vector<StageBranch> branches;
  /// What the stage's operators do, in the order of `instances`, as EXPLAIN names them (for
  /// the admin API's dataflow graph).
  std::vector<std::string> operator_labels;

  const StageInput& InputOf(size_t side) const { return side == 0 ? input : right_input; }
};

/// A reader of one of a job's inputs and the stage input it feeds.
struct JobSource {
  std::unique_ptr<SourceReader> reader;
  size_t stage = 0;
  size_t side = 0;
  SourceTask::Counters counters;
  std::string label;   ///< What it reads, e.g. "stream orders" (for the admin API).
  uint32_t input = 0;  ///< The catalog id of what it reads; 0 for a VALUES list.
};

/// The running dataflow of one materialized view: a source task reading the view's input
/// (each view reads its input from the start, independently of other views), then stages of
/// parallel operator instances joined by hash exchanges; the last stage materializes the
/// view. Barriers enter at the source; every task reports its share of each epoch to the
/// collector (the engine), which commits the epoch once all have.
class Job {
 public:
  using Counters = SourceTask::Counters;

  /// `stages` (at least one) in dataflow order; the last stage's operators end in the view's
  /// materialization, whose instances share `log_changes`. `throttle` pauses the source
  /// while true (may be null).
  Job(uint32_t id, std::string name, std::unique_ptr<SourceReader> source,
      std::vector<Stage> stages, std::shared_ptr<std::atomic<bool>> log_changes, Counters counters,
      const std::atomic<bool>* throttle = nullptr);
  /// A job with several inputs (a join's): one source task per reader, each checkpointing
  /// its own position. Stages are in an order where every stage comes after the stages
  /// and sources feeding it; the last one ends the dataflow.
  Job(uint32_t id, std::string name, std::vector<JobSource> sources, std::vector<Stage> stages,
      std::shared_ptr<std::atomic<bool>> log_changes, const std::atomic<bool>* throttle = nullptr);
  /// Stops the tasks.
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  /// Pauses the sources' reading while `*flag` is true (see SourceTask::PauseWhile).
  void PauseSourcesWhile(const std::atomic<bool>* flag) {
    for (auto& source : sources_) source->PauseWhile(flag);
  }
  /// Asks for the next checkpoint before its interval while `*flag` is true (an operator's
  /// epoch is full). Before the job starts.
  void CheckpointEarlyWhile(const std::atomic<bool>* flag) { early_checkpoint_while_ = flag; }
  bool WantsEarlyCheckpoint() const {
    return early_checkpoint_while_ && early_checkpoint_while_->load(std::memory_order_acquire);
  }

  uint32_t id() const { return id_; }
  const std::string& name() const { return name_; }
  size_t parallelism() const { return parallelism_; }

  /// Seeks the sources to their committed positions (if any) and starts the operators, before
  /// the tasks run. `start_epoch`: the epoch the job starts in (a view over a view backfills
  /// from a snapshot no older than it). Throws SqlError if the position cannot be read.
  void Recover(const storage::Store& store, uint64_t start_epoch);

  /// Spawns the tasks on `scheduler`; they report barriers to `collector`.
  void Start(Scheduler* scheduler, EpochCollector* collector);
  bool started() const { return started_; }
  /// Stops the tasks and returns once none runs. Idempotent.
  void Stop();

  /// Injects the barrier of `epoch` once the source has read `targets`.
  void InjectBarrier(uint64_t epoch, const SourceTargets& targets, int64_t time = 0);
  /// Tells the source there may be new data.
  void Wake();

  /// How many barrier reports each epoch gets from this job (one per task).
  size_t tasks() const { return context_.tasks().size(); }

  /// Turns the change log of this job's view on or off (on while views read it), from the
  /// next epoch on.
  void set_log_changes(bool on) { log_changes_->store(on, std::memory_order_release); }

  /// Called after each committed checkpoint, on the engine's coordinator thread (a sink's
  /// writer then delivers what the checkpoint made final). Set before Start.
  void set_on_commit(std::function<void(uint64_t epoch)> on_commit) {
    on_commit_ = std::move(on_commit);
  }
  void OnEpochCommitted(uint64_t epoch) {
    if (on_commit_) on_commit_(epoch);
  }
  /// Bytes of uncommitted state the job's operators hold.
  size_t BufferedBytes() const;
  /// The dataflow's shape and counters now. Thread-safe: reads only atomics and what the
  /// constructor fixed.
  JobGraph Describe() const;
  /// Whether rows moved since the last call.
  bool TakeProgress() { return context_.TakeProgress(); }

  bool failed() const { return context_.failed(); }
  /// Stops the job on an error from outside its tasks (a limit the engine enforces).
  void Fail(const std::string& error) { context_.Fail(error); }
  /// Why the job failed (a runtime error such as an overflow), empty while it runs.
  std::string error() const { return context_.error(); }

 private:
  uint32_t id_;
  std::string name_;
  size_t parallelism_ = 1;
  JobContext context_;
  std::shared_ptr<std::atomic<bool>> log_changes_;
  std::vector<std::shared_ptr<SourceTask>> sources_;
  const std::atomic<bool>* early_checkpoint_while_ = nullptr;
  std::vector<std::shared_ptr<OperatorTask>> operator_tasks_;
  /// The shape for Describe: each source's label, stage and side; each stage's tasks.
  struct SourceShape {
    std::string label;
    uint32_t input = 0;
    size_t stage = 0;
    size_t side = 0;
  };
  struct StageShape {
    std::vector<std::string> operators;
    std::vector<std::shared_ptr<OperatorTask>> tasks;
    std::string routing[2];  ///< How each input side is routed.
    /// The stages it feeds (one per branch), each with the input it feeds; none for the last.
    std::vector<StageOutput> consumers;
  };
  std::vector<SourceShape> source_shapes_;
  std::vector<StageShape> stage_shapes_;
  std::function<void(uint64_t)> on_commit_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace stave::executor
