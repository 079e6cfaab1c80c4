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

TEST(HashAggregateOperatorTest, EmitsAChangelogAndRetracts) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator aggregate(SumByKey(), storage::StateTable(store.get(), 1));
  CaptureOperator capture;
  aggregate.set_downstream(&capture);
  aggregate.Start();

  aggregate.OnChunk(
      Rows({{RowOp::kInsert, "a", 1}, {RowOp::kInsert, "b", 2}, {RowOp::kInsert, "a", 3}}));
  ASSERT_EQ(capture.rows.size(), 2u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kInsert);
  EXPECT_EQ(capture.rows[0].second,
            (std::vector<Value>{Value::String("a"), Value::Int(2), Value::Int(4)}));
  capture.rows.clear();

  aggregate.OnChunk(Rows({{RowOp::kDelete, "a", 1}, {RowOp::kDelete, "b", 2}}));
  ASSERT_EQ(capture.rows.size(), 3u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kUpdateDelete);
  EXPECT_EQ(capture.rows[1].first, RowOp::kUpdateInsert);
  EXPECT_EQ(capture.rows[1].second,
            (std::vector<Value>{Value::String("a"), Value::Int(1), Value::Int(3)}));
  EXPECT_EQ(capture.rows[2].first, RowOp::kDelete);  // b has no rows left.
  EXPECT_EQ(capture.rows[2].second[0], Value::String("b"));

  // After a commit, a new operator over the same state continues from it.
  storage::EpochBatch batch(1);
  aggregate.OnBarrier(&batch);
  ASSERT_TRUE(store->Commit(&batch).ok());
  HashAggregateOperator recovered(SumByKey(), storage::StateTable(store.get(), 1));
  CaptureOperator capture2;
  recovered.set_downstream(&capture2);
  recovered.Start();
  recovered.OnChunk(Rows({{RowOp::kInsert, "a", 10}}));
  ASSERT_EQ(capture2.rows.size(), 2u);
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

}  // namespace
}  // namespace stave::executor
