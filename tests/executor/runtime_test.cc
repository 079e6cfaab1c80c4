#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "executor/runtime/channel.h"
#include "executor/runtime/job_context.h"
#include "executor/runtime/operator_task.h"
#include "executor/runtime/outbox.h"
#include "executor/runtime/partitioner.h"
#include "executor/runtime/scheduler.h"
#include "storage/key_codec.h"

namespace stave::executor {
namespace {

Chunk Numbers(int64_t from, int64_t to) {
  Chunk chunk = Chunk::WithTypes({TypeId::kInt64});
  for (int64_t i = from; i < to; ++i) chunk.AppendRow({Value::Int(i)}, RowOp::kInsert);
  return chunk;
}

// Sends `count` one-row chunks into `out`, then a barrier; yields when the channel is full.
class ProducerTask : public Task {
 public:
  ProducerTask(std::shared_ptr<Channel> out, int64_t count) : out_(std::move(out)), count_(count) {}
  PollResult Poll() override {
    while (next_ <= count_) {
      Message message =
          next_ < count_ ? Message::Rows(Numbers(next_, next_ + 1)) : Message::Barrier(1);
      if (!out_->TryPush(&message)) return PollResult::kWait;  // Woken when there is room.
      ++next_;
    }
    return PollResult::kDone;
  }

 private:
  std::shared_ptr<Channel> out_;
  int64_t count_;
  int64_t next_ = 0;
};

// Receives until the barrier; checks the order.
class ConsumerTask : public Task {
 public:
  explicit ConsumerTask(std::shared_ptr<Channel> in) : in_(std::move(in)) {}
  PollResult Poll() override {
    while (std::optional<Message> message = in_->TryPop()) {
      if (message->kind == Message::Kind::kBarrier) {
        done_ = true;
        return PollResult::kDone;
      }
      if (message->chunk.columns[0].ints[0] != received_) in_order_ = false;
      ++received_;
    }
    return PollResult::kWait;
  }
  bool done() const { return done_.load(); }
  int64_t received() const { return received_; }
  bool in_order() const { return in_order_; }

 private:
  std::shared_ptr<Channel> in_;
  std::atomic<bool> done_{false};
  int64_t received_ = 0;
  bool in_order_ = true;
};

TEST(SchedulerTest, ManyPipelinesThroughTinyChannelsOnFewWorkersFinish) {
  // More blocked-on-full-channel producers than workers: a blocking design would deadlock.
  for (size_t workers : {1, 2}) {
    Scheduler scheduler(workers);
    std::vector<std::shared_ptr<ConsumerTask>> consumers;
    std::vector<std::shared_ptr<Task>> tasks;
    for (int pipeline = 0; pipeline < 8; ++pipeline) {
      auto channel = std::make_shared<Channel>(1);
      auto producer = std::make_shared<ProducerTask>(channel, 2000);
      auto consumer = std::make_shared<ConsumerTask>(channel);
      channel->Connect(producer, consumer);
      consumers.push_back(consumer);
      tasks.push_back(producer);
      tasks.push_back(consumer);
    }
    scheduler.Spawn(tasks);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (const auto& consumer : consumers) {
      while (!consumer->done() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      ASSERT_TRUE(consumer->done()) << "stuck with " << workers << " workers";
      EXPECT_EQ(consumer->received(), 2000);
      EXPECT_TRUE(consumer->in_order());
    }
  }
}

class WakeLaterTask : public Task {
 public:
  PollResult Poll() override {
    if (polls_++ == 0) {
      WakeAt(std::chrono::steady_clock::now() + std::chrono::milliseconds(30));
      return PollResult::kWait;
    }
    return PollResult::kDone;
  }
  std::atomic<int> polls_{0};
};

TEST(SchedulerTest, TimersWakeWaitingTasks) {
  Scheduler scheduler(1);
  auto task = std::make_shared<WakeLaterTask>();
  auto start = std::chrono::steady_clock::now();
  scheduler.Spawn({task});
  while (!task->done()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(30));
  EXPECT_EQ(task->polls_.load(), 2);
}

// The workers carry a name, so `top -H` and `perf` tell the dataflows' time from the rest.
TEST(SchedulerTest, WorkersAreNamed) {
  auto named_workers = [] {
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
      std::ifstream comm(entry.path() / "comm");
      std::string name;
      std::getline(comm, name);
      if (name == "stave:worker") ++count;
    }
    return count;
  };
  int before = named_workers();
  {
    Scheduler scheduler(3);
    // A thread names itself once it runs: wait for all three.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (named_workers() < before + 3 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(named_workers(), before + 3);
  }
  EXPECT_EQ(named_workers(), before);
}

// The workers run below the process's other threads: the checkpoint's commit, queries and
// sinks get a core first when the dataflow keeps every core busy.
class NicenessTask : public Task {
 public:
  PollResult Poll() override {
    errno = 0;
    niceness = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    ran.store(true);
    return PollResult::kDone;
  }
  int niceness = 0;
  std::atomic<bool> ran{false};
};

TEST(SchedulerTest, WorkersRunBelowTheOtherThreads) {
  errno = 0;
  int own = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  ASSERT_EQ(errno, 0);
  if (own + Scheduler::kWorkerNiceness > 19) GTEST_SKIP() << "already at the lowest priority";
  auto task = std::make_shared<NicenessTask>();
  Scheduler scheduler(1);
  scheduler.Spawn({task});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!task->ran.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(task->ran.load());
  EXPECT_EQ(task->niceness, own + Scheduler::kWorkerNiceness);
  // The thread that made the pool keeps its priority.
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())), own);
}

