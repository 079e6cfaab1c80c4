// The sink's pieces that need no external system: the options of the postgres and socket
// connectors, the checkpointed record, and the sink protocol between the sink operator, the
// writer thread and the checkpoint, driven against a recording target and a real store.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "common/sql_error.h"
#include "executor/connectors/blackhole/blackhole_sink.h"
#include "executor/connectors/postgres/postgres_sink.h"
#include "executor/connectors/socket/socket_source.h"
#include "executor/operators/sink_operator.h"
#include "executor/runtime/sink_writer.h"
#include "storage/store.h"
#include "tests/test_directory.h"

namespace stave::executor {
namespace {

planner::SinkInput Input(bool append_only) {
  return {{{"k", TypeId::kInt64}, {"v", TypeId::kVarchar}}, append_only};
}

std::string ErrorOf(const std::map<std::string, std::string>& options, bool append_only = true) {
  try {
    PostgresSinkOptions::Parse(options, Input(append_only));
  } catch (const SqlError& error) {
    return error.sqlstate() + " " + error.what();
  }
  return "ok";
}

TEST(PostgresSinkOptionsTest, UrlKeepsPasswordOutOfWhatShows) {
  PostgresSinkOptions options = PostgresSinkOptions::Parse(
      {{"url", "postgresql://ann:pa:ss@db.example:6543/shop?sslmode=disable"},
       {"table", "sales.orders"},
       {"primary_key", "k"}},
      Input(false));
  EXPECT_EQ(options.display_target, "postgresql://ann@db.example:6543/shop?sslmode=disable");
  EXPECT_NE(options.connection_string.find("pa:ss"), std::string::npos);
  EXPECT_NE(options.connection_string.find("&connect_timeout="), std::string::npos);
  EXPECT_EQ(options.schema, "sales");
  EXPECT_EQ(options.table, "orders");
  EXPECT_EQ(options.mode, PostgresSinkOptions::Mode::kUpsert);
  EXPECT_EQ(options.commit, PostgresSinkOptions::Commit::kProgress);
  EXPECT_EQ(options.primary_key, std::vector<size_t>{0});
  EXPECT_EQ(options.Describe().find("pa:ss"), std::string::npos);
}

TEST(PostgresSinkOptionsTest, KeywordsAreQuotedForLibpq) {
  PostgresSinkOptions options = PostgresSinkOptions::Parse(
      {{"host", "localhost"}, {"password", "it's \\ odd"}, {"user", "bob"}, {"table", "t"}},
      Input(true));
  EXPECT_NE(options.connection_string.find("password='it\\'s \\\\ odd'"), std::string::npos);
  EXPECT_EQ(options.display_target, "postgresql://bob@localhost:5432/");
  EXPECT_EQ(options.schema, "public");
  EXPECT_EQ(options.mode, PostgresSinkOptions::Mode::kAppend);
}

TEST(PostgresSinkOptionsTest, ErrorsNameTheOption) {
  EXPECT_EQ(ErrorOf({{"table", "t"}}).substr(0, 5), "22023");
  EXPECT_NE(ErrorOf({{"url", "postgresql://h/db"}}).find("'table'"), std::string::npos);
  EXPECT_NE(ErrorOf({{"url", "mysql://h/db"}, {"table", "t"}}).find("'url'"), std::string::npos);
  EXPECT_NE(ErrorOf({{"url", "postgresql://h/db"}, {"host", "h"}, {"table", "t"}}).find("not both"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"url", "postgresql://h/db"}, {"table", "t"}, {"primary_key", "k, nope"}})
                .find("\"nope\""),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"url", "postgresql://h/db"}, {"table", "t"}}, /*append_only=*/false)
                .find("append needs an append-only input"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"url", "postgresql://h/db"}, {"table", "t"}, {"mode", "upsert"}})
                .find("needs primary_key"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"url", "postgresql://h/db"}, {"table", "t"}, {"commit", "xa"}}).find("'xa'"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"url", "postgresql://h/db"}, {"table", "a.b.c"}}).find("schema.table"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"url", "postgresql://h/db"}, {"table", "t"}, {"colour", "red"}})
                .find("unknown option 'colour'"),
            std::string::npos);
}

TEST(PostgresSinkOptionsTest, IdentifiersAreQuoted) {
  EXPECT_EQ(QuotePostgresIdentifier("plain"), "\"plain\"");
  EXPECT_EQ(QuotePostgresIdentifier("a\"; DROP TABLE x; --"), "\"a\"\"; DROP TABLE x; --\"");
}

