#include "executor/job.h"

#include "common/sql_error.h"
#include "executor/operators/tee_operator.h"

namespace stave::executor {

namespace {

std::vector<JobSource> OneSource(std::unique_ptr<SourceReader> reader,
                                 SourceTask::Counters counters) {
  std::vector<JobSource> sources(1);
  sources[0].reader = std::move(reader);
  sources[0].counters = counters;
  return sources;
}

// The name source `i` of a job stores its position under. The first keeps the plain name, so
// jobs of one input read their old positions.
std::string PositionName(size_t i) {
  return i == 0 ? std::string(SourceTask::kPositionName)
                : std::string(SourceTask::kPositionName) + "." + std::to_string(i);
}

// Links each of `operators[begin, end)` to the next.
void LinkInOrder(const std::vector<std::unique_ptr<StreamOperator>>& operators, size_t begin,
                 size_t end) {
  for (size_t i = begin; i + 1 < end; ++i) operators[i]->set_downstream(operators[i + 1].get());
}

// One instance's operators of a stage (the trunk's, then each branch's), linked and
// ending in `outbox` (null for the last stage): the trunk alone, or the trunk, a tee to
// the branches, and each branch ending in its own route of the outbox.
std::vector<std::unique_ptr<StreamOperator>> ChainOperators(
    std::vector<std::unique_ptr<StreamOperator>> operators,
    const std::vector<StageBranch>& branches, Outbox* outbox) {
  size_t branch_operators = 0;
  for (const StageBranch& branch : branches) branch_operators += branch.operators;
  if (branch_operators > operators.size()) {
    throw SqlError(sqlstate::kInternalError, "a stage's branches have more operators than it");
  }
  if (!branches.empty() && !outbox) {
    throw SqlError(sqlstate::kInternalError, "the last stage of a job has branches");
  }
  std::vector<std::unique_ptr<StreamOperator>> chained;
  size_t next = 0;
  for (size_t trunk = operators.size() - branch_operators; next < trunk; ++next) {
    chained.push_back(std::move(operators[next]));
  }
  if (branches.empty()) {
    if (outbox) chained.push_back(std::make_unique<OutboxOperator>(outbox));
    LinkInOrder(chained, 0, chained.size());
    return chained;
  }
  auto tee = std::make_unique<TeeOperator>();
  TeeOperator* tee_operator = tee.get();
  chained.push_back(std::move(tee));
  LinkInOrder(chained, 0, chained.size());
  for (size_t b = 0; b < branches.size(); ++b) {
    size_t head = chained.size();
    for (size_t i = 0; i < branches[b].operators; ++i) {
      chained.push_back(std::move(operators[next++]));
    }
    chained.push_back(std::make_unique<OutboxOperator>(outbox, b));
    LinkInOrder(chained, head, chained.size());
    tee_operator->AddBranch(chained[head].get());
  }
  return chained;
}

}  // namespace

Job::Job(uint32_t id, std::string name, std::unique_ptr<SourceReader> source,
         std::vector<Stage> stages, std::shared_ptr<std::atomic<bool>> log_changes,
         Counters counters, const std::atomic<bool>* throttle)
    : Job(id, std::move(name), OneSource(std::move(source), counters), std::move(stages),
          std::move(log_changes), throttle) {}

Job::Job(uint32_t id, std::string name, std::vector<JobSource> sources, std::vector<Stage> stages,
         std::shared_ptr<std::atomic<bool>> log_changes, const std::atomic<bool>* throttle)
    : id_(id), name_(name), context_(id, std::move(name)), log_changes_(std::move(log_changes)) {
  // Build from the last stage back, so each stage's outbox can point at the channels of
  // the stages it feeds. A channel joins one upstream instance to one downstream instance.
  std::vector<std::vector<std::shared_ptr<OperatorTask>>> stage_tasks(stages.size());
  auto route_to = [&](size_t consumer, size_t side) {
    Outbox::Route route{
        stages[consumer].InputOf(side).MakePartitioner(stage_tasks[consumer].size()), {}};
    for (const auto& task : stage_tasks[consumer]) {
      auto channel = std::make_shared<Channel>();
      task->AddInput(channel, side);
      route.channels.push_back(std::move(channel));
    }
    return route;
  };
  // What each stage feeds: one consumer per branch, else the trunk's; none for the last.
  std::vector<std::vector<StageOutput>> consumers(stages.size());
  for (size_t s = 0; s + 1 < stages.size(); ++s) {
    std::vector<StageOutput> outputs;
    if (stages[s].branches.empty()) outputs.push_back(stages[s].output);
    for (const StageBranch& branch : stages[s].branches) outputs.push_back(branch.output);
    for (StageOutput& output : outputs) {
      if (output.stage < 0) output.stage = static_cast<int>(s + 1);
    }
    consumers[s] = std::move(outputs);
  }
  for (size_t s = stages.size(); s-- > 0;) {
    Stage& stage = stages[s];
    for (auto& operators : stage.instances) {
      std::unique_ptr<Outbox> outbox;
      if (!consumers[s].empty()) {
        std::vector<Outbox::Route> routes;
        for (const StageOutput& output : consumers[s]) {
          routes.push_back(route_to(static_cast<size_t>(output.stage), output.side));
        }
        outbox = std::make_unique<Outbox>(std::move(routes));
      }
      operators = ChainOperators(std::move(operators), stage.branches, outbox.get());
      stage_tasks[s].push_back(
          std::make_shared<OperatorTask>(&context_, std::move(operators), std::move(outbox)));
    }
  }
  // The last operators may finish a barrier in the background (a sink pre-committing):
  // they wake their task when done.
  for (const auto& task : stage_tasks.back()) {
    std::weak_ptr<Task> weak = task;
    task->operators().back()->set_wake([weak] {
      if (std::shared_ptr<Task> strong = weak.lock()) strong->Wake();
    });
  }
  parallelism_ = stage_tasks.back().size();
  for (size_t s = 0; s < stages.size(); ++s) {
    StageShape shape;
    shape.operators = stages[s].operator_labels;
    shape.tasks = stage_tasks[s];
    for (size_t side = 0; side < 2; ++side) {
      shape.routing[side] = stages[s].InputOf(side).round_robin ? "round-robin" : "hash";
    }
    shape.consumers = consumers[s];
    stage_shapes_.push_back(std::move(shape));
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    JobSource& source = sources[i];
    source_shapes_.push_back({source.label, source.input, source.stage, source.side});
    std::string position_name = PositionName(i);
    std::vector<Outbox::Route> routes;
    routes.push_back(route_to(source.stage, source.side));
    sources_.push_back(std::make_shared<SourceTask>(
        &context_, std::move(source.reader), std::make_unique<Outbox>(std::move(routes)),
        source.counters, throttle, std::move(position_name)));
    context_.AddTask(sources_.back());
  }
  for (auto& tasks : stage_tasks) {
    for (auto& task : tasks) {
      context_.AddTask(task);
      operator_tasks_.push_back(task);
    }
  }
  // Each channel knows its two ends, so that a push wakes the consumer and a freed slot
  // the producer. An outbox's channels are its routes', route after route.
  auto wire = [&](const std::shared_ptr<Task>& producer, Outbox* outbox,
                  const std::vector<size_t>& consumer_stages) {
    size_t channel = 0;
    for (size_t consumer : consumer_stages) {
      for (const auto& task : stage_tasks[consumer]) {
        outbox->channels()[channel++]->Connect(producer, task);
      }
    }
  };
  for (size_t i = 0; i < sources_.size(); ++i) {
    wire(sources_[i], sources_[i]->outbox(), {sources[i].stage});
  }
  for (size_t s = 0; s + 1 < stage_tasks.size(); ++s) {
    std::vector<size_t> consumer_stages;
    for (const StageOutput& output : consumers[s]) {
      consumer_stages.push_back(static_cast<size_t>(output.stage));
    }
    for (auto& task : stage_tasks[s]) wire(task, task->outbox(), consumer_stages);
  }
}

Job::~Job() { Stop(); }

void Job::Recover(const storage::Store& store, uint64_t start_epoch) {
  for (const auto& source : sources_) {
    std::optional<std::string> position =
        store.GetSourcePosition(id_, source->position_name()).ValueOrThrow();
    SourceReader* reader = source->reader();
    reader->SetStartEpoch(start_epoch);
    if (position) reader->Seek(*position).ThrowIfError();
  }
  try {
    for (const auto& task : operator_tasks_) {
      for (const auto& op : task->operators()) op->Start();
    }
  } catch (const SqlError& error) {
    context_.Fail(error.what());
  }
}

void Job::Start(Scheduler* scheduler, EpochCollector* collector) {
  context_.set_collector(collector);
  started_ = true;
  if (context_.failed()) return;  // Failed while starting: its tasks never run.
  context_.TasksStarted();
  scheduler->Spawn(context_.tasks());
}

void Job::Stop() {
  if (stopped_) return;
  stopped_ = true;
  context_.Cancel();
}

void Job::InjectBarrier(uint64_t epoch, const SourceTargets& targets, int64_t time) {
  for (const auto& source : sources_) source->RequestBarrier(epoch, targets, time);
}

void Job::Wake() {
  for (const auto& source : sources_) source->Wake();
}

size_t Job::BufferedBytes() const {
  size_t bytes = 0;
  for (const auto& task : operator_tasks_) bytes += task->buffered_bytes();
  return bytes;
}

JobGraph Job::Describe() const {
  JobGraph graph;
  graph.id = id_;
  graph.name = name_;
  graph.failed = context_.failed();
  graph.error = context_.error();
  for (size_t i = 0; i < sources_.size(); ++i) {
    JobGraphNode node;
    node.id = "source" + std::to_string(i);
    node.kind = "source";
    node.label = source_shapes_[i].label.empty() ? "input" : source_shapes_[i].label;
    node.input = source_shapes_[i].input;
    node.position_name = PositionName(i);
    const Outbox* outbox = sources_[i]->outbox();
    node.rows_in = outbox->rows_sent();
    node.rows_out = node.rows_in;
    node.bytes_in = outbox->bytes_sent();
    node.bytes_out = node.bytes_in;
    node.backpressured = outbox->blocked() ? 1 : 0;
    node.lag = sources_[i]->reader()->Lag();
    node.backfill = sources_[i]->reader()->backfill();
    graph.edges.push_back({node.id, "stage" + std::to_string(source_shapes_[i].stage),
                           stage_shapes_[source_shapes_[i].stage].routing[source_shapes_[i].side]});
    graph.nodes.push_back(std::move(node));
  }
  for (size_t s = 0; s < stage_shapes_.size(); ++s) {
    const StageShape& shape = stage_shapes_[s];
    JobGraphNode node;
    node.id = "stage" + std::to_string(s);
    node.kind = "stage";
    node.label = "Stage " + std::to_string(s);
    node.operators = shape.operators;
    node.parallelism = shape.tasks.size();
    for (const auto& task : shape.tasks) {
      node.rows_in += task->rows_in();
      node.bytes_in += task->bytes_in();
      node.buffered_bytes += task->buffered_bytes();
      if (const Outbox* outbox = task->outbox()) {
        node.rows_out += outbox->rows_sent();
        node.bytes_out += outbox->bytes_sent();
        if (outbox->blocked()) ++node.backpressured;
      }
    }
    for (const StageOutput& consumer : shape.consumers) {
      graph.edges.push_back({node.id, "stage" + std::to_string(consumer.stage),
                             stage_shapes_[consumer.stage].routing[consumer.side]});
    }
    graph.nodes.push_back(std::move(node));
  }
  return graph;
}

}  // namespace stave::executor
