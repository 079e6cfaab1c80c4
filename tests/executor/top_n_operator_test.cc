#include "executor/operators/top_n_operator.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/test_directory.h"

namespace stave::executor {
namespace {

using planner::BoundExpr;

// Keeps what an operator emits as a multiset of "group|value|rank" rows.
class MultisetOperator : public StreamOperator {
 public:
  void OnChunk(Chunk chunk) override {
    for (size_t r = 0; r < chunk.size(); ++r) {
      std::vector<Value> row = chunk.GetRow(r);
      std::string key = std::to_string(row[0].int_value()) + "|" +
                        std::to_string(row[1].int_value()) + "|" +
                        std::to_string(row[2].int_value());
      counts[key] += RowSign(chunk.ops[r]);
      if (counts[key] == 0) counts.erase(key);
    }
  }
  std::map<std::string, int64_t> counts;
};

// Rows of (g BIGINT, v BIGINT): the top `limit` per g by v descending.
std::shared_ptr<planner::TopNNode> TopByValue(planner::WindowFunctionKind kind, int64_t limit) {
  auto input = std::make_shared<planner::ValuesNode>();
  input->output = {{"g", TypeId::kInt64}, {"v", TypeId::kInt64}};
  auto node = std::make_shared<planner::TopNNode>();
  node->input = input;
  node->function.kind = kind;
  node->function.partition_keys = {BoundExpr::MakeColumn(0, TypeId::kInt64)};
  node->function.order_keys = {{BoundExpr::MakeColumn(1, TypeId::kInt64), true, true}};
  node->limit = limit;
  node->output = {{"g", TypeId::kInt64}, {"v", TypeId::kInt64}, {"rn", TypeId::kInt64}};
  return node;
}

Chunk Rows(const std::vector<std::tuple<RowOp, int64_t, int64_t>>& rows) {
  Chunk chunk = Chunk::WithTypes({TypeId::kInt64, TypeId::kInt64});
  for (const auto& [op, g, v] : rows) chunk.AppendRow({Value::Int(g), Value::Int(v)}, op);
  return chunk;
}

class TopNOperatorTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = storage::Store::Open(directory_.path()).ValueOrThrow(); }
  std::unique_ptr<TopNOperator> Make(planner::WindowFunctionKind kind, int64_t limit) {
    auto top = std::make_unique<TopNOperator>(TopByValue(kind, limit),
                                              storage::StateTable(store_.get(), 1));
    top->set_downstream(&out_);
    top->Start();
    return top;
  }
  void Commit(TopNOperator* top, uint64_t epoch) {
    storage::EpochBatch batch(epoch);
    top->OnBarrier(&batch);
    ASSERT_TRUE(store_->Commit(&batch).ok());
  }

  testing::TestDirectory directory_;
  std::unique_ptr<storage::Store> store_;
  MultisetOperator out_;
};

TEST_F(TopNOperatorTest, KeepsTheTopRowsPerPartitionAndRenumbersOnChanges) {
  auto top = Make(planner::WindowFunctionKind::kRowNumber, 2);
  top->OnChunk(Rows({{RowOp::kInsert, 1, 10},
                     {RowOp::kInsert, 1, 30},
                     {RowOp::kInsert, 1, 20},
                     {RowOp::kInsert, 2, 5}}));
  EXPECT_EQ(out_.counts,
            (std::map<std::string, int64_t>{{"1|30|1", 1}, {"1|20|2", 1}, {"2|5|1", 1}}));
  // A new best shifts the others down; the old second leaves.
  top->OnChunk(Rows({{RowOp::kInsert, 1, 40}}));
  EXPECT_EQ(out_.counts,
            (std::map<std::string, int64_t>{{"1|40|1", 1}, {"1|30|2", 1}, {"2|5|1", 1}}));
  // Deleting it promotes the rows below again, exactly.
  top->OnChunk(
      Rows({{RowOp::kDelete, 1, 40}, {RowOp::kUpdateDelete, 1, 30}, {RowOp::kUpdateInsert, 1, 5}}));
  EXPECT_EQ(out_.counts,
            (std::map<std::string, int64_t>{{"1|20|1", 1}, {"1|10|2", 1}, {"2|5|1", 1}}));
}

TEST_F(TopNOperatorTest, RankAndDenseRankShareRanksAmongPeers) {
  auto rank = Make(planner::WindowFunctionKind::kRank, 2);
  rank->OnChunk(Rows({{RowOp::kInsert, 1, 9}, {RowOp::kInsert, 1, 9}, {RowOp::kInsert, 1, 7}}));
  EXPECT_EQ(out_.counts, (std::map<std::string, int64_t>{{"1|9|1", 2}}));
  out_.counts.clear();
  auto dense = Make(planner::WindowFunctionKind::kDenseRank, 2);
  dense->OnChunk(Rows({{RowOp::kInsert, 1, 9}, {RowOp::kInsert, 1, 9}, {RowOp::kInsert, 1, 7}}));
  EXPECT_EQ(out_.counts, (std::map<std::string, int64_t>{{"1|9|1", 2}, {"1|7|2", 1}}));
}

TEST_F(TopNOperatorTest, AppendOnlyInputKeepsOnlyTheTopRows) {
  auto node = TopByValue(planner::WindowFunctionKind::kRank, 2);
  node->append_only_input = true;
  TopNOperator top(node, storage::StateTable(store_.get(), 1));
  top.set_downstream(&out_);
  top.OnChunk(Rows({{RowOp::kInsert, 1, 5}, {RowOp::kInsert, 1, 9}, {RowOp::kInsert, 1, 7}}));
  EXPECT_EQ(out_.counts, (std::map<std::string, int64_t>{{"1|9|1", 1}, {"1|7|2", 1}}));
  // Peers at the last rank stay; a better row pushes them out, and dropped rows never return.
  top.OnChunk(Rows({{RowOp::kInsert, 1, 7}}));
  EXPECT_EQ(out_.counts, (std::map<std::string, int64_t>{{"1|9|1", 1}, {"1|7|2", 2}}));
  top.OnChunk(Rows({{RowOp::kInsert, 1, 8}, {RowOp::kInsert, 1, 6}}));
  EXPECT_EQ(out_.counts, (std::map<std::string, int64_t>{{"1|9|1", 1}, {"1|8|2", 1}}));
  Commit(&top, 1);
  top.OnChunk(Rows({{RowOp::kInsert, 1, 10}}));
  EXPECT_EQ(out_.counts, (std::map<std::string, int64_t>{{"1|10|1", 1}, {"1|9|2", 1}}));
}

TEST_F(TopNOperatorTest, ResumesFromCommittedState) {
  {
    auto top = Make(planner::WindowFunctionKind::kRowNumber, 1);
    top->OnChunk(Rows({{RowOp::kInsert, 1, 10}, {RowOp::kInsert, 1, 20}}));
    Commit(top.get(), 1);
    // Not committed: lost in the "crash".
    top->OnChunk(Rows({{RowOp::kInsert, 1, 99}}));
  }
  out_.counts.clear();
  auto top = Make(planner::WindowFunctionKind::kRowNumber, 1);
  // The rows kept before the restart answer the delete of the best one.
  top->OnChunk(Rows({{RowOp::kDelete, 1, 20}}));
  EXPECT_EQ(out_.counts, (std::map<std::string, int64_t>{{"1|20|1", -1}, {"1|10|1", 1}}));
}

}  // namespace
}  // namespace stave::executor