TEST(SocketOptionsTest, ChecksHostPortAndColumns) {
  std::vector<planner::Column> line = {{"line", TypeId::kVarchar}};
  SocketOptions options = SocketOptions::Parse({{"host", "localhost"}, {"port", "9999"}}, line);
  EXPECT_EQ(options.port, 9999);
  EXPECT_THROW(SocketOptions::Parse({{"host", "h"}, {"port", "70000"}}, line), SqlError);
  EXPECT_THROW(SocketOptions::Parse({{"host", "h"}}, line), SqlError);
  EXPECT_THROW(SocketOptions::Parse({{"host", "h"}, {"port", "1"}, {"x", "y"}}, line), SqlError);
  EXPECT_THROW(SocketOptions::Parse({{"host", "h"}, {"port", "1"}}, {{"n", TypeId::kInt64}}),
               SqlError);
}

TEST(SinkRecordTest, RoundTrips) {
  SinkRecord record{3, 17, "stave:s:0:3:17", true};
  std::optional<SinkRecord> decoded = SinkRecord::Decode(record.Encode());
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, record);
  EXPECT_FALSE(SinkRecord::Decode("{}"));
  EXPECT_FALSE(SinkRecord::Decode("not json"));
  // A damaged record whose numbers are no longer integers that fit is refused, not cast.
  EXPECT_FALSE(SinkRecord::Decode(
      R"({"generation": 3, "prepared_epoch": 1.7e22, "prepared_id": "x", "paused": false})"));
  EXPECT_FALSE(SinkRecord::Decode(
      R"({"generation": -1, "prepared_epoch": 1, "prepared_id": "x", "paused": false})"));
}

/// A target that records what the writer asks of it. Thread-safe: the writer's thread
/// calls it while the test reads.
class RecordingTarget : public SinkTarget {
 public:
  explicit RecordingTarget(bool two_phase) : two_phase_(two_phase) {}

  struct Call {
    std::string what;  // "prepare", "commit_prepared", "deliver".
    uint64_t epoch;
    std::vector<std::string> changes;  // "+k,v" or "-k,v", sorted.
    std::vector<size_t> batches;       // The size of each batch handed over.
  };

  void Connect() override {}
  void Disconnect() noexcept override {}
  uint64_t Recover(const std::optional<std::string>&) override { return 0; }
  bool two_phase() const override { return two_phase_; }
  void Prepare(uint64_t epoch, const std::string&, const SinkChangeBatches& changes) override {
    if (fail_prepare) throw SqlError("08006", "the target went away");
    Record("prepare", epoch, changes);
  }
  void CommitPrepared(uint64_t epoch, const std::string&) override {
    Record("commit_prepared", epoch, nullptr);
  }
  void Deliver(uint64_t epoch, uint64_t count, const SinkChangeBatches& changes) override {
    Record("deliver", epoch, changes);
    std::lock_guard lock(mutex_);
    EXPECT_EQ(count, calls_.back().changes.size());
  }
  void Drop() override {}

  std::vector<Call> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  std::atomic<bool> fail_prepare{false};

 private:
  void Record(std::string what, uint64_t epoch, const SinkChangeBatches& changes) {
    Call call{std::move(what), epoch, {}, {}};
    if (changes) {
      changes([&](const Chunk& batch) {
        call.batches.push_back(batch.size());
        for (size_t row = 0; row < batch.size(); ++row) {
          call.changes.push_back((IsSinkDelete(batch, row) ? "-" : "+") +
                                 std::to_string(batch.columns[0].ints[row]) + "," +
                                 batch.columns[1].strings[row]);
        }
      });
      std::sort(call.changes.begin(), call.changes.end());
    }
    std::lock_guard lock(mutex_);
    calls_.push_back(std::move(call));
  }

  bool two_phase_;
  mutable std::mutex mutex_;
  std::vector<Call> calls_;
};

class SinkProtocolTest : public ::testing::Test {
 protected:
  void Start(bool two_phase) {
    auto target = std::make_unique<RecordingTarget>(two_phase);
    target_ = target.get();
    Start(std::move(target));
  }
  void Start(std::unique_ptr<SinkTarget> target) {
    store_ = storage::Store::Open(directory_.path()).ValueOrThrow();
    writer_ = std::make_shared<SinkWriter>(kSink, "s", std::move(target), store_.get(), types_,
                                           SinkRecord{});
    writer_->Start(0);
    sink_ = std::make_unique<SinkOperator>(writer_, types_, std::vector<size_t>{0}, &rows_written_,
                                           &bytes_written_);
  }
  void TearDown() override {
    sink_.reset();
    if (writer_) writer_->Stop();
  }

  void Feed(std::vector<std::tuple<RowOp, int64_t, std::string>> rows) {
    Chunk chunk = Chunk::WithTypes(types_);
    for (auto& [op, k, v] : rows) chunk.AppendRow({Value::Int(k), Value::String(v)}, op);
    sink_->OnChunk(std::move(chunk));
  }

