#include "executor/database.h"

#include <gtest/gtest.h>

#include <thread>

#include "common/sql_error.h"
#include "executor/connectors/connectors.h"
#include "parser/parser.h"
#include "tests/executor/test_directory.h"

namespace stave::executor {
namespace {

class DatabaseTest : public ::testing::Test {
 protected:
  DatabaseTest() { RegisterBuiltinConnectors(&connectors_); }

  void Open(std::chrono::milliseconds interval = std::chrono::milliseconds(50)) {
    DatabaseOptions options;
    options.data_directory = directory_.path();
    options.checkpoint_interval = interval;
    database_ = Database::Open(options, &connectors_);
  }

  QueryResult Run(const std::string& sql) {
    auto statements = parser::Parse(sql);
    QueryResult result;
    for (const auto& statement : statements) result = database_->Execute(*statement);
    return result;
  }

  // The rows of a query as text, "a|b" per row.
  std::vector<std::string> Rows(const std::string& sql) {
    QueryResult result = Run(sql);
    std::vector<std::string> rows;
    for (const auto& row : result.rows) {
      std::string text;
      for (size_t c = 0; c < row.size(); ++c) {
        if (c > 0) text += "|";
        text += row[c].is_null() ? "NULL" : row[c].ToText(result.columns[c].type);
      }
      rows.push_back(text);
    }
    return rows;
  }

  // Polls until the query gives `expected` or a few seconds pass.
  std::vector<std::string> WaitFor(const std::string& sql, const std::vector<std::string>& expected) {
    std::vector<std::string> rows;
    for (int i = 0; i < 200; ++i) {
      rows = Rows(sql);
      if (rows == expected) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return rows;
  }

  std::string ErrorOf(const std::string& sql) {
    try {
      Run(sql);
    } catch (const SqlError& error) {
      return error.sqlstate() + " " + error.what();
    }
    return "no error";
  }

  testing::TestDirectory directory_;
  planner::ConnectorRegistry connectors_;
  std::unique_ptr<Database> database_;
};

constexpr char kParityQuery[] = "SELECT * FROM parity ORDER BY parity";

TEST_F(DatabaseTest, ParityViewIsExactAndSurvivesRestart) {
  Open();
  Run("CREATE STREAM s (id BIGINT) WITH (connector = 'datagen', 'fields.id.kind' = 'sequence', "
      "'fields.id.start' = '1', 'fields.id.end' = '1000')");
  Run("CREATE MATERIALIZED VIEW parity AS SELECT id % 2 AS parity, count(*), sum(id) FROM s "
      "GROUP BY id % 2");
  std::vector<std::string> expected = {"0|500|250500", "1|500|250000"};
  EXPECT_EQ(WaitFor(kParityQuery, expected), expected);
  EXPECT_EQ(Rows("SELECT sum(count) FROM parity"), std::vector<std::string>{"1000"});
  database_->Shutdown();
  database_.reset();

  Open();
  EXPECT_EQ(Rows(kParityQuery), expected);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Rows(kParityQuery), expected);  // The finished sequence is not read again.
  EXPECT_EQ(Rows("SHOW MATERIALIZED VIEWS").size(), 1u);
}

TEST_F(DatabaseTest, ViewsReadTheirStreamIndependently) {
  Open();
  Run("CREATE STREAM s (id BIGINT) WITH (connector = 'datagen', 'fields.id.kind' = 'sequence', "
      "'fields.id.end' = '100')");
  Run("CREATE MATERIALIZED VIEW a AS SELECT count(*) AS n FROM s");
  EXPECT_EQ(WaitFor("SELECT n FROM a", {"100"}), std::vector<std::string>{"100"});
  Run("CREATE MATERIALIZED VIEW b AS SELECT id FROM s WHERE id > 90");
  EXPECT_EQ(WaitFor("SELECT count(*) FROM b", {"10"}), std::vector<std::string>{"10"});
  EXPECT_EQ(Rows("SELECT id FROM b ORDER BY id DESC LIMIT 2"), (std::vector<std::string>{"100", "99"}));
}

TEST_F(DatabaseTest, DdlErrors) {
  Open();
  Run("CREATE STREAM s (id BIGINT) WITH (connector = 'datagen', 'number-of-rows' = '10')");
  EXPECT_EQ(ErrorOf("CREATE STREAM s (x INT) WITH (connector = 'datagen')"),
            "42P07 relation \"s\" already exists");
  EXPECT_EQ(ErrorOf("CREATE STREAM t (x INT) WITH (connector = 'nope')").substr(0, 5), "22023");
  EXPECT_EQ(ErrorOf("CREATE STREAM t (x INT)").substr(0, 5), "22023");
  EXPECT_EQ(ErrorOf("CREATE STREAM t (x widget) WITH (connector = 'datagen')"),
            "42704 type \"widget\" does not exist");
  Run("CREATE MATERIALIZED VIEW v AS SELECT id FROM s");
  EXPECT_EQ(ErrorOf("DROP STREAM s").substr(0, 5), "2BP01");
  EXPECT_EQ(ErrorOf("DROP STREAM v").substr(0, 5), "42809");
  EXPECT_EQ(ErrorOf("DROP MATERIALIZED VIEW nope"), "42P01 materialized view \"nope\" does not exist");
  Run("DROP MATERIALIZED VIEW IF EXISTS nope");
  Run("DROP STREAM s CASCADE");
  EXPECT_TRUE(Rows("SHOW STREAMS").empty());
  EXPECT_TRUE(Rows("SHOW MATERIALIZED VIEWS").empty());
  EXPECT_EQ(ErrorOf("SELECT * FROM v").substr(0, 5), "42P01");
}

TEST_F(DatabaseTest, CheckpointOnDemandOnly) {
  Open(std::chrono::milliseconds(0));
  Run("CREATE STREAM s (id BIGINT) WITH (connector = 'datagen', 'fields.id.kind' = 'sequence', "
      "'fields.id.end' = '5000')");
  Run("CREATE MATERIALIZED VIEW c AS SELECT count(*) AS n FROM s");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Rows("SELECT n FROM c"), std::vector<std::string>{"0"});  // Nothing committed yet.
  Run("CHECKPOINT");
  EXPECT_EQ(Rows("SELECT n FROM c"), std::vector<std::string>{"5000"});
}

}  // namespace
}  // namespace stave::executor