TEST(PartitionerTest, RowsGoToTheInstanceOwningTheirKey) {
  auto key = planner::BoundExpr::MakeColumn(0, TypeId::kInt64);
  Partitioner partitioner = Partitioner::ByKey(3, {key});
  std::vector<Chunk> parts = partitioner.Split(Numbers(0, 1000));
  ASSERT_EQ(parts.size(), 3u);
  size_t rows = 0;
  for (size_t instance = 0; instance < 3; ++instance) {
    EXPECT_GT(parts[instance].size(), 200u);  // Virtual nodes spread keys evenly enough.
    for (size_t r = 0; r < parts[instance].size(); ++r) {
      std::string encoded;
      storage::EncodeKeyValue(parts[instance].columns[0].GetValue(r), TypeId::kInt64, &encoded);
      EXPECT_EQ(InstanceOfKey(encoded, 3), instance);
    }
    rows += parts[instance].size();
  }
  EXPECT_EQ(rows, 1000u);
  // Ranges of virtual nodes: instance i of n owns [i * 256 / n, (i + 1) * 256 / n).
  EXPECT_EQ(InstanceOfVirtualNode(0, 4), 0u);
  EXPECT_EQ(InstanceOfVirtualNode(63, 4), 0u);
  EXPECT_EQ(InstanceOfVirtualNode(64, 4), 1u);
  EXPECT_EQ(InstanceOfVirtualNode(255, 4), 3u);

  Partitioner round_robin = Partitioner::RoundRobin(2);
  EXPECT_EQ(round_robin.Split(Numbers(0, 5))[0].size(), 5u);
  EXPECT_EQ(round_robin.Split(Numbers(0, 5))[1].size(), 5u);
}

// Records what it sees; at a barrier, writes how many rows it saw before it.
class CountingOperator : public StreamOperator {
 public:
  void OnChunk(Chunk chunk) override {
    for (size_t r = 0; r < chunk.size(); ++r) seen_.push_back(chunk.columns[0].ints[r]);
  }
  void OnBarrier(storage::EpochBatch* batch) override {
    batch->PutSourcePosition(1, "rows", std::to_string(seen_.size()));
    StreamOperator::OnBarrier(batch);
  }
  std::vector<int64_t> seen_;
};

class RecordingCollector : public EpochCollector {
 public:
  void OnBarrierPassed(BarrierReport report) override {
    std::lock_guard lock(mutex_);
    epochs_.push_back(report.epoch);
    changed_.notify_all();
  }
  void OnJobFailed(uint32_t, const std::string&) override {}
  void WaitFor(size_t reports) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(30), [&] { return epochs_.size() >= reports; });
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<uint64_t> epochs_;
};

