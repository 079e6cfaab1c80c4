#include "executor/database.h"

#include <gtest/gtest.h>

#include <thread>

#include "common/sql_error.h"
#include "executor/connectors/connectors.h"
#include "parser/parser.h"
#include "tests/test_directory.h"

namespace stave::executor {
namespace {

class DatabaseTest : public ::testing::Test {
 protected:
  DatabaseTest() { RegisterBuiltinConnectors(&connectors_); }

  void Open(std::chrono::milliseconds interval = std::chrono::milliseconds(50),
            size_t state_memory = size_t{256} << 20) {
    DatabaseOptions options;
    options.data_directory = directory_.path();
    options.checkpoint_interval = interval;
    options.state_memory_bytes = state_memory;
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
  std::vector<std::string> WaitFor(const std::string& sql,
                                   const std::vector<std::string>& expected) {
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
  EXPECT_EQ(Rows("SELECT id FROM b ORDER BY id DESC LIMIT 2"),
            (std::vector<std::string>{"100", "99"}));
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
  EXPECT_EQ(ErrorOf("DROP MATERIALIZED VIEW nope"),
            "42P01 materialized view \"nope\" does not exist");
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
  // The history keeps every checkpoint: the two DDL ones and this one.
  std::vector<std::string> history =
      Rows("SELECT count(*), max(epoch), min(bytes) > 0 FROM stave_catalog.checkpoints");
  EXPECT_EQ(history, std::vector<std::string>{"3|3|t"});
  EXPECT_EQ(ErrorOf("SELECT * FROM stave_catalog.nothing").substr(0, 5), "42P01");
}

TEST_F(DatabaseTest, TablesEnforceKeysAndNotNull) {
  Open();
  Run("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR NOT NULL, score DOUBLE PRECISION)");
  EXPECT_EQ(Run("INSERT INTO t VALUES (1, 'a', 1.5), (2, 'b', NULL)").command_tag, "INSERT 0 2");
  EXPECT_EQ(ErrorOf("INSERT INTO t VALUES (1, 'again', 0)"),
            "23505 duplicate key value violates unique constraint \"t_pkey\"");
  EXPECT_EQ(ErrorOf("INSERT INTO t (id) VALUES (3)"),
            "23502 null value in column \"name\" of relation \"t\" violates not-null constraint");
  EXPECT_EQ(ErrorOf("INSERT INTO t VALUES ('x', 'a', 1)"),
            "22P02 invalid input syntax for type integer: \"x\"");
  EXPECT_EQ(ErrorOf("INSERT INTO t VALUES (3, 'c', true)").substr(0, 5), "42804");
  EXPECT_EQ(ErrorOf("INSERT INTO t VALUES (3)"),
            "42601 INSERT has more target columns than expressions");
  EXPECT_EQ(Run("UPDATE t SET score = score * 2 WHERE id = 1").command_tag, "UPDATE 1");
  EXPECT_EQ(ErrorOf("UPDATE t SET id = 2 WHERE id = 1").substr(0, 5), "23505");
  EXPECT_EQ(Run("UPDATE t SET id = 10 WHERE id = 1").command_tag, "UPDATE 1");
  EXPECT_EQ(Rows("SELECT id, name, score FROM t ORDER BY id"),
            (std::vector<std::string>{"2|b|NULL", "10|a|3"}));
  EXPECT_EQ(Run("DELETE FROM t WHERE score IS NULL").command_tag, "DELETE 1");
  EXPECT_EQ(Rows("SELECT count(*) FROM t"), std::vector<std::string>{"1"});
  Run("CREATE TABLE log (line VARCHAR) APPEND ONLY");
  EXPECT_EQ(ErrorOf("DELETE FROM log").substr(0, 5), "0A000");
  EXPECT_EQ(ErrorOf("INSERT INTO nowhere VALUES (1)").substr(0, 5), "42P01");
}

TEST_F(DatabaseTest, TransactionsApplyAtCommitOnly) {
  Open();
  Run("CREATE TABLE t (id INT PRIMARY KEY, v INT)");
  Run("CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n, sum(v) AS s FROM t");
  Transaction transaction;
  auto run_in = [&](const std::string& sql) {
    auto statements = parser::Parse(sql);
    return database_->Execute(*statements[0], &transaction);
  };
  run_in("INSERT INTO t VALUES (1, 10), (2, 20)");
  run_in("UPDATE t SET v = v + 1 WHERE id = 2");  // Sees the transaction's own insert.
  EXPECT_EQ(Rows("SELECT count(*) FROM t"), std::vector<std::string>{"0"});
  database_->Commit(&transaction);
  EXPECT_EQ(Rows("SELECT id, v FROM t ORDER BY id"), (std::vector<std::string>{"1|10", "2|21"}));
  Run("CHECKPOINT");
  EXPECT_EQ(Rows("SELECT n, s FROM total"), std::vector<std::string>{"2|31"});

  // A key another session took meanwhile fails the commit, and nothing of it is written.
  Transaction late;
  auto statements = parser::Parse("INSERT INTO t VALUES (3, 30), (4, 40)");
  database_->Execute(*statements[0], &late);
  Run("INSERT INTO t VALUES (4, 400)");
  try {
    database_->Commit(&late);
    FAIL() << "the commit should conflict";
  } catch (const SqlError& error) {
    EXPECT_EQ(error.sqlstate(), "23505");
  }
  EXPECT_EQ(Rows("SELECT id, v FROM t ORDER BY id"),
            (std::vector<std::string>{"1|10", "2|21", "4|400"}));
}

TEST_F(DatabaseTest, ViewOverTableBackfillsAndRetracts) {
  Open(std::chrono::milliseconds(0));
  Run("CREATE TABLE t (id INT PRIMARY KEY, grp VARCHAR, v INT)");
  Run("INSERT INTO t VALUES (1, 'a', 1), (2, 'a', 2), (3, 'b', 3)");
  // Created over existing rows: it returns once it has read them.
  Run("CREATE MATERIALIZED VIEW g AS SELECT grp, count(*) AS n, sum(v) AS s FROM t GROUP BY grp");
  Run("CREATE MATERIALIZED VIEW big AS SELECT id, v * 10 AS v10 FROM t WHERE v >= 2");
  EXPECT_EQ(Rows("SELECT * FROM g ORDER BY grp"), (std::vector<std::string>{"a|2|3", "b|1|3"}));
  EXPECT_EQ(Rows("SELECT * FROM big ORDER BY id"), (std::vector<std::string>{"2|20", "3|30"}));
  Run("UPDATE t SET grp = 'b', v = 0 WHERE id = 2");
  Run("DELETE FROM t WHERE id = 1");
  Run("CHECKPOINT");
  EXPECT_EQ(Rows("SELECT * FROM g ORDER BY grp"), (std::vector<std::string>{"b|2|3"}));
  EXPECT_EQ(Rows("SELECT * FROM big ORDER BY id"), (std::vector<std::string>{"3|30"}));
  EXPECT_EQ(ErrorOf("CREATE MATERIALIZED VIEW m AS SELECT max(v) FROM t").substr(0, 5), "0A000");
  EXPECT_EQ(ErrorOf("DROP TABLE t").substr(0, 5), "2BP01");
  Run("DROP TABLE t CASCADE");
  EXPECT_TRUE(Rows("SHOW TABLES").empty());
}

TEST_F(DatabaseTest, ViewsOverViews) {
  Open(std::chrono::milliseconds(0));
  Run("CREATE TABLE t (id INT PRIMARY KEY, grp VARCHAR, v INT)");
  Run("INSERT INTO t VALUES (1, 'a', 1), (2, 'a', 2), (3, 'b', 3)");
  Run("CREATE MATERIALIZED VIEW g AS SELECT grp, count(*) AS n, sum(v) AS s FROM t GROUP BY grp");
  // Created over a view that already has rows: it backfills them.
  Run("CREATE MATERIALIZED VIEW top AS SELECT grp, s FROM g WHERE s > 2");
  Run("CREATE MATERIALIZED VIEW groups AS SELECT count(*) AS groups, sum(n) AS rows FROM g");
  EXPECT_EQ(Rows("SELECT * FROM top ORDER BY grp"), (std::vector<std::string>{"a|3", "b|3"}));
  EXPECT_EQ(Rows("SELECT * FROM groups"), std::vector<std::string>{"2|3"});
  Run("INSERT INTO t VALUES (4, 'c', 10)");
  Run("DELETE FROM t WHERE grp = 'a'");
  Run("CHECKPOINT");
  EXPECT_EQ(Rows("SELECT * FROM top ORDER BY grp"), (std::vector<std::string>{"b|3", "c|10"}));
  EXPECT_EQ(Rows("SELECT * FROM groups"), std::vector<std::string>{"2|2"});
  database_->Shutdown();
  database_.reset();

  Open(std::chrono::milliseconds(0));
  Run("UPDATE t SET v = 100 WHERE id = 3");
  Run("CHECKPOINT");
  EXPECT_EQ(Rows("SELECT * FROM top ORDER BY grp"), (std::vector<std::string>{"b|100", "c|10"}));
  EXPECT_EQ(ErrorOf("DROP MATERIALIZED VIEW g").substr(0, 5), "2BP01");
  Run("DROP MATERIALIZED VIEW top");
  Run("DROP MATERIALIZED VIEW groups");
  Run("DROP MATERIALIZED VIEW g");
}

TEST_F(DatabaseTest, StateLargerThanTheMemoryBudgetCheckpointsEarly) {
  // 50,000 groups of state under a 64 kB budget, with no timed checkpoints: the engine must
  // commit early and often, and the result must still be exact.
  Open(std::chrono::milliseconds(0), 64 << 10);
  Run("CREATE STREAM s (id BIGINT) WITH (connector = 'datagen', 'fields.id.kind' = 'sequence', "
      "'fields.id.end' = '100000')");
  Run("CREATE MATERIALIZED VIEW g AS SELECT id % 50000 AS k, count(*) AS n, sum(id) AS total "
      "FROM s GROUP BY id % 50000");
  auto metric = [&](const std::string& name) {
    std::string text = database_->metrics()->RenderPrometheus();
    size_t at = text.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stoll(text.substr(at + name.size() + 2));
  };
  std::string rows_in = "stave_view_rows_in_total{view=\"g\"}";
  for (int i = 0; i < 600 && metric(rows_in) < 100000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Run("CHECKPOINT");
  EXPECT_EQ(Rows("SELECT count(*), sum(n), sum(total) FROM g"),
            std::vector<std::string>{"50000|100000|5000050000"});
  EXPECT_GT(metric("stave_checkpoints_early_total"), 5);
}

}  // namespace
}  // namespace stave::executor