  /// Passes the barrier of the next epoch and commits it as the engine would.
  void Checkpoint() {
    storage::EpochBatch batch(store_->committed_epoch() + 1);
    sink_->OnBarrier(&batch);
    WaitFor([&] { return !sink_->BarrierPending(); });
    sink_->FinishBarrier(&batch);
    ASSERT_TRUE(store_->Commit(&batch).ok());
    writer_->OnEpochCommitted(batch.epoch());
  }

  template <typename Condition>
  static void WaitFor(Condition condition) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!condition()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "timed out";
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  size_t OwedRecords() const {
    size_t records = 0;
    EXPECT_TRUE(store_
                    ->ReadTableLog(kSink, 0,
                                   [&](uint64_t, std::string_view) {
                                     ++records;
                                     return true;
                                   })
                    .ok());
    return records;
  }

  static constexpr uint32_t kSink = 7;
  testing::TestDirectory directory_;
  storage::RowTypes types_ = {TypeId::kInt64, TypeId::kVarchar};
  std::unique_ptr<storage::Store> store_;
  RecordingTarget* target_ = nullptr;
  std::shared_ptr<SinkWriter> writer_;
  std::unique_ptr<SinkOperator> sink_;
  std::atomic<uint64_t> rows_written_{0};
  std::atomic<uint64_t> bytes_written_{0};
};

TEST_F(SinkProtocolTest, ProgressOwesTheEpochThenDeliversItCompactedPerKey) {
  Start(/*two_phase=*/false);
  Feed({{RowOp::kInsert, 1, "a"},
        {RowOp::kInsert, 2, "b"},
        {RowOp::kUpdateDelete, 1, "a"},
        {RowOp::kUpdateInsert, 1, "a2"},
        {RowOp::kDelete, 2, "b"},
        {RowOp::kInsert, 3, "c"}});
  Checkpoint();
  WaitFor([&] { return writer_->finished_epoch() == 1; });
  std::vector<RecordingTarget::Call> calls = target_->calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].what, "deliver");
  EXPECT_EQ(calls[0].epoch, 1u);
  EXPECT_EQ(calls[0].changes, (std::vector<std::string>{"+1,a2", "+3,c", "-2,b"}));
  EXPECT_EQ(OwedRecords(), 1u);
  Checkpoint();  // An empty epoch: it delivers nothing and drops the finished owed epoch.
  EXPECT_EQ(OwedRecords(), 0u);
  EXPECT_EQ(target_->calls().size(), 1u);
}

TEST_F(SinkProtocolTest, ALargeEpochIsCompactedAcrossItsPartsAndDeliveredInThem) {
  Start(/*two_phase=*/false);
  // Keys 0..2999 as one chunk, then keys 0..1999 again a row at a time, then 5000..6999.
  std::vector<std::tuple<RowOp, int64_t, std::string>> first;
  for (int64_t k = 0; k < 3000; ++k) first.emplace_back(RowOp::kInsert, k, "a");
  Feed(first);
  for (int64_t k = 0; k < 2000; ++k) Feed({{RowOp::kInsert, k, "b"}});
  std::vector<std::tuple<RowOp, int64_t, std::string>> last;
  for (int64_t k = 5000; k < 7000; ++k) last.emplace_back(RowOp::kInsert, k, "c");
  Feed(last);
  Checkpoint();
  WaitFor([&] { return writer_->finished_epoch() == 1; });
  std::vector<RecordingTarget::Call> calls = target_->calls();
  ASSERT_EQ(calls.size(), 1u);
  std::vector<std::string> expected;
  for (int64_t k = 0; k < 3000; ++k)
    expected.push_back("+" + std::to_string(k) + (k < 2000 ? ",b" : ",a"));
  for (int64_t k = 5000; k < 7000; ++k) expected.push_back("+" + std::to_string(k) + ",c");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(calls[0].changes, expected);
  // Full parts, each one record of the checkpoint: a delivery read back from it after a
  // restart hands over the same batches.
  EXPECT_EQ(calls[0].batches, (std::vector<size_t>{SinkWriter::kChangesPerRecord,
                                                   5000 - SinkWriter::kChangesPerRecord}));
  EXPECT_EQ(OwedRecords(), 2u);
  EXPECT_EQ(rows_written_.load(), 5000u);
}

TEST_F(SinkProtocolTest, TwoPhasePreparesAtTheBarrierAndCommitsAfterTheCheckpoint) {
  Start(/*two_phase=*/true);
  Feed({{RowOp::kInsert, 1, "a"}});
  Checkpoint();
  WaitFor([&] { return writer_->finished_epoch() == 1; });
  std::vector<RecordingTarget::Call> calls = target_->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].what, "prepare");
  EXPECT_EQ(calls[0].changes, std::vector<std::string>{"+1,a"});
  EXPECT_EQ(calls[1].what, "commit_prepared");
  EXPECT_EQ(OwedRecords(), 0u);  // Prepared epochs are not owed.
  SinkRecord record = writer_->record();
  EXPECT_EQ(record.prepared_epoch, 1u);
  EXPECT_EQ(record.prepared_id, "stave:s:0:1:1");
  // The checkpoint holds the record, for recovery to commit or roll back by.
  std::optional<std::string> stored =
      store_->GetSourcePosition(kSink, SinkRecord::kPositionName).ValueOrThrow();
  ASSERT_TRUE(stored);
  EXPECT_EQ(SinkRecord::Decode(*stored)->prepared_epoch, 1u);
}

