#include "executor/operators/partial_aggregate_operator.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "executor/operators/hash_aggregate_operator.h"
#include "executor/operators/time_window_operator.h"
#include "tests/test_directory.h"

namespace stave::executor {
namespace {

using planner::AggregateCall;
using planner::AggregateKind;
using planner::BoundExpr;

// Keeps the view an aggregate's changes describe: row text → how many times it is there.
class ViewOperator : public StreamOperator {
 public:
  explicit ViewOperator(std::vector<DataType> types) : types_(std::move(types)) {}
  void OnChunk(Chunk chunk) override {
    for (size_t r = 0; r < chunk.size(); ++r) {
      std::string text;
      std::vector<Value> row = chunk.GetRow(r);
      for (size_t c = 0; c < row.size(); ++c) {
        text += (row[c].is_null() ? "NULL" : row[c].ToText(types_[c])) + "|";
      }
      if ((rows[text] += RowSign(chunk.ops[r])) == 0) rows.erase(text);
    }
  }
  std::map<std::string, int64_t> rows;

 private:
  std::vector<DataType> types_;
};

std::vector<DataType> TypesOf(const std::vector<planner::Column>& columns) {
  std::vector<DataType> types;
  for (const planner::Column& column : columns) types.push_back(column.type);
  return types;
}

AggregateCall Call(AggregateKind kind, DataType result, std::optional<size_t> column = {},
                   DataType type = TypeId::kInt64) {
  AggregateCall call;
  call.kind = kind;
  if (column) call.arg = BoundExpr::MakeColumn(*column, type);
  call.result_type = result;
  return call;
}

// The same chunks two ways, each ending in a view: into an aggregate of input rows (through
// `hop` first, if given), and into a partial step (by slide, with `hop`) feeding an aggregate
// of partial rows. Both aggregates cache 4 groups.
class BothPaths {
 public:
  BothPaths(std::shared_ptr<const planner::AggregateNode> node,
            std::shared_ptr<const planner::TimeWindowNode> hop = nullptr)
      : store_(storage::Store::Open(directory_.path()).ValueOrThrow()),
        rows_(node, storage::StateTable(store_.get(), 1), true, /*cached_groups=*/4),
        partial_(node, /*by_slide=*/hop != nullptr),
        merged_(node, storage::StateTable(store_.get(), 2), true, /*cached_groups=*/4, 0, 1,
                std::nullopt, GroupStateCodec::Layout::kPacked, /*partial_input=*/true),
        rows_view(TypesOf(node->output)),
        merged_view(TypesOf(node->output)) {
    if (hop) {
      windows_.emplace(std::move(hop));
      windows_->set_downstream(&rows_);
    }
    rows_.set_downstream(&rows_view);
    partial_.set_downstream(&merged_);
    merged_.set_downstream(&merged_view);
    rows_.Start();
    merged_.Start();
  }
  void Push(Chunk chunk) {
    if (windows_) {
      windows_->OnChunk(chunk);
    } else {
      rows_.OnChunk(chunk);
    }
    partial_.OnChunk(std::move(chunk));
  }
  // Both paths pass a barrier; their epoch commits.
  void Barrier(uint64_t epoch) {
    storage::EpochBatch batch(epoch);
    rows_.OnBarrier(&batch);
    partial_.OnBarrier(&batch);
    ASSERT_TRUE(store_->Commit(&batch).ok());
  }

 private:
  testing::TestDirectory directory_;
  std::unique_ptr<storage::Store> store_;
  std::optional<TimeWindowOperator> windows_;
  HashAggregateOperator rows_;
  PartialAggregateOperator partial_;
  HashAggregateOperator merged_;

 public:
  ViewOperator rows_view, merged_view;
};

// A seeded random number below `bound`.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t operator()(uint64_t bound) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state_ >> 33) % bound;
  }

 private:
  uint64_t state_;
};

