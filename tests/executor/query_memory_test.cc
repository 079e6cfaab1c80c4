#include "executor/batch/query_memory.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <string>

#include "common/sql_error.h"
#include "executor/connectors/connectors.h"
#include "executor/database.h"
#include "parser/parser.h"
#include "tests/test_directory.h"

namespace stave::executor {
namespace {

std::string SqlStateOf(const std::function<void()>& run) {
  try {
    run();
  } catch (const SqlError& error) {
    return error.sqlstate();
  }
  return "none";
}

TEST(QueryMemoryTest, ChargesUpToTheLimitAndRefusesPastIt) {
  QueryMemory memory(1000);
  memory.Charge(600);
  memory.Charge(400);
  EXPECT_EQ(memory.used(), 1000u);
  EXPECT_EQ(SqlStateOf([&] { memory.Charge(1); }), "53200");
  EXPECT_EQ(memory.used(), 1000u) << "a refused charge counts nothing";
  memory.Release(500);
  memory.Charge(500);
  EXPECT_EQ(memory.peak(), 1000u);
  EXPECT_EQ(SqlStateOf([&] { memory.Charge(SIZE_MAX); }), "53200") << "no overflow";
}

TEST(QueryMemoryTest, ZeroMeansNoLimit) {
  QueryMemory memory(0);
  memory.Charge(size_t{1} << 40);
  memory.Charge(size_t{1} << 40);
  EXPECT_EQ(memory.used(), size_t{2} << 40);
}

TEST(QueryMemoryTest, ReservationGivesBackOnExit) {
  QueryMemory memory(100);
  {
    MemoryReservation reservation(&memory);
    reservation.Grow(60);
    EXPECT_EQ(SqlStateOf([&] { reservation.Grow(60); }), "53200");
    EXPECT_EQ(memory.used(), 60u);
  }
  EXPECT_EQ(memory.used(), 0u);
}

TEST(QueryMemoryTest, ErrorSaysTheLimitAndHowToRaiseIt) {
  QueryMemory memory(64 << 20);
  try {
    memory.Charge(65 << 20);
    FAIL() << "no error";
  } catch (const SqlError& error) {
    EXPECT_EQ(error.sqlstate(), "53200");
    EXPECT_STREQ(error.what(), "out of memory");
    EXPECT_NE(error.detail().find("memory limit of 64MB"), std::string::npos) << error.detail();
    EXPECT_NE(error.hint().find("SET query_memory_limit"), std::string::npos) << error.hint();
  }
}

TEST(QueryMemoryTest, FormatsSizesAsPostgreSqlDoes) {
  EXPECT_EQ(FormatByteSize(0), "0");
  EXPECT_EQ(FormatByteSize(1000), "1000B");
  EXPECT_EQ(FormatByteSize(1536 * 1024), "1536kB");
  EXPECT_EQ(FormatByteSize(size_t{64} << 20), "64MB");
  EXPECT_EQ(FormatByteSize(size_t{1} << 30), "1GB");
  EXPECT_EQ(FormatByteSize(size_t{3} << 40), "3TB");
}

TEST(QueryMemoryTest, ChunkBytesCountLongStrings) {
  Chunk chunk = Chunk::WithTypes({TypeId::kInt64, TypeId::kVarchar});
  size_t empty = ChunkBytes(chunk);
  chunk.AppendRow({Value::Int(1), Value::String("short")}, RowOp::kInsert);
  size_t one_short = ChunkBytes(chunk);
  chunk.AppendRow({Value::Int(2), Value::String(std::string(1000, 'x'))}, RowOp::kInsert);
  EXPECT_GT(one_short, empty);
  EXPECT_GE(ChunkBytes(chunk) - one_short, 1000u);
}

class BatchQueryMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterBuiltinConnectors(&connectors_);
    DatabaseOptions options;
    options.data_directory = directory_.path();
    options.checkpoint_interval = std::chrono::milliseconds(0);
    options.query_memory_bytes = 256 << 10;
    database_ = Database::Open(options, &connectors_);
    Run("CREATE TABLE items (n INT PRIMARY KEY, s TEXT, g INT)");
    std::string values;
    for (int n = 0; n < 3000; ++n) {
      values +=
          fmt::format("{}({}, '{}{}', {})", n == 0 ? "" : ", ", n, std::string(80, 'x'), n, n % 5);
    }
    Run("INSERT INTO items VALUES " + values);
  }

  QueryResult Run(const std::string& sql, const SessionContext& session = {}) {
    QueryResult result;
    for (const auto& statement : parser::Parse(sql)) {
      result = database_->Execute(*statement, nullptr, session);
    }
    return result;
  }

  std::string SqlStateOf(const std::string& sql, const SessionContext& session = {}) {
    return stave::executor::SqlStateOf([&] { Run(sql, session); });
  }

  stave::testing::TestDirectory directory_;
  planner::ConnectorRegistry connectors_;
  std::unique_ptr<Database> database_;
};

TEST_F(BatchQueryMemoryTest, SortJoinAggregateAndCrossJoinPastTheServerLimitFail) {
  EXPECT_EQ(SqlStateOf("SELECT n, s FROM items ORDER BY s DESC"), "53200");
  EXPECT_EQ(SqlStateOf("SELECT s, count(*) FROM items GROUP BY s"), "53200");
  EXPECT_EQ(SqlStateOf("SELECT a.n FROM items a JOIN items b ON a.n = b.n"), "53200");
  EXPECT_EQ(SqlStateOf("SELECT count(*) FROM items a, items b"), "53200");
  EXPECT_EQ(SqlStateOf("SELECT n, row_number() OVER (ORDER BY s) FROM items"), "53200");
}

TEST_F(BatchQueryMemoryTest, SmallQueriesRunUnderIt) {
  EXPECT_EQ(Run("SELECT s FROM items WHERE n = 7").rows.size(), 1u);
  EXPECT_EQ(Run("SELECT 1 + 1").rows.size(), 1u);
}

TEST_F(BatchQueryMemoryTest, TheSessionLimitWinsOverTheServers) {
  SessionContext unlimited;
  unlimited.query_memory_bytes = 0;
  QueryResult sorted = Run("SELECT n FROM items ORDER BY s DESC", unlimited);
  ASSERT_EQ(sorted.rows.size(), 3000u);
  EXPECT_EQ(sorted.rows.front()[0].int_value(), 999);  // "xx…999" sorts after "xx…2999".
  SessionContext roomy;
  roomy.query_memory_bytes = size_t{64} << 20;
  EXPECT_EQ(Run("SELECT count(*) FROM items a JOIN items b ON a.n = b.n", roomy).rows[0][0],
            Value::Int(3000));
  SessionContext tiny;
  tiny.query_memory_bytes = 4096;
  EXPECT_EQ(SqlStateOf("SELECT count(*) FROM items", tiny), "53200");
}

}  // namespace
}  // namespace stave::executor
