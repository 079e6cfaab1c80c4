#include "executor/connectors/values/values_source.h"

#include <gtest/gtest.h>

#include "common/sql_error.h"

namespace stave::executor {
namespace {

using planner::BoundExpr;

// generate_series(start, stop, step) as the binder plans it.
std::shared_ptr<planner::ValuesNode> Series(int64_t start, int64_t stop, int64_t step) {
  auto node = std::make_shared<planner::ValuesNode>();
  node->series = true;
  node->rows.emplace_back();
  for (int64_t bound : {start, stop, step}) {
    node->rows[0].push_back(BoundExpr::MakeConstant(Value::Int(bound), TypeId::kInt64));
  }
  node->output = {{"g", TypeId::kInt64}};
  return node;
}

std::vector<int64_t> Ints(const Chunk& chunk) {
  std::vector<int64_t> ints;
  for (size_t r = 0; r < chunk.size(); ++r) ints.push_back(chunk.GetRow(r)[0].int_value());
  return ints;
}

TEST(ValuesSourceTest, ASeriesComesAChunkAtATimeAndResumesFromItsPosition) {
  auto node = Series(10, 1, -2);  // 10 8 6 4 2
  ValuesSource source(node);
  std::chrono::steady_clock::time_point wake_at;
  Chunk chunk;
  EXPECT_EQ(source.Position(), "");
  ASSERT_EQ(source.Poll(2, &chunk, &wake_at), SourceReader::PollStatus::kData);
  EXPECT_EQ(Ints(chunk), (std::vector<int64_t>{10, 8}));
  std::string after_two = source.Position();
  EXPECT_FALSE(source.CaughtUp({}));

  // A restart from that position sees the rest, once.
  ValuesSource restarted(node);
  ASSERT_TRUE(restarted.Seek(after_two).ok());
  ASSERT_EQ(restarted.Poll(100, &chunk, &wake_at), SourceReader::PollStatus::kData);
  EXPECT_EQ(Ints(chunk), (std::vector<int64_t>{6, 4, 2}));
  EXPECT_TRUE(restarted.CaughtUp({}));
  EXPECT_EQ(restarted.Position(), "delivered");
  EXPECT_EQ(restarted.Poll(100, &chunk, &wake_at), SourceReader::PollStatus::kFinished);

  ValuesSource finished(node);
  ASSERT_TRUE(finished.Seek("delivered").ok());
  EXPECT_TRUE(finished.CaughtUp({}));
  EXPECT_EQ(finished.Poll(100, &chunk, &wake_at), SourceReader::PollStatus::kFinished);
  EXPECT_FALSE(finished.Seek("two").ok());
}

TEST(ValuesSourceTest, AHugeSeriesCostsOnlyTheRowsAskedFor) {
  // A cursor reads its node: each node outlives its cursor.
  auto all = Series(INT64_MIN, INT64_MAX, 1);
  ValuesRowsCursor cursor(*all);
  Chunk chunk = cursor.Next(3);
  EXPECT_EQ(Ints(chunk), (std::vector<int64_t>{INT64_MIN, INT64_MIN + 1, INT64_MIN + 2}));
  EXPECT_FALSE(cursor.done());
  cursor.Seek(UINT64_MAX - 1);
  EXPECT_EQ(Ints(cursor.Next(10)), (std::vector<int64_t>{INT64_MAX - 1}));

  // The last step may not pass the stop, nor overflow.
  auto steps = Series(INT64_MAX - 5, INT64_MAX, 4);
  ValuesRowsCursor near_end(*steps);
  EXPECT_EQ(Ints(near_end.Next(10)), (std::vector<int64_t>{INT64_MAX - 5, INT64_MAX - 1}));
  EXPECT_TRUE(near_end.done());
  auto empty = Series(1, 0, 1);
  EXPECT_TRUE(ValuesRowsCursor(*empty).done());
  auto zero_step = Series(1, 5, 0);
  EXPECT_THROW(ValuesRowsCursor{*zero_step}, SqlError);
}

}  // namespace
}  // namespace stave::executor