// Input rows: (k NUMERIC, v BIGINT). Grouped by k (or not at all), with every call that
// combines: count(*), count(v), count(v) FILTER (WHERE v > 40), sum(v), avg(v), and, over
// input that is never retracted, min(v) and max(v).
std::shared_ptr<planner::AggregateNode> Aggregate(bool keyed, bool extremes) {
  auto node = std::make_shared<planner::AggregateNode>();
  if (keyed) {
    node->group_keys = {BoundExpr::MakeColumn(0, TypeId::kNumeric)};
    node->output.push_back({"k", TypeId::kNumeric});
  }
  node->aggregates = {Call(AggregateKind::kCountStar, TypeId::kInt64),
                      Call(AggregateKind::kCount, TypeId::kInt64, 1)};
  AggregateCall filtered = Call(AggregateKind::kCount, TypeId::kInt64, 1);
  filtered.filter =
      BoundExpr::MakeFunction(planner::ScalarFunction::kGreater, TypeId::kBoolean,
                              {BoundExpr::MakeColumn(1, TypeId::kInt64),
                               BoundExpr::MakeConstant(Value::Int(40), TypeId::kInt64)});
  node->aggregates.push_back(filtered);
  node->aggregates.push_back(Call(AggregateKind::kSum, TypeId::kNumeric, 1));
  node->aggregates.push_back(Call(AggregateKind::kAvg, TypeId::kNumeric, 1));
  if (extremes) {
    node->aggregates.push_back(Call(AggregateKind::kMin, TypeId::kInt64, 1));
    node->aggregates.push_back(Call(AggregateKind::kMax, TypeId::kInt64, 1));
  }
  for (size_t a = 0; a < node->aggregates.size(); ++a) {
    node->output.push_back({"a" + std::to_string(a), node->aggregates[a].result_type});
  }
  return node;
}

// The same chunks into an aggregate of input rows and into a partial aggregate feeding an
// aggregate of partial rows: after every barrier both views are the same, and are not empty.
// Keys repeat within chunks (12 of them, some written 1.5 and some 1.50, one NULL), rows are
// deleted again (unless min and max are on), chunks end at random, and the caches are small.
TEST(PartialAggregateOperatorTest, CombinedChunksGiveTheSameViewAsRows) {
  for (auto [keyed, extremes] :
       {std::pair{true, false}, {true, true}, {false, false}, {false, true}}) {
    SCOPED_TRACE(keyed);
    SCOPED_TRACE(extremes);
    auto node = Aggregate(keyed, extremes);
    ASSERT_TRUE(PartialAggregateOperator::Combinable(*node));
    BothPaths paths(node);
    Random next(777);
    std::vector<std::pair<Value, Value>> live;
    for (int epoch = 1; epoch <= 10; ++epoch) {
      for (int c = 0; c < 6; ++c) {
        Chunk chunk = Chunk::WithTypes({TypeId::kNumeric, TypeId::kInt64});
        size_t size = 1 + next(60);
        for (size_t i = 0; i < size; ++i) {
          if (!extremes && !live.empty() && next(3) == 0) {
            size_t at = next(live.size());
            chunk.AppendRow({live[at].first, live[at].second}, RowOp::kDelete);
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
            continue;
          }
          uint64_t k = next(12);
          Value key =
              k == 0 ? Value::Null()
                     : Value::Numeric(decimal::Parse(std::to_string(k) + (next(2) ? ".5" : ".50")));
          // Now and then a value near the 64-bit limits: sums leave 64 bits.
          int64_t big = next(10) == 0 ? (next(2) ? INT64_MAX - 5 : INT64_MIN + 5) : 0;
          Value value = next(8) == 0 ? Value::Null()
                                     : Value::Int(big != 0 ? big : static_cast<int64_t>(next(100)));
          chunk.AppendRow({key, value}, RowOp::kInsert);
          live.emplace_back(key, value);
        }
        paths.Push(std::move(chunk));
      }
      ASSERT_NO_FATAL_FAILURE(paths.Barrier(static_cast<uint64_t>(epoch)));
      ASSERT_FALSE(paths.rows_view.rows.empty());
      ASSERT_EQ(paths.merged_view.rows, paths.rows_view.rows) << "after epoch " << epoch;
    }
  }
}

// HOP(t, slide 3, size 12) over rows (k BIGINT, t BIGINT, v BIGINT): its output is k, t, v,
// window_start, window_end.
std::shared_ptr<planner::TimeWindowNode> Hop(int64_t slide, int64_t size) {
  auto rows = std::make_shared<planner::ValuesNode>();
  for (const char* name : {"k", "t", "v"}) rows->output.push_back({name, TypeId::kInt64});
  auto hop = std::make_shared<planner::TimeWindowNode>();
  hop->input = std::move(rows);
  hop->time_column = 1;
  hop->visible_columns = 3;
  hop->slide = slide;
  hop->size = size;
  for (const char* name : {"k", "t", "v", "window_start", "window_end"}) {
    hop->output.push_back({name, TypeId::kInt64});
  }
  return hop;
}