// One OperatorTask with a CountingOperator and two input channels a and b, running on its
// own scheduler; `out` (optional) receives what it sends on.
struct TwoInputTask {
  explicit TwoInputTask(std::shared_ptr<Channel> out = nullptr) {
    job.set_collector(&collector);
    std::vector<std::unique_ptr<StreamOperator>> operators;
    operators.push_back(std::make_unique<CountingOperator>());
    counting = static_cast<CountingOperator*>(operators.front().get());
    std::unique_ptr<Outbox> outbox;
    if (out) {
      outbox = std::make_unique<Outbox>(Partitioner::RoundRobin(1),
                                        std::vector<std::shared_ptr<Channel>>{out});
    }
    task = std::make_shared<OperatorTask>(&job, std::move(operators), std::move(outbox));
    for (const auto& input : {a, b}) {
      task->AddInput(input);
      input->Connect({}, task);
    }
    if (out) out->Connect(task, {});
    job.AddTask(task);
    job.TasksStarted();
    scheduler.Spawn({task});
  }
  static void Push(const std::shared_ptr<Channel>& channel, Message message) {
    ASSERT_TRUE(channel->TryPush(&message));
  }

  JobContext job{1, "two inputs"};
  RecordingCollector collector;
  CountingOperator* counting = nullptr;
  std::shared_ptr<Channel> a = std::make_shared<Channel>();
  std::shared_ptr<Channel> b = std::make_shared<Channel>();
  std::shared_ptr<OperatorTask> task;
  Scheduler scheduler{2};
};

// A chunk of every physical type, NULLs and strings with NUL bytes among them, and all
// four kinds of change.
Chunk MixedRows(size_t count) {
  Chunk chunk =
      Chunk::WithTypes({TypeId::kInt64, TypeId::kVarchar, TypeId::kFloat64, TypeId::kNumeric});
  const RowOp ops[] = {RowOp::kInsert, RowOp::kDelete, RowOp::kUpdateDelete, RowOp::kUpdateInsert};
  for (size_t i = 0; i < count; ++i) {
    auto n = static_cast<int64_t>(i);
    chunk.AppendRow(
        {i % 7 == 0 ? Value::Null() : Value::Int(n * 37 - 500),
         i % 5 == 0 ? Value::Null()
                    : Value::String("s" + std::to_string(n) + std::string(i % 3, '\0')),
         i % 11 == 0 ? Value::Null() : Value::Double(0.5 * static_cast<double>(n)),
         i % 13 == 0 ? Value::Null() : Value::Numeric(decimal::Parse(std::to_string(n) + ".250"))},
        ops[i % 4]);
  }
  return chunk;
}

TEST(PartitionerTest, EachPartKeepsItsRowsWholeAndInOrder) {
  Chunk chunk = MixedRows(3000);
  // By the string and the numeric: keys of two columns, NULLs among them.
  Partitioner partitioner =
      Partitioner::ByKey(3, {planner::BoundExpr::MakeColumn(1, TypeId::kVarchar),
                             planner::BoundExpr::MakeColumn(3, TypeId::kNumeric)});
  std::vector<Chunk> parts = partitioner.Split(chunk);
  ASSERT_EQ(parts.size(), 3u);
  // Each row of the chunk is the next row of the part that owns its key.
  std::vector<size_t> next(3);
  for (size_t r = 0; r < chunk.size(); ++r) {
    std::string key;
    storage::EncodeKeyValue(chunk.columns[1].GetValue(r), TypeId::kVarchar, &key);
    storage::EncodeKeyValue(chunk.columns[3].GetValue(r), TypeId::kNumeric, &key);
    size_t owner = InstanceOfKey(key, 3);
    ASSERT_LT(next[owner], parts[owner].size());
    EXPECT_EQ(parts[owner].GetRow(next[owner]), chunk.GetRow(r)) << "row " << r;
    EXPECT_EQ(parts[owner].ops[next[owner]], chunk.ops[r]) << "row " << r;
    ++next[owner];
  }
  for (size_t instance = 0; instance < 3; ++instance) {
    EXPECT_EQ(next[instance], parts[instance].size());
    EXPECT_GT(parts[instance].size(), 500u);
  }
}

