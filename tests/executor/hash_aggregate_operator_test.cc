#include "executor/operators/hash_aggregate_operator.h"

#include <gtest/gtest.h>

#include "tests/test_directory.h"

namespace stave::executor {
namespace {

using planner::AggregateCall;
using planner::AggregateKind;
using planner::BoundExpr;

// Collects what an operator emits.
class CaptureOperator : public StreamOperator {
 public:
  void OnChunk(Chunk chunk) override {
    for (size_t r = 0; r < chunk.size(); ++r) rows.emplace_back(chunk.ops[r], chunk.GetRow(r));
  }
  std::vector<std::pair<RowOp, std::vector<Value>>> rows;
};

std::shared_ptr<planner::AggregateNode> SumByKey() {
  auto node = std::make_shared<planner::AggregateNode>();
  node->group_keys = {BoundExpr::MakeColumn(0, TypeId::kVarchar)};
  AggregateCall count;
  count.kind = AggregateKind::kCountStar;
  count.result_type = TypeId::kInt64;
  AggregateCall sum;
  sum.kind = AggregateKind::kSum;
  sum.arg = BoundExpr::MakeColumn(1, TypeId::kInt64);
  sum.result_type = TypeId::kInt64;
  node->aggregates = {count, sum};
  node->output = {{"k", TypeId::kVarchar}, {"count", TypeId::kInt64}, {"sum", TypeId::kInt64}};
  return node;
}

Chunk Rows(const std::vector<std::tuple<RowOp, std::string, int64_t>>& rows) {
  Chunk chunk = Chunk::WithTypes({TypeId::kVarchar, TypeId::kInt64});
  for (const auto& [op, key, value] : rows)
    chunk.AppendRow({Value::String(key), Value::Int(value)}, op);
  return chunk;
}

TEST(HashAggregateOperatorTest, EmitsEachEpochsChangesAtItsBarrierAndRetracts) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator aggregate(SumByKey(), storage::StateTable(store.get(), 1));
  CaptureOperator capture;
  aggregate.set_downstream(&capture);
  aggregate.Start();

  aggregate.OnChunk(Rows({{RowOp::kInsert, "a", 1}, {RowOp::kInsert, "b", 2}}));
  aggregate.OnChunk(Rows({{RowOp::kInsert, "a", 3}}));
  EXPECT_TRUE(capture.rows.empty());  // Nothing before the epoch ends.
  storage::EpochBatch batch1(1);
  aggregate.OnBarrier(&batch1);
  ASSERT_TRUE(store->Commit(&batch1).ok());
  // One row per group for the whole epoch, in the order the groups first changed.
  ASSERT_EQ(capture.rows.size(), 2u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kInsert);
  EXPECT_EQ(capture.rows[0].second,
            (std::vector<Value>{Value::String("a"), Value::Int(2), Value::Int(4)}));
  EXPECT_EQ(capture.rows[1].second,
            (std::vector<Value>{Value::String("b"), Value::Int(1), Value::Int(2)}));
  capture.rows.clear();

  aggregate.OnChunk(Rows({{RowOp::kDelete, "a", 1}, {RowOp::kDelete, "b", 2}}));
  // c comes and goes within the epoch, and d changes and changes back: neither shows.
  aggregate.OnChunk(Rows({{RowOp::kInsert, "c", 7}, {RowOp::kInsert, "d", 1}}));
  aggregate.OnChunk(Rows({{RowOp::kDelete, "c", 7}, {RowOp::kInsert, "d", 1}}));
  aggregate.OnChunk(Rows({{RowOp::kDelete, "d", 1}}));
  storage::EpochBatch batch2(2);
  aggregate.OnBarrier(&batch2);
  ASSERT_TRUE(store->Commit(&batch2).ok());
  ASSERT_EQ(capture.rows.size(), 4u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kUpdateDelete);
  EXPECT_EQ(capture.rows[0].second,
            (std::vector<Value>{Value::String("a"), Value::Int(2), Value::Int(4)}));
  EXPECT_EQ(capture.rows[1].first, RowOp::kUpdateInsert);
  EXPECT_EQ(capture.rows[1].second,
            (std::vector<Value>{Value::String("a"), Value::Int(1), Value::Int(3)}));
  EXPECT_EQ(capture.rows[2].first, RowOp::kDelete);  // b has no rows left.
  EXPECT_EQ(capture.rows[2].second[0], Value::String("b"));
  EXPECT_EQ(capture.rows[3].first, RowOp::kInsert);  // d, one row as at the epoch's start.
  EXPECT_EQ(capture.rows[3].second,
            (std::vector<Value>{Value::String("d"), Value::Int(1), Value::Int(1)}));