TEST_F(SinkProtocolTest, FailedPrepareOwesTheEpochInOrder) {
  Start(/*two_phase=*/true);
  target_->fail_prepare = true;
  Feed({{RowOp::kInsert, 1, "a"}});
  Checkpoint();
  EXPECT_EQ(OwedRecords(), 1u);
  target_->fail_prepare = false;
  WaitFor([&] { return writer_->finished_epoch() == 1; });
  Feed({{RowOp::kInsert, 2, "b"}});
  Checkpoint();
  WaitFor([&] { return writer_->finished_epoch() == 2; });
  std::vector<RecordingTarget::Call> calls = target_->calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].what, "deliver");  // Epoch 1, from the checkpoint.
  EXPECT_EQ(calls[0].epoch, 1u);
  EXPECT_EQ(calls[1].what, "prepare");  // Epoch 2 once epoch 1 was finished.
  EXPECT_EQ(calls[1].epoch, 2u);
  EXPECT_EQ(calls[2].what, "commit_prepared");
}

TEST_F(SinkProtocolTest, BlackholeWritesNothingAhead) {
  Start(std::make_unique<BlackholeSinkTarget>());
  Feed({{RowOp::kInsert, 1, "a"}, {RowOp::kInsert, 2, "b"}});
  Checkpoint();
  EXPECT_EQ(OwedRecords(), 0u);
  EXPECT_EQ(writer_->status().owed_epochs, 0u);
  // The rows are not gathered, but they count as written at the barrier, as for any target.
  EXPECT_EQ(sink_->BufferedBytes(), 0u);
  EXPECT_EQ(rows_written_.load(), 2u);
  EXPECT_EQ(bytes_written_.load(), 2u + 2 * (8 + 1));
  Feed({{RowOp::kDelete, 1, "a"}});
  EXPECT_EQ(rows_written_.load(), 2u);
  Checkpoint();
  EXPECT_EQ(rows_written_.load(), 3u);
}

TEST_F(SinkProtocolTest, PausedSinkOwesAndCatchesUpOnResume) {
  Start(/*two_phase=*/true);
  writer_->SetPaused(true);
  Feed({{RowOp::kInsert, 1, "a"}});
  Checkpoint();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(target_->calls().empty());
  EXPECT_EQ(writer_->status().state, "paused");
  EXPECT_EQ(writer_->status().owed_epochs, 1u);
  writer_->SetPaused(false);
  WaitFor([&] { return writer_->finished_epoch() == 1; });
  EXPECT_EQ(target_->calls().at(0).what, "deliver");
}

TEST_F(SinkProtocolTest, SourcesPauseWhileSeveralEpochsWaitForTheTarget) {
  Start(/*two_phase=*/false);
  writer_->SetPaused(true);  // The target takes nothing meanwhile.
  uint64_t epochs = SinkWriter::kOwedEpochsToPause;
  for (uint64_t epoch = 1; epoch <= epochs; ++epoch) {
    EXPECT_FALSE(writer_->lagging()->load()) << epoch;
    Feed({{RowOp::kInsert, static_cast<int64_t>(epoch), "a"}});
    Checkpoint();
  }
  EXPECT_TRUE(writer_->lagging()->load());
  writer_->SetPaused(false);
  WaitFor([&] { return writer_->finished_epoch() == epochs; });
  EXPECT_FALSE(writer_->lagging()->load());
}

TEST_F(SinkProtocolTest, AFullEpochPausesTheSourcesUntilItsBarrier) {
  Start(/*two_phase=*/false);
  std::string megabyte(size_t{1} << 20, 'x');
  for (int64_t k = 0; k < 31; ++k) Feed({{RowOp::kInsert, k, megabyte}});
  EXPECT_FALSE(sink_->epoch_full()->load());
  for (int64_t k = 31; k < 34; ++k) Feed({{RowOp::kInsert, k, megabyte}});
  EXPECT_TRUE(sink_->epoch_full()->load());
  // The barrier takes the epoch (its commit, 34 MB synced, is not what this test is about).
  storage::EpochBatch batch(1);
  sink_->OnBarrier(&batch);
  EXPECT_FALSE(sink_->epoch_full()->load());
  sink_->FinishBarrier(&batch);
}

}  // namespace
}  // namespace stave::executor