// An aggregate over `hop`'s rows grouped by `keys` (columns of its output), with count(*),
// count(v), sum(v) and, over rows never retracted, min(v) and max(v).
std::shared_ptr<planner::AggregateNode> AggregateOverHop(
    std::shared_ptr<planner::TimeWindowNode> hop, const std::vector<size_t>& keys, bool extremes) {
  auto node = std::make_shared<planner::AggregateNode>();
  for (size_t key : keys) {
    node->group_keys.push_back(BoundExpr::MakeColumn(key, TypeId::kInt64));
    node->output.push_back({hop->output[key].name, TypeId::kInt64});
  }
  node->aggregates = {Call(AggregateKind::kCountStar, TypeId::kInt64),
                      Call(AggregateKind::kCount, TypeId::kInt64, 2),
                      Call(AggregateKind::kSum, TypeId::kNumeric, 2)};
  if (extremes) {
    node->aggregates.push_back(Call(AggregateKind::kMin, TypeId::kInt64, 2));
    node->aggregates.push_back(Call(AggregateKind::kMax, TypeId::kInt64, 2));
  }
  for (size_t a = 0; a < node->aggregates.size(); ++a) {
    node->output.push_back({"a" + std::to_string(a), node->aggregates[a].result_type});
  }
  node->input = std::move(hop);
  return node;
}

// The HOP's copies of the rows into an aggregate of rows, and the rows themselves into a
// partial step by slide feeding an aggregate of partial rows: after every barrier both views
// are the same, and not empty. Chunks span several slices (times 0-59, some negative, some
// NULL), keys repeat, rows are deleted again (unless min and max are on), and the groups are
// keyed by both window bounds, by one of them, or by neither.
TEST(PartialAggregateOperatorTest, HopBySlideGivesTheSameViewAsItsRows) {
  const std::vector<std::vector<size_t>> groupings = {{0, 3, 4}, {4, 0}, {3}, {0}, {}};
  for (const std::vector<size_t>& keys : groupings) {
    for (bool extremes : {false, true}) {
      SCOPED_TRACE(keys.size());
      SCOPED_TRACE(extremes);
      auto hop = Hop(3, 12);
      auto node = AggregateOverHop(hop, keys, extremes);
      ASSERT_TRUE(PartialAggregateOperator::CombinesBySlide(*node));
      BothPaths paths(node, hop);
      Random next(4242);
      std::vector<std::vector<Value>> live;
      for (int epoch = 1; epoch <= 8; ++epoch) {
        for (int c = 0; c < 5; ++c) {
          Chunk chunk = Chunk::WithTypes({TypeId::kInt64, TypeId::kInt64, TypeId::kInt64});
          size_t size = 1 + next(50);
          for (size_t i = 0; i < size; ++i) {
            if (!extremes && !live.empty() && next(3) == 0) {
              size_t at = next(live.size());
              chunk.AppendRow(live[at], RowOp::kDelete);
              live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
              continue;
            }
            Value time =
                next(10) == 0 ? Value::Null() : Value::Int(static_cast<int64_t>(next(60)) - 10);
            std::vector<Value> row = {Value::Int(static_cast<int64_t>(next(4))), time,
                                      Value::Int(static_cast<int64_t>(next(100)))};
            chunk.AppendRow(row, RowOp::kInsert);
            live.push_back(row);
          }
          paths.Push(std::move(chunk));
        }
        ASSERT_NO_FATAL_FAILURE(paths.Barrier(static_cast<uint64_t>(epoch)));
        ASSERT_FALSE(paths.rows_view.rows.empty());
        ASSERT_EQ(paths.merged_view.rows, paths.rows_view.rows) << "after epoch " << epoch;
      }
    }
  }
}

// A HOP goes by slide only where every window holds whole slices (the size a multiple of
// the slide) and nothing but a whole group key reads a window bound.
TEST(PartialAggregateOperatorTest, OnlyHopsOfWholeSlicesGoBySlide) {
  EXPECT_TRUE(PartialAggregateOperator::CombinesBySlide(*AggregateOverHop(Hop(3, 12), {0}, true)));
  EXPECT_FALSE(
      PartialAggregateOperator::CombinesBySlide(*AggregateOverHop(Hop(5, 12), {0, 3}, true)));
  EXPECT_FALSE(  // A TUMBLE: a window is its one slice, nothing to gain.
      PartialAggregateOperator::CombinesBySlide(*AggregateOverHop(Hop(12, 12), {0, 3}, true)));
  auto shifted = AggregateOverHop(Hop(3, 12), {0}, false);
  shifted->group_keys.push_back(
      BoundExpr::MakeFunction(planner::ScalarFunction::kAdd, TypeId::kInt64,
                              {BoundExpr::MakeColumn(3, TypeId::kInt64),
                               BoundExpr::MakeConstant(Value::Int(1), TypeId::kInt64)}));
  EXPECT_FALSE(PartialAggregateOperator::CombinesBySlide(*shifted));
  auto latest = AggregateOverHop(Hop(3, 12), {0}, true);
  latest->aggregates.push_back(Call(AggregateKind::kMax, TypeId::kInt64, 4));
  EXPECT_FALSE(PartialAggregateOperator::CombinesBySlide(*latest));
  auto unwindowed = AggregateOverHop(Hop(3, 12), {0}, true);
  unwindowed->input = nullptr;
  EXPECT_FALSE(PartialAggregateOperator::CombinesBySlide(*unwindowed));
}

