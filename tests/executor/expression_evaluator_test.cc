#include "executor/expression_evaluator.h"

#include <gtest/gtest.h>

#include "common/sql_error.h"

namespace stave::executor {
namespace {

using planner::BoundExpr;
using planner::ScalarFunction;

Chunk IntChunk(const std::vector<std::optional<int64_t>>& values) {
  Chunk chunk = Chunk::WithTypes({TypeId::kInt64});
  for (const auto& value : values) {
    chunk.AppendRow({value ? Value::Int(*value) : Value::Null()}, RowOp::kInsert);
  }
  return chunk;
}

TEST(ExpressionEvaluatorTest, ArithmeticWithNullsAndErrors) {
  Chunk chunk = IntChunk({1, 2, std::nullopt});
  auto column = BoundExpr::MakeColumn(0, TypeId::kInt64);
  auto plus =
      BoundExpr::MakeFunction(ScalarFunction::kAdd, TypeId::kInt64,
                              {column, BoundExpr::MakeConstant(Value::Int(10), TypeId::kInt64)});
  Column result = Evaluate(*plus, chunk);
  EXPECT_EQ(result.GetValue(0).int_value(), 11);
  EXPECT_EQ(result.GetValue(1).int_value(), 12);
  EXPECT_TRUE(result.IsNull(2));

  auto divide =
      BoundExpr::MakeFunction(ScalarFunction::kDivide, TypeId::kInt64,
                              {column, BoundExpr::MakeConstant(Value::Int(0), TypeId::kInt64)});
  try {
    Evaluate(*divide, chunk);
    FAIL();
  } catch (const SqlError& error) {
    EXPECT_EQ(error.sqlstate(), "22012");
  }
  auto overflow = BoundExpr::MakeFunction(
      ScalarFunction::kMultiply, TypeId::kInt64,
      {column, BoundExpr::MakeConstant(Value::Int(INT64_MAX), TypeId::kInt64)});
  EXPECT_THROW(Evaluate(*overflow, chunk), SqlError);
}

TEST(ExpressionEvaluatorTest, AndSkipsRowsTheLeftSideDecides) {
  // x <> 0 AND 10 / x > 1 must not divide by zero on the row where x = 0.
  Chunk chunk = IntChunk({0, 5, 20});
  auto x = BoundExpr::MakeColumn(0, TypeId::kInt64);
  auto zero = BoundExpr::MakeConstant(Value::Int(0), TypeId::kInt64);
  auto guard = BoundExpr::MakeFunction(ScalarFunction::kNotEqual, TypeId::kBoolean, {x, zero});
  auto ratio =
      BoundExpr::MakeFunction(ScalarFunction::kDivide, TypeId::kInt64,
                              {BoundExpr::MakeConstant(Value::Int(10), TypeId::kInt64), x});
  auto big =
      BoundExpr::MakeFunction(ScalarFunction::kGreater, TypeId::kBoolean,
                              {ratio, BoundExpr::MakeConstant(Value::Int(1), TypeId::kInt64)});
  auto both = BoundExpr::MakeFunction(ScalarFunction::kAnd, TypeId::kBoolean, {guard, big});
  EXPECT_EQ(EvaluatePredicate(*both, chunk), (std::vector<uint8_t>{0, 1, 0}));
}

TEST(ExpressionEvaluatorTest, ThreeValuedLogic) {
  Chunk chunk = Chunk::WithTypes({TypeId::kBoolean, TypeId::kBoolean});
  chunk.AppendRow({Value::Null(), Value::Boolean(false)}, RowOp::kInsert);
  chunk.AppendRow({Value::Null(), Value::Boolean(true)}, RowOp::kInsert);
  auto a = BoundExpr::MakeColumn(0, TypeId::kBoolean);
  auto b = BoundExpr::MakeColumn(1, TypeId::kBoolean);
  Column and_result =
      Evaluate(*BoundExpr::MakeFunction(ScalarFunction::kAnd, TypeId::kBoolean, {a, b}), chunk);
  EXPECT_FALSE(and_result.IsNull(0));
  EXPECT_EQ(and_result.GetValue(0).int_value(), 0);  // NULL AND false = false
  EXPECT_TRUE(and_result.IsNull(1));                 // NULL AND true = NULL
  Column or_result =
      Evaluate(*BoundExpr::MakeFunction(ScalarFunction::kOr, TypeId::kBoolean, {a, b}), chunk);
  EXPECT_TRUE(or_result.IsNull(0));                 // NULL OR false = NULL
  EXPECT_EQ(or_result.GetValue(1).int_value(), 1);  // NULL OR true = true
}

TEST(ExpressionEvaluatorTest, Like) {
  EXPECT_TRUE(LikeMatch("hello", "h%o"));
  EXPECT_TRUE(LikeMatch("hello", "_ello"));
  EXPECT_FALSE(LikeMatch("hello", "h_o"));
  EXPECT_TRUE(LikeMatch("50%", "50\\%"));
  EXPECT_FALSE(LikeMatch("500", "50\\%"));
  EXPECT_TRUE(LikeMatch("", "%"));
}

}  // namespace
}  // namespace stave::executor