TEST(ChunkTest, AColumnsKeyIsTheEncodingOfItsValue) {
  Chunk chunk = MixedRows(200);
  for (const Column& column : chunk.columns) {
    for (size_t r = 0; r < chunk.size(); ++r) {
      std::string expected;
      storage::EncodeKeyValue(column.GetValue(r), column.type, &expected);
      std::string key = "prefix";
      column.AppendKey(r, &key);
      EXPECT_EQ(key, "prefix" + expected) << column.type.Name() << " row " << r;
    }
  }
}

TEST(ChunkTest, SelectAndGatherKeepTheChosenRowsInOrder) {
  Chunk chunk = MixedRows(100);
  std::vector<uint8_t> keep(chunk.size());
  std::vector<uint32_t> rows;
  for (size_t r = 0; r < chunk.size(); ++r) {
    keep[r] = r % 3 == 1 || r > 90;
    if (keep[r]) rows.push_back(static_cast<uint32_t>(r));
  }
  Chunk selected = chunk.Select(keep);
  ASSERT_EQ(selected.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(selected.GetRow(i), chunk.GetRow(rows[i]));
    EXPECT_EQ(selected.ops[i], chunk.ops[rows[i]]);
  }
  // Gather takes any order, repeats included.
  std::vector<uint32_t> shuffled = {7, 3, 3, 99, 0};
  Chunk gathered = chunk.Gather(shuffled.data(), shuffled.size());
  ASSERT_EQ(gathered.size(), shuffled.size());
  for (size_t i = 0; i < shuffled.size(); ++i) {
    EXPECT_EQ(gathered.GetRow(i), chunk.GetRow(shuffled[i]));
  }
  EXPECT_EQ(chunk.Select(std::vector<uint8_t>(chunk.size(), 0)).size(), 0u);
}

TEST(OperatorTaskTest, BarriersAreAlignedAcrossInputs) {
  // Input a: rows 0-1, barrier, row 2. Input b: row 10, then (later) row 11, barrier.
  // The barrier may pass only once both inputs delivered theirs, and row 2 (after a's
  // barrier) must not be seen before it.
  TwoInputTask t;
  t.Push(t.a, Message::Rows(Numbers(0, 2)));
  t.Push(t.a, Message::Barrier(7));
  t.Push(t.a, Message::Rows(Numbers(2, 3)));
  t.Push(t.b, Message::Rows(Numbers(10, 11)));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  {
    std::lock_guard lock(t.collector.mutex_);
    EXPECT_TRUE(t.collector.epochs_.empty());  // b has not delivered its barrier.
  }
  t.Push(t.b, Message::Rows(Numbers(11, 12)));
  t.Push(t.b, Message::Barrier(7));
  t.collector.WaitFor(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  t.job.Cancel();
  ASSERT_EQ(t.collector.epochs_, std::vector<uint64_t>{7});
  const std::vector<int64_t>& seen = t.counting->seen_;
  std::set<int64_t> before(seen.begin(), seen.begin() + 4);
  EXPECT_EQ(before, (std::set<int64_t>{0, 1, 10, 11}));
  EXPECT_EQ(seen.size(), 5u);  // Row 2 after the barrier.
  EXPECT_EQ(seen.back(), 2);
}

TEST(OperatorTaskTest, WatermarksAreTheMinimumOverInputs) {
  auto out = std::make_shared<Channel>(64);
  TwoInputTask t(out);
  auto next = [&]() -> int64_t {  // The next watermark sent downstream, or -1.
    for (int i = 0; i < 3000; ++i) {
      if (std::optional<Message> message = out->TryPop()) {
        EXPECT_EQ(message->kind, Message::Kind::kWatermark);
        return message->watermark;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return -1;
  };
  t.Push(t.a, Message::Watermark(100));  // b has none yet: nothing goes downstream.
  t.Push(t.b, Message::Watermark(50));
  EXPECT_EQ(next(), 50);  // min(100, 50)
  t.Push(t.b, Message::Watermark(150));
  EXPECT_EQ(next(), 100);               // min(100, 150)
  t.Push(t.a, Message::Watermark(90));  // Going back is ignored: a stays at 100.
  t.Push(t.a, Message::Watermark(200));
  EXPECT_EQ(next(), 150);  // min(200, 150)
  t.job.Cancel();
  EXPECT_FALSE(out->TryPop().has_value());
}

}  // namespace
}  // namespace stave::executor