TEST(PartialAggregateOperatorTest, OnlyCallsThatAddUpCombine) {
  auto node = Aggregate(true, true);
  EXPECT_TRUE(PartialAggregateOperator::Combinable(*node));
  auto array = Aggregate(true, false);
  array->aggregates.push_back(Call(AggregateKind::kArrayAgg, TypeId::kInt64, 1));
  EXPECT_FALSE(PartialAggregateOperator::Combinable(*array));
  for (DataType type : {DataType(TypeId::kFloat64), DataType(TypeId::kNumeric)}) {
    auto sum = Aggregate(true, false);  // Sums of floats and numerics do not combine.
    sum->aggregates.push_back(Call(AggregateKind::kSum, type, 1, type));
    EXPECT_FALSE(PartialAggregateOperator::Combinable(*sum));
  }
  auto distinct = Aggregate(true, false);
  distinct->aggregates[1].distinct = true;
  EXPECT_FALSE(PartialAggregateOperator::Combinable(*distinct));
  auto retracting = Aggregate(true, true);
  retracting->aggregates[5].keeps_values = true;  // min over rows that are deleted
  EXPECT_FALSE(PartialAggregateOperator::Combinable(*retracting));
}

// A chunk's rows of one group become one row: the keys as its first row has them, its row
// count, each call's count, then the calls' extras (the sums in two halves, the extremes);
// rows that cancel out leave a row of zeros.
TEST(PartialAggregateOperatorTest, EmitsARowPerGroupOfTheChunk) {
  auto node = Aggregate(true, true);
  PartialAggregateOperator partial(node);
  ViewOperator out(TypesOf(PartialAggregateOperator::OutputColumns(*node)));
  partial.set_downstream(&out);
  Chunk chunk = Chunk::WithTypes({TypeId::kNumeric, TypeId::kInt64});
  chunk.AppendRow({Value::Numeric(decimal::Parse("1.50")), Value::Int(7)}, RowOp::kInsert);
  chunk.AppendRow({Value::Numeric(decimal::Parse("2")), Value::Int(50)}, RowOp::kInsert);
  chunk.AppendRow({Value::Numeric(decimal::Parse("1.5")), Value::Int(70)}, RowOp::kInsert);
  chunk.AppendRow({Value::Numeric(decimal::Parse("1.5")), Value::Null()}, RowOp::kInsert);
  partial.OnChunk(std::move(chunk));
  // Keys; row count; the counts of count(*), count(v), count(v) FILTER, sum, avg, min, max;
  // sum's and avg's sums, high and low; min; max.
  EXPECT_EQ(out.rows, (std::map<std::string, int64_t>{{"1.50|3|3|2|1|2|2|2|2|0|77|0|77|7|70|", 1},
                                                      {"2|1|1|1|1|1|1|1|1|0|50|0|50|50|50|", 1}}));

  auto counts = Aggregate(true, false);
  PartialAggregateOperator cancelling(counts);
  ViewOperator zeros(TypesOf(PartialAggregateOperator::OutputColumns(*counts)));
  cancelling.set_downstream(&zeros);
  Chunk both = Chunk::WithTypes({TypeId::kNumeric, TypeId::kInt64});
  both.AppendRow({Value::Numeric(decimal::Parse("3")), Value::Int(1)}, RowOp::kInsert);
  both.AppendRow({Value::Numeric(decimal::Parse("3")), Value::Int(1)}, RowOp::kDelete);
  cancelling.OnChunk(std::move(both));
  EXPECT_EQ(zeros.rows, (std::map<std::string, int64_t>{{"3|0|0|0|0|0|0|0|0|0|0|", 1}}));
}

}  // namespace
}  // namespace stave::executor