  // A new operator over the same state continues from it.
  HashAggregateOperator recovered(SumByKey(), storage::StateTable(store.get(), 1));
  CaptureOperator capture2;
  recovered.set_downstream(&capture2);
  recovered.Start();
  recovered.OnChunk(Rows({{RowOp::kInsert, "a", 10}}));
  storage::EpochBatch batch3(3);
  recovered.OnBarrier(&batch3);
  ASSERT_EQ(capture2.rows.size(), 2u);
  EXPECT_EQ(capture2.rows[0].second,
            (std::vector<Value>{Value::String("a"), Value::Int(1), Value::Int(3)}));
  EXPECT_EQ(capture2.rows[1].second,
            (std::vector<Value>{Value::String("a"), Value::Int(2), Value::Int(13)}));
}

TEST(HashAggregateOperatorTest, GlobalAggregateStartsWithARow) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  auto node = std::make_shared<planner::AggregateNode>();
  AggregateCall count;
  count.kind = AggregateKind::kCountStar;
  count.result_type = TypeId::kInt64;
  node->aggregates = {count};
  node->output = {{"count", TypeId::kInt64}};
  HashAggregateOperator aggregate(node, storage::StateTable(store.get(), 1));
  CaptureOperator capture;
  aggregate.set_downstream(&capture);
  aggregate.Start();
  ASSERT_EQ(capture.rows.size(), 1u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kInsert);
  EXPECT_EQ(capture.rows[0].second[0], Value::Int(0));
}

// count(*) grouped by a window's start (column 0) and a key (column 1); windows are 10 wide.
std::shared_ptr<planner::AggregateNode> CountPerWindow(bool emit_on_close) {
  auto node = std::make_shared<planner::AggregateNode>();
  node->group_keys = {BoundExpr::MakeColumn(0, TypeId::kInt64),
                      BoundExpr::MakeColumn(1, TypeId::kVarchar)};
  AggregateCall count;
  count.kind = AggregateKind::kCountStar;
  count.result_type = TypeId::kInt64;
  node->aggregates = {count};
  node->output = {
      {"window_start", TypeId::kInt64}, {"k", TypeId::kVarchar}, {"count", TypeId::kInt64}};
  node->window_close = planner::AggregateNode::WindowClose{0, 10};
  node->emit_on_window_close = emit_on_close;
  return node;
}

Chunk WindowRows(const std::vector<std::pair<int64_t, std::string>>& rows) {
  Chunk chunk = Chunk::WithTypes({TypeId::kInt64, TypeId::kVarchar});
  for (const auto& [start, key] : rows)
    chunk.AppendRow({Value::Int(start), Value::String(key)}, RowOp::kInsert);
  return chunk;
}

std::vector<Value> WindowRow(int64_t start, const std::string& key, int64_t count) {
  return {Value::Int(start), Value::String(key), Value::Int(count)};
}

TEST(HashAggregateOperatorTest, EmitOnWindowCloseEmitsFinalRowsOnceAndForgetsThem) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator aggregate(CountPerWindow(true), storage::StateTable(store.get(), 1));
  CaptureOperator capture;
  aggregate.set_downstream(&capture);
  aggregate.Start();
  aggregate.OnChunk(WindowRows({{0, "a"}, {0, "a"}, {10, "a"}, {0, "b"}, {20, "b"}}));
  EXPECT_TRUE(capture.rows.empty());  // Nothing before its window closes.
  EXPECT_EQ(aggregate.open_windows(), 3u);
  aggregate.OnWatermark(9);  // [0, 10) closes at 10.
  EXPECT_TRUE(capture.rows.empty());
  aggregate.OnWatermark(15);
  ASSERT_EQ(capture.rows.size(), 2u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kInsert);
  EXPECT_EQ(capture.rows[0].second, WindowRow(0, "a", 2));
  EXPECT_EQ(capture.rows[1].second, WindowRow(0, "b", 1));
  EXPECT_EQ(aggregate.open_windows(), 2u);
  capture.rows.clear();

  // The closed window's state is gone after the epoch commits; the open ones survive a
  // restart and close from a watermark the new operator sees.
  storage::EpochBatch batch(1);
  aggregate.OnBarrier(&batch);
  ASSERT_TRUE(store->Commit(&batch).ok());
  HashAggregateOperator recovered(CountPerWindow(true), storage::StateTable(store.get(), 1));
  CaptureOperator capture2;
  recovered.set_downstream(&capture2);
  recovered.Start();
  EXPECT_EQ(recovered.open_windows(), 2u);
  recovered.OnChunk(WindowRows({{10, "a"}}));
  recovered.OnWatermark(100);
  ASSERT_EQ(capture2.rows.size(), 2u);
  EXPECT_EQ(capture2.rows[0].second, WindowRow(10, "a", 2));
  EXPECT_EQ(capture2.rows[1].second, WindowRow(20, "b", 1));
  storage::EpochBatch batch2(2);
  recovered.OnBarrier(&batch2);
  ASSERT_TRUE(store->Commit(&batch2).ok());
  size_t keys = 0;
  ASSERT_TRUE(store->NewSnapshot()
                  .ValueOrThrow()
                  ->ScanStateTable(1, [&](std::string_view, std::string_view) { return ++keys; })
                  .ok());
  EXPECT_EQ(keys, 0u);  // Every window closed: no state left.
}

