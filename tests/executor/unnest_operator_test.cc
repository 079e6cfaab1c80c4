#include "executor/operators/unnest_operator.h"

#include <gtest/gtest.h>

#include "common/array_value.h"

namespace stave::executor {
namespace {

using planner::BoundExpr;

const DataType kIntArray = DataType::ArrayOf(TypeId::kInt64);

// Rows of (id BIGINT, a BIGINT[], b BIGINT[]) expanded by unnest(a, b) WITH ORDINALITY.
planner::UnnestNode Node() {
  planner::UnnestNode node;
  node.arrays = {BoundExpr::MakeColumn(1, kIntArray), BoundExpr::MakeColumn(2, kIntArray)};
  node.with_ordinality = true;
  node.output = {{"id", TypeId::kInt64}, {"a", kIntArray},      {"b", kIntArray},
                 {"x", TypeId::kInt64},  {"y", TypeId::kInt64}, {"n", TypeId::kInt64}};
  return node;
}

Value Array(const std::vector<Value>& elements) {
  return Value::String(array::Encode(elements, TypeId::kInt64));
}

TEST(UnnestOperatorTest, ExpandsArraysSideBySidePaddingTheShorterWithNulls) {
  Chunk chunk = Chunk::WithTypes({TypeId::kInt64, kIntArray, kIntArray});
  chunk.AppendRow({Value::Int(1), Array({Value::Int(10), Value::Null(), Value::Int(30)}),
                   Array({Value::Int(7)})},
                  RowOp::kInsert);
  chunk.AppendRow({Value::Int(2), Value::Null(), Array({})}, RowOp::kInsert);
  Chunk out = UnnestOperator::Apply(Node(), chunk);
  ASSERT_EQ(out.size(), 3u);
  std::vector<std::vector<Value>> expected = {
      {Value::Int(10), Value::Int(7), Value::Int(1)},
      {Value::Null(), Value::Null(), Value::Int(2)},
      {Value::Int(30), Value::Null(), Value::Int(3)},
  };
  for (size_t r = 0; r < out.size(); ++r) {
    std::vector<Value> row = out.GetRow(r);
    EXPECT_EQ(row[0].int_value(), 1);
    for (size_t c = 0; c < 3; ++c) {
      EXPECT_EQ(row[3 + c].is_null(), expected[r][c].is_null()) << r << " " << c;
      if (!expected[r][c].is_null()) {
        EXPECT_EQ(row[3 + c].int_value(), expected[r][c].int_value());
      }
    }
    EXPECT_EQ(out.ops[r], RowOp::kInsert);
  }
}

TEST(UnnestOperatorTest, RetractsWhatTheInsertExpandedTo) {
  Chunk chunk = Chunk::WithTypes({TypeId::kInt64, kIntArray, kIntArray});
  Value a = Array({Value::Int(1), Value::Int(2)});
  chunk.AppendRow({Value::Int(1), a, Value::Null()}, RowOp::kUpdateDelete);
  chunk.AppendRow({Value::Int(1), Array({Value::Int(5)}), Value::Null()}, RowOp::kUpdateInsert);
  Chunk out = UnnestOperator::Apply(Node(), chunk);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out.ops[0], RowOp::kDelete);
  EXPECT_EQ(out.ops[1], RowOp::kDelete);
  EXPECT_EQ(out.ops[2], RowOp::kInsert);
  EXPECT_EQ(out.GetRow(1)[3].int_value(), 2);
  EXPECT_EQ(out.GetRow(2)[3].int_value(), 5);
}

}  // namespace
}  // namespace stave::executor