TEST(HashAggregateOperatorTest, UpdatingWindowResultsAreEmittedByTheirCloseAtTheLatest) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator aggregate(CountPerWindow(false), storage::StateTable(store.get(), 1));
  CaptureOperator capture;
  aggregate.set_downstream(&capture);
  aggregate.Start();
  aggregate.OnChunk(WindowRows({{0, "a"}, {0, "a"}, {10, "b"}}));
  storage::EpochBatch batch1(1);
  aggregate.OnBarrier(&batch1);
  ASSERT_TRUE(store->Commit(&batch1).ok());
  ASSERT_EQ(capture.rows.size(), 2u);
  EXPECT_EQ(capture.rows[0].second, WindowRow(0, "a", 2));
  EXPECT_EQ(capture.rows[1].second, WindowRow(10, "b", 1));
  capture.rows.clear();

  // A window that closes before the barrier emits its change as it closes, since its
  // state goes at once; the row stays in the output.
  aggregate.OnChunk(WindowRows({{0, "a"}, {10, "b"}}));
  aggregate.OnWatermark(10);
  ASSERT_EQ(capture.rows.size(), 2u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kUpdateDelete);
  EXPECT_EQ(capture.rows[1].first, RowOp::kUpdateInsert);
  EXPECT_EQ(capture.rows[1].second, WindowRow(0, "a", 3));
  EXPECT_EQ(aggregate.open_windows(), 1u);
  capture.rows.clear();
  storage::EpochBatch batch2(2);
  aggregate.OnBarrier(&batch2);
  ASSERT_EQ(capture.rows.size(), 2u);  // b's window is open: its change waits for the barrier.
  EXPECT_EQ(capture.rows[1].second, WindowRow(10, "b", 2));
}

// Windows opened and closed within one epoch (a backfill's rows and the watermark past them):
// what the operator says it buffers counts their deletes, and never wraps below zero, which
// would throttle every source of the engine.
TEST(HashAggregateOperatorTest, WindowsClosedInTheirEpochLeaveTheBufferCountSane) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator aggregate(CountPerWindow(true), storage::StateTable(store.get(), 1));
  CaptureOperator capture;
  aggregate.set_downstream(&capture);
  aggregate.Start();
  aggregate.OnChunk(WindowRows({{0, "a"}, {10, "b"}, {20, "c"}}));
  EXPECT_GT(aggregate.BufferedBytes(), 0u);
  aggregate.OnWatermark(100);
  EXPECT_EQ(capture.rows.size(), 3u);
  EXPECT_LT(aggregate.BufferedBytes(), size_t{1} << 20);
  storage::EpochBatch batch(1);
  aggregate.OnBarrier(&batch);
  EXPECT_EQ(aggregate.BufferedBytes(), 0u);
}

// Each parallel instance rebuilds the windows of its own virtual nodes only.
TEST(HashAggregateOperatorTest, RecoveredInstancesIndexOnlyTheirOwnWindows) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator aggregate(CountPerWindow(true), storage::StateTable(store.get(), 1));
  aggregate.Start();
  std::vector<std::pair<int64_t, std::string>> rows;
  for (int i = 0; i < 50; ++i) rows.emplace_back(i * 10, "k" + std::to_string(i));
  aggregate.OnChunk(WindowRows(rows));
  storage::EpochBatch batch(1);
  aggregate.OnBarrier(&batch);
  ASSERT_TRUE(store->Commit(&batch).ok());
  size_t total = 0;
  for (size_t instance = 0; instance < 4; ++instance) {
    HashAggregateOperator part(CountPerWindow(true), storage::StateTable(store.get(), 1), false,
                               1024, instance, 4);
    part.Start();
    EXPECT_LT(part.open_windows(), 50u);
    total += part.open_windows();
  }
  EXPECT_EQ(total, 50u);
}

}  // namespace
}  // namespace stave::executor
