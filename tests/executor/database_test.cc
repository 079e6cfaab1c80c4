#include "executor/database.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <atomic>
#include <functional>
#include <map>
#include <thread>

#include "common/sql_error.h"
#include "executor/connectors/connectors.h"
#include "executor/plan_builder.h"
#include "parser/parser.h"
#include "tests/test_directory.h"

namespace stave::executor {
namespace {

class DatabaseTest : public ::testing::Test {
 protected:
  DatabaseTest() { RegisterBuiltinConnectors(&connectors_); }

  void Open(std::chrono::milliseconds interval = std::chrono::milliseconds(50),
            size_t state_memory = size_t{256} << 20, size_t parallelism = 0,
            uint32_t plan_version = planner::kPlanVersion) {
    DatabaseOptions options;
    options.plan_version = plan_version;
    options.data_directory = directory_.path() + subdirectory_;
    options.checkpoint_interval = interval;
    options.state_memory_bytes = state_memory;
    options.streaming_parallelism = parallelism;
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
  std::string subdirectory_;  // Of directory_, for a test that opens several databases.
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

// The keys of a view's state tables in slots [first, last).
size_t StateKeys(const storage::Store& store, uint32_t view_id, uint32_t first, uint32_t last) {
  size_t keys = 0;
  std::shared_ptr<const storage::Snapshot> snapshot = store.NewSnapshot().ValueOrThrow();
  for (uint32_t slot = first; slot < last; ++slot) {
    EXPECT_TRUE(snapshot
                    ->ScanStateTable(StateTableId(view_id, slot),
                                     [&](std::string_view, std::string_view) {
                                       ++keys;
                                       return true;
                                     })
                    .ok());
  }
  return keys;
}

// The keys a view's operators keep (every state table of the view but its rows' own).
size_t OperatorStateKeys(const storage::Store& store, uint32_t view_id) {
  return StateKeys(store, view_id, kViewRowsSlot + 2, 256);
}

size_t ViewRows(const storage::Store& store, uint32_t view_id) {
  return StateKeys(store, view_id, kViewRowsSlot, kViewRowsSlot + 1);
}

// The bytes of the values in every state table of a view, its rows' included.
size_t StateValueBytes(const storage::Store& store, uint32_t view_id) {
  size_t bytes = 0;
  std::shared_ptr<const storage::Snapshot> snapshot = store.NewSnapshot().ValueOrThrow();
  for (uint32_t slot = kViewRowsSlot; slot < 256; ++slot) {
    EXPECT_TRUE(snapshot
                    ->ScanStateTable(StateTableId(view_id, slot),
                                     [&](std::string_view, std::string_view value) {
                                       bytes += value.size();
                                       return true;
                                     })
                    .ok());
  }
  return bytes;
}

// A grouped view's rows hold its aggregate's group states (plan revision 6): one entry per
// group, read back as rows by SELECT, point lookups and a view over the view, and as states
// by the aggregate after a restart. A view created by revision 5 keeps its two tables, and
// one created by revision 6 its states as EncodeRow wrote them (revision 7 packs them), also
// when the server that reopens it plans new views with the current revision.
TEST_F(DatabaseTest, GroupedViewRowsHoldTheAggregateStates) {
  const std::string query = "SELECT * FROM g ORDER BY k";
  std::map<uint32_t, size_t> state_bytes;  // By revision, after the restart.
  for (uint32_t created_with : {planner::kPlanVersion, uint32_t{6}, uint32_t{5}}) {
    SCOPED_TRACE(created_with);
    subdirectory_ = "/created-with-" + std::to_string(created_with);
    Open(std::chrono::milliseconds(50), size_t{256} << 20, 2, created_with);
    Run("CREATE TABLE t (k BIGINT, v BIGINT, name VARCHAR)");
    Run("INSERT INTO t VALUES (1, 10, 'a'), (1, 20, 'b'), (2, 5, NULL), (3, 7, 'c'), "
        "(3, 8, 'd'), (4, 1, 'e')");
    Run("CREATE MATERIALIZED VIEW g AS SELECT k, count(*) AS n, sum(v) AS total, "
        "max(name) AS top FROM t GROUP BY k");
    Run("CREATE MATERIALIZED VIEW total AS SELECT sum(n) AS n, sum(total) AS total FROM g");
    std::string explain;
    for (const std::string& line :
         Rows("EXPLAIN CREATE MATERIALIZED VIEW g2 AS SELECT k, count(*) FROM t GROUP BY k")) {
      explain += line + "\n";
    }
    EXPECT_EQ(explain.find("in the view's rows") != std::string::npos, created_with >= 6)
        << explain;
    std::vector<std::string> expected = {"1|2|30|b", "2|1|5|NULL", "3|2|15|d", "4|1|1|e"};
    EXPECT_EQ(WaitFor(query, expected), expected);
    uint32_t g = database_->catalog().Find("g")->id;
    Run("CHECKPOINT");
    EXPECT_EQ(ViewRows(database_->store(), g), 4u);
    EXPECT_EQ(OperatorStateKeys(database_->store(), g), created_with >= 6 ? 0u : 4u);

    Run("UPDATE t SET v = v + 100 WHERE k = 1");
    Run("DELETE FROM t WHERE k = 4");
    Run("DELETE FROM t WHERE k = 3 AND v = 8");
    Run("INSERT INTO t VALUES (5, 50, 'z')");
    expected = {"1|2|230|b", "2|1|5|NULL", "3|1|7|c", "5|1|50|z"};
    EXPECT_EQ(WaitFor(query, expected), expected);
    EXPECT_EQ(Rows("SELECT n, total FROM g WHERE k = 3"), std::vector<std::string>{"1|7"});
    EXPECT_EQ(WaitFor("SELECT * FROM total", {"5|292"}), std::vector<std::string>{"5|292"});
    database_->Shutdown();
    database_.reset();

    // Reopened by this revision, the groups are read back from storage as they change.
    Open(std::chrono::milliseconds(50), size_t{256} << 20, 2);
    Run("INSERT INTO t VALUES (1, 1, 'c'), (3, 3, NULL), (6, 6, 'f')");
    Run("DELETE FROM t WHERE k = 2");
    expected = {"1|3|231|c", "3|2|10|c", "5|1|50|z", "6|1|6|f"};
    EXPECT_EQ(WaitFor(query, expected), expected);
    EXPECT_EQ(WaitFor("SELECT * FROM total", {"7|297"}), std::vector<std::string>{"7|297"});
    Run("CHECKPOINT");
    EXPECT_EQ(ViewRows(database_->store(), g), 4u);
    EXPECT_EQ(OperatorStateKeys(database_->store(), g), created_with >= 6 ? 0u : 4u);
    state_bytes[created_with] = StateValueBytes(database_->store(), g);
    // A view created now over the view reads its rows, and their states past them, as rows.
    Run("CREATE MATERIALIZED VIEW tops AS SELECT top, count(*) AS c FROM g GROUP BY top");
    EXPECT_EQ(WaitFor("SELECT * FROM tops ORDER BY top", {"c|2", "f|1", "z|1"}),
              (std::vector<std::string>{"c|2", "f|1", "z|1"}));
    database_->Shutdown();
    database_.reset();
  }
  // Four groups' rows and states: the packed states spare most of the bytes.
  EXPECT_LT(state_bytes[planner::kPlanVersion] * 2, state_bytes[6])
      << state_bytes[planner::kPlanVersion] << " " << state_bytes[6];
}

// Which views keep their aggregate's states in their rows: those that show the aggregate's
// columns as they are, keyed by its group keys, whose windows do not close.
TEST_F(DatabaseTest, ViewsShowingTheirAggregateAsItIsKeepItsStatesInTheirRows) {
  Open();
  Run("CREATE TABLE t (k BIGINT, v BIGINT)");
  Run("CREATE STREAM s (k BIGINT, ts BIGINT, WATERMARK FOR ts AS ts) WITH (connector = "
      "'datagen')");
  auto keeps = [&](const std::string& query) {
    std::string explain;
    for (const std::string& line : Rows("EXPLAIN CREATE MATERIALIZED VIEW v AS " + query)) {
      explain += line + "\n";
    }
    return explain.find("[state: groups, in the view's rows]") != std::string::npos &&
           explain.find("written by the aggregate") != std::string::npos;
  };
  EXPECT_TRUE(keeps("SELECT k, count(*) FROM t GROUP BY k"));
  EXPECT_TRUE(keeps("SELECT sum(v) AS total, k FROM t GROUP BY k"));
  EXPECT_TRUE(keeps("SELECT v, count(*) FROM t GROUP BY k, v"));  // k: a hidden key.
  EXPECT_TRUE(keeps("SELECT DISTINCT k FROM t"));
  EXPECT_TRUE(keeps("SELECT count(*) AS n FROM t"));
  EXPECT_FALSE(keeps("SELECT k, count(*) + 1 AS n FROM t GROUP BY k"));
  EXPECT_FALSE(keeps("SELECT k, count(*) AS n FROM t GROUP BY k HAVING count(*) > 1"));
  EXPECT_FALSE(
      keeps("SELECT window_start, count(*) AS n FROM TUMBLE(s, ts, 10) "
            "GROUP BY window_start"));
  EXPECT_FALSE(
      keeps("SELECT k, n FROM (SELECT k, count(*) AS n FROM t GROUP BY k) g "
            "WHERE n > 1"));
}

// Windows over a stream's watermark: once a window closes its groups leave the state, so a
// view's state stays as small after 150 windows as after a few, on an unbounded stream.
TEST_F(DatabaseTest, ClosedWindowsLeaveNoState) {
  Open(std::chrono::milliseconds(50), size_t{256} << 20, 2);
  Run("CREATE STREAM s (id BIGINT, ts BIGINT, WATERMARK FOR ts AS ts) WITH (connector = "
      "'datagen', 'fields.id.kind' = 'sequence', 'fields.ts.kind' = 'sequence', "
      "'fields.ts.start' = '1', 'rows-per-second' = '50000')");
  Run("CREATE MATERIALIZED VIEW final AS SELECT window_start, id % 3 AS k, count(*) AS n "
      "FROM TUMBLE(s, ts, 1000) GROUP BY window_start, id % 3 EMIT ON WINDOW CLOSE");
  Run("CREATE MATERIALIZED VIEW updating AS SELECT window_end, count(*) AS n "
      "FROM TUMBLE(s, ts, 1000) GROUP BY window_end");
  uint32_t final_id = database_->catalog().Find("final")->id;
  uint32_t updating_id = database_->catalog().Find("updating")->id;
  size_t most = 0;
  size_t windows = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (windows < 150 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Run("CHECKPOINT");
    most = std::max(most, OperatorStateKeys(database_->store(), final_id) +
                              OperatorStateKeys(database_->store(), updating_id));
    windows = std::stoul(Rows("SELECT count(*) FROM updating").front());
  }
  ASSERT_GE(windows, 150u);
  // The rows of every closed window are there, each final once.
  std::vector<std::string> first = Rows("SELECT k, n FROM final WHERE window_start = 0 ORDER BY k");
  EXPECT_EQ(first, (std::vector<std::string>{"0|333", "1|333", "2|333"}));
  EXPECT_EQ(Rows("SELECT count(*) FROM final WHERE n <> 333 AND n <> 334 AND window_start > 0"),
            std::vector<std::string>{"0"});
  // Open windows only: a few per view (the ones the watermark has not passed), never the
  // hundreds the stream went through.
  EXPECT_LE(most, 40u) << "state keys of the window aggregates";
}

// The same over views of the stream: a view passes the stream's watermark on to the views over
// it, whose windows close and whose join forgets rows, so their state stays bounded too. (A
// slower stream than above: six views are created while it runs, slowly under sanitizers.)
TEST_F(DatabaseTest, WindowsAndJoinsOverViewsLeaveNoState) {
  Open(std::chrono::milliseconds(50), size_t{256} << 20, 2);
  Run("CREATE STREAM s (id BIGINT, ts BIGINT, WATERMARK FOR ts AS ts) WITH (connector = "
      "'datagen', 'fields.id.kind' = 'sequence', 'fields.ts.kind' = 'sequence', "
      "'fields.ts.start' = '1', 'rows-per-second' = '5000')");
  Run("CREATE MATERIALIZED VIEW evens AS SELECT id, ts FROM s WHERE id % 2 = 0");
  Run("CREATE MATERIALIZED VIEW odds AS SELECT id, ts FROM s WHERE id % 2 = 1");
  Run("CREATE MATERIALIZED VIEW per_window AS SELECT window_end AS w_end, count(*) AS n "
      "FROM TUMBLE(s, ts, 100) GROUP BY window_end");
  Run("CREATE MATERIALIZED VIEW final AS SELECT window_start, count(*) AS n "
      "FROM TUMBLE(evens, ts, 1000) GROUP BY window_start EMIT ON WINDOW CLOSE");
  Run("CREATE MATERIALIZED VIEW rolled AS SELECT window_start, sum(n) AS n "
      "FROM TUMBLE(per_window, w_end, 1000) GROUP BY window_start EMIT ON WINDOW CLOSE");
  Run("CREATE MATERIALIZED VIEW joined AS SELECT e.id FROM evens e JOIN odds o "
      "ON e.id = o.id + 1 AND o.ts BETWEEN e.ts - 10 AND e.ts + 10");
  std::vector<uint32_t> ids;
  for (const char* name : {"per_window", "final", "rolled", "joined"}) {
    ids.push_back(database_->catalog().Find(name)->id);
  }
  size_t most = 0;
  size_t windows = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (windows < 60 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Run("CHECKPOINT");
    size_t keys = 0;
    for (uint32_t id : ids) keys += OperatorStateKeys(database_->store(), id);
    most = std::max(most, keys);
    windows = std::stoul(Rows("SELECT count(*) FROM rolled").front());
  }
  ASSERT_GE(windows, 60u);
  // Every closed window, final: 500 even ids per 1000, and 1000 rows per rolled window (the
  // first has the times 1 to 899: its 100-wide windows end at 100 to 900).
  EXPECT_EQ(Rows("SELECT count(*) FROM final WHERE n <> 500 AND window_start > 0"),
            std::vector<std::string>{"0"});
  EXPECT_EQ(Rows("SELECT count(*) FROM rolled WHERE n <> 1000 AND window_start > 0"),
            std::vector<std::string>{"0"});
  EXPECT_EQ(Rows("SELECT n FROM rolled WHERE window_start = 0"), std::vector<std::string>{"899"});
  // Every even id met its odd predecessor, once.
  EXPECT_EQ(Rows("SELECT count(*) = count(DISTINCT id) FROM joined"),
            std::vector<std::string>{"t"});
  // Open windows, and the join's rows the other side's watermark has not passed: never the
  // sixty thousand rows the stream went through.
  EXPECT_LE(most, 5000u) << "state keys of the windows and the join over views";
}

// An interval join on a key that never repeats: without cleaning its state would hold every
// row of both endless streams; the watermark of each side lets the other forget its rows.
TEST_F(DatabaseTest, IntervalJoinStateStaysBounded) {
  Open(std::chrono::milliseconds(50), size_t{256} << 20, 2);
  for (const char* name : {"a", "b"}) {
    Run(std::string("CREATE STREAM ") + name +
        " (id BIGINT, ts BIGINT, WATERMARK FOR ts AS ts - 5) WITH (connector = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.ts.kind' = 'sequence', 'fields.ts.start' = '1', "
        "'rows-per-second' = '20000')");
  }
  Run("CREATE MATERIALIZED VIEW joined AS SELECT a.id AS id, b.ts - a.ts AS lag FROM a JOIN b "
      "ON a.id = b.id AND b.ts BETWEEN a.ts - 10 AND a.ts + 10");
  uint32_t view_id = database_->catalog().Find("joined")->id;
  size_t most = 0;
  size_t rows = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (rows < 100000 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Run("CHECKPOINT");
    most = std::max(most, OperatorStateKeys(database_->store(), view_id));
    rows = std::stoul(Rows("SELECT count(*) FROM joined").front());
  }
  ASSERT_GE(rows, 100000u);
  // Every id met its partner, once, with the same time.
  std::vector<std::string> summary =
      Rows("SELECT count(*) = max(id), min(id), min(lag), max(lag) FROM joined");
  EXPECT_EQ(summary, std::vector<std::string>{"t|1|0|0"});
  // The rows still inside the interval of the other side's watermark (a checkpoint's worth
  // of rows at most), never the hundred thousand the streams went through.
  EXPECT_LE(most, 10000u) << "state keys of the interval join";
}

// Nexmark q8's shape: two windowed aggregates joined on their window. Once both watermarks
// pass a window, its groups leave the aggregates and its rows leave the join.
TEST_F(DatabaseTest, WindowedJoinStateStaysBounded) {
  Open(std::chrono::milliseconds(50), size_t{256} << 20, 2);
  for (const char* name : {"a", "b"}) {
    Run(std::string("CREATE STREAM ") + name +
        " (id BIGINT, ts BIGINT, WATERMARK FOR ts AS ts) WITH (connector = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.ts.kind' = 'sequence', 'fields.ts.start' = '1', "
        "'rows-per-second' = '50000')");
  }
  Run("CREATE MATERIALIZED VIEW joined AS SELECT x.window_start AS w, x.n AS a_rows, y.n AS "
      "b_rows FROM (SELECT window_start, count(*) AS n FROM TUMBLE(a, ts, 1000) GROUP BY "
      "window_start) x JOIN (SELECT window_start, count(*) AS n FROM TUMBLE(b, ts, 1000) GROUP BY "
      "window_start) y ON x.window_start = y.window_start");
  uint32_t view_id = database_->catalog().Find("joined")->id;
  size_t most = 0;
  size_t windows = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (windows < 150 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Run("CHECKPOINT");
    most = std::max(most, OperatorStateKeys(database_->store(), view_id));
    windows = std::stoul(Rows("SELECT count(*) FROM joined").front());
  }
  ASSERT_GE(windows, 150u);
  // Every closed window holds the final counts of both sides.
  EXPECT_EQ(Rows("SELECT a_rows, b_rows FROM joined WHERE w = 0"),
            std::vector<std::string>{"999|999"});
  EXPECT_EQ(Rows("SELECT count(*) FROM joined WHERE w > 0 AND w < 100000 AND (a_rows <> 1000 OR "
                 "b_rows <> 1000)"),
            std::vector<std::string>{"0"});
  EXPECT_LE(most, 40u) << "state keys of the windowed aggregates and their join";
}

// A window join and an aggregate over it: the join forgets a window's rows once both
// watermarks pass it, and the aggregate, which closes its windows at the join's watermark,
// forgets its groups; each window is emitted once, final.
TEST_F(DatabaseTest, AggregateOverWindowJoinClosesItsWindows) {
  Open(std::chrono::milliseconds(50), size_t{256} << 20, 2);
  for (const char* name : {"a", "b"}) {
    Run(std::string("CREATE STREAM ") + name +
        " (id BIGINT, ts BIGINT, WATERMARK FOR ts AS ts) WITH (connector = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.ts.kind' = 'sequence', 'fields.ts.start' = '1', "
        "'rows-per-second' = '20000')");
  }
  Run("CREATE MATERIALIZED VIEW pairs AS SELECT x.window_start AS w, count(*) AS n, "
      "sum(y.id - x.id) AS drift FROM TUMBLE(a, ts, 1000) x JOIN TUMBLE(b, ts, 1000) y "
      "ON x.id % 1000 = y.id % 1000 AND x.window_start = y.window_start "
      "GROUP BY x.window_start EMIT ON WINDOW CLOSE");
  uint32_t view_id = database_->catalog().Find("pairs")->id;
  size_t most = 0;
  size_t windows = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (windows < 60 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Run("CHECKPOINT");
    most = std::max(most, OperatorStateKeys(database_->store(), view_id));
    windows = std::stoul(Rows("SELECT count(*) FROM pairs").front());
  }
  ASSERT_GE(windows, 60u);
  // Each id meets its one partner of the same window, once; closed windows only.
  EXPECT_EQ(Rows("SELECT n, drift FROM pairs WHERE w = 0"), std::vector<std::string>{"999|0"});
  EXPECT_EQ(Rows("SELECT count(*) FROM pairs WHERE w > 0 AND (n <> 1000 OR drift <> 0)"),
            std::vector<std::string>{"0"});
  EXPECT_EQ(Rows("SELECT count(*) = max(w) / 1000 + 1 FROM pairs"), std::vector<std::string>{"t"});
  // The rows of the open windows (and of a checkpoint's worth of input), never the tens of
  // thousands the streams went through.
  EXPECT_LE(most, 20000u) << "state keys of the window join and its aggregate";
}

// A temporal filter over an endless stream whose event time keeps up with the clock: the
// view holds the last second of rows, and the filter's state only those, as rows leave.
TEST_F(DatabaseTest, TemporalFilterStateStaysBounded) {
  Open(std::chrono::milliseconds(50), size_t{256} << 20, 2);
  Run("CREATE STREAM s (id BIGINT, at TIMESTAMPTZ) WITH (connector = 'datagen', "
      "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.at.start' = 'now', "
      "'fields.at.step' = '500 microseconds', 'rows-per-second' = '2000')");
  Run("CREATE MATERIALIZED VIEW recent AS SELECT id, at FROM s "
      "WHERE at > now() - INTERVAL '1' SECOND");
  uint32_t view_id = database_->catalog().Find("recent")->id;
  size_t most = 0;
  size_t most_rows = 0;
  int64_t last_id = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (last_id < 12000 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Run("CHECKPOINT");
    most = std::max(most, OperatorStateKeys(database_->store(), view_id));
    std::vector<std::string> seen = Rows("SELECT count(*), coalesce(max(id), 0) FROM recent");
    size_t bar = seen.front().find('|');
    most_rows = std::max<size_t>(most_rows, std::stoul(seen.front().substr(0, bar)));
    last_id = std::stoll(seen.front().substr(bar + 1));
  }
  ASSERT_GE(last_id, 12000);
  // The view holds no row older than the bound, and not the thousands that went through.
  EXPECT_EQ(Rows("SELECT count(*) FROM recent WHERE at < now() - INTERVAL '10' SECOND"),
            std::vector<std::string>{"0"});
  EXPECT_LE(most_rows, 6000u) << "rows in the view";
  EXPECT_LE(most, 6000u) << "state keys of the temporal filter";
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
  // What they cost: each commits a synced write, and the view's tasks flush their state.
  EXPECT_EQ(Rows("SELECT sum(barrier_cpu_ms) > 0, sum(commit_cpu_ms) > 0, "
                 "min(commit_cpu_ms) >= 0 FROM stave_catalog.checkpoints"),
            std::vector<std::string>{"t|t|t"});
  // Of each one's duration, its synced write.
  EXPECT_EQ(Rows("SELECT min(write_ms) > 0, max(write_ms - duration_ms) <= 0 "
                 "FROM stave_catalog.checkpoints"),
            std::vector<std::string>{"t|t"});
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
  // Without a column list, fewer values fill the first columns, as in PostgreSQL.
  EXPECT_EQ(ErrorOf("INSERT INTO t VALUES (3)"),
            "23502 null value in column \"name\" of relation \"t\" violates not-null constraint");
  EXPECT_EQ(ErrorOf("INSERT INTO t (id, name) VALUES (3)"),
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
  // max over rows that may be deleted keeps every value: deleting the maximum finds the next.
  Run("CREATE MATERIALIZED VIEW m AS SELECT max(v) AS top FROM t");
  EXPECT_EQ(Rows("SELECT * FROM m"), (std::vector<std::string>{"3"}));
  Run("DELETE FROM t WHERE id = 3");
  Run("CHECKPOINT");
  EXPECT_EQ(Rows("SELECT * FROM m"), (std::vector<std::string>{"0"}));
  EXPECT_EQ(Rows("SELECT * FROM g ORDER BY grp"), (std::vector<std::string>{"b|1|0"}));
  EXPECT_EQ(ErrorOf("DROP TABLE t").substr(0, 5), "2BP01");
  Run("DROP TABLE t CASCADE");
  EXPECT_TRUE(Rows("SHOW TABLES").empty());
}

// Log records every reader has passed are deleted at checkpoints, also of a table no view
// reads; views created later backfill from a snapshot of the table's rows instead.
TEST_F(DatabaseTest, TableLogsAreTruncatedAndNewViewsBackfillFromRows) {
  Open(std::chrono::milliseconds(0));
  Run("CREATE TABLE t (k INT PRIMARY KEY, v INT)");
  Run("CREATE TABLE bag (v INT)");  // Keyless: rows carry hidden row ids.
  int64_t sum = 0;
  for (int k = 0; k < 100; ++k) {
    Run(fmt::format("INSERT INTO t VALUES ({}, {})", k, k));
    Run(fmt::format("INSERT INTO bag VALUES ({})", k));
    sum += k;
  }
  Run("CHECKPOINT");  // No reader: all but the last record of each log go.
  Run("CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n, sum(v) AS s FROM t");
  Run("CREATE MATERIALIZED VIEW bag_total AS SELECT count(*) AS n, sum(v) AS s FROM bag");
  EXPECT_EQ(Rows("SELECT * FROM total"), std::vector<std::string>{fmt::format("100|{}", sum)});
  EXPECT_EQ(Rows("SELECT * FROM bag_total"), std::vector<std::string>{fmt::format("100|{}", sum)});
  Run("UPDATE t SET v = v + 1 WHERE k < 10");
  Run("DELETE FROM bag WHERE v >= 90");
  Run("CHECKPOINT");
  EXPECT_EQ(Rows("SELECT * FROM total"), std::vector<std::string>{fmt::format("100|{}", sum + 10)});
  EXPECT_EQ(Rows("SELECT * FROM bag_total"),
            std::vector<std::string>{fmt::format("90|{}", sum - 945)});
  uint32_t t_id = database_->catalog().Find("t")->id;
  uint32_t bag_id = database_->catalog().Find("bag")->id;
  database_->Shutdown();
  database_.reset();

  Open(std::chrono::milliseconds(0));
  Run("INSERT INTO t VALUES (1000, 1)");
  Run("INSERT INTO bag VALUES (1)");
  Run("CHECKPOINT");
  EXPECT_EQ(Rows("SELECT * FROM total"), std::vector<std::string>{fmt::format("101|{}", sum + 11)});
  EXPECT_EQ(Rows("SELECT * FROM bag_total"),
            std::vector<std::string>{fmt::format("91|{}", sum - 944)});
  Run("CHECKPOINT");  // The readers' positions of the last one are committed: truncate.
  database_->Shutdown();
  database_.reset();
  auto store = storage::Store::Open(directory_.path()).ValueOrThrow();
  for (uint32_t id : {t_id, bag_id}) {
    size_t records = 0;
    ASSERT_TRUE(store
                    ->ReadTableLog(id, 0,
                                   [&](uint64_t, std::string_view) {
                                     ++records;
                                     return true;
                                   })
                    .ok());
    EXPECT_LE(records, 1u) << "table " << id;
  }
  // 100 inserts, an update, an insert: sequences are never reused.
  EXPECT_EQ(store->NextTableLogSequence(t_id).ValueOrThrow(), 102u);
}

// A table's log may lose every record (all of them read by every reader); after a restart new
// writes must still get sequences past every reader's position, or the readers skip them.
TEST_F(DatabaseTest, TableSequencesSurviveAnEmptiedLog) {
  Open(std::chrono::milliseconds(0));
  Run("CREATE TABLE t (k BIGINT PRIMARY KEY, v BIGINT)");
  Run("CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n, sum(v) AS s FROM t");
  for (int i = 1; i <= 3; ++i) Run(fmt::format("INSERT INTO t VALUES ({}, {})", i, i));
  Run("CHECKPOINT");
  uint32_t t_id = database_->catalog().Find("t")->id;
  database_->Shutdown();
  database_.reset();
  {
    auto store = storage::Store::Open(directory_.path()).ValueOrThrow();
    storage::EpochBatch batch(store->committed_epoch() + 1);
    batch.DeleteTableLog(t_id);
    ASSERT_TRUE(store->Commit(&batch).ok());
  }
  Open(std::chrono::milliseconds(0));
  Run("INSERT INTO t VALUES (10, 10)");
  Run("CHECKPOINT");
  EXPECT_EQ(Rows("SELECT * FROM total"), std::vector<std::string>{"4|16"});
}

// CREATE of a view over a view while other sessions checkpoint: the new view's first barrier
// must not wait for CHECKPOINT's targets (it could only meet them after that very epoch).
TEST_F(DatabaseTest, ViewsCreatedWhileOthersCheckpoint) {
  Open(std::chrono::milliseconds(0));
  Run("CREATE TABLE t (k INT PRIMARY KEY, v INT)");
  Run("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");
  Run("CREATE MATERIALIZED VIEW base AS SELECT k % 2 AS odd, sum(v) AS s FROM t GROUP BY k % 2");
  std::atomic<bool> done{false};
  std::thread checkpointer([&] {
    int64_t next = 4;
    while (!done.load()) {
      Run(fmt::format("INSERT INTO t VALUES ({}, 1)", next++));
      Run("CHECKPOINT");
    }
  });
  for (int i = 0; i < 20; ++i) {
    Run(fmt::format("CREATE MATERIALIZED VIEW over_{} AS SELECT count(*) AS n FROM base", i));
    EXPECT_EQ(Rows(fmt::format("SELECT n FROM over_{}", i)), std::vector<std::string>{"2"});
    Run(fmt::format("DROP MATERIALIZED VIEW over_{}", i));
  }
  done.store(true);
  checkpointer.join();
}

// ALTER SYSTEM SET checkpoint_interval is kept for later starts, unless a flag says otherwise.
TEST_F(DatabaseTest, AlterSystemCheckpointIntervalIsKept) {
  Open(std::chrono::milliseconds(0));
  database_->SetCheckpointInterval(std::chrono::milliseconds(250), /*persist=*/false);
  EXPECT_EQ(database_->engine()->checkpoint_interval(), std::chrono::milliseconds(250));
  database_->Shutdown();
  database_.reset();
  Open(std::chrono::milliseconds(0));
  EXPECT_EQ(database_->engine()->checkpoint_interval(), std::chrono::milliseconds(0));  // SET.
  database_->SetCheckpointInterval(std::chrono::milliseconds(300), /*persist=*/true);
  database_->Shutdown();
  database_.reset();
  Open(std::chrono::milliseconds(0));
  EXPECT_EQ(database_->engine()->checkpoint_interval(), std::chrono::milliseconds(300));
  database_->Shutdown();
  database_.reset();
  DatabaseOptions options;
  options.data_directory = directory_.path();
  options.checkpoint_interval = std::chrono::milliseconds(700);
  options.checkpoint_interval_explicit = true;  // --checkpoint-interval on the command line.
  database_ = Database::Open(options, &connectors_);
  EXPECT_EQ(database_->engine()->checkpoint_interval(), std::chrono::milliseconds(700));
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
  // commit early and often, and the result must still be exact. The source is paced (over
  // about half a second): unpaced, it can finish between two of the coordinator's looks.
  Open(std::chrono::milliseconds(0), 64 << 10);
  Run("CREATE STREAM s (id BIGINT) WITH (connector = 'datagen', 'fields.id.kind' = 'sequence', "
      "'fields.id.end' = '100000', 'rows-per-second' = '200000')");
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
  // About 5 MB of state through a 64 kB budget: many early commits. (How many depends on
  // how far the sources run before the coordinator, looking every 10 ms, pauses them.)
  EXPECT_GE(metric("stave_checkpoints_early_total"), 3);
  // Past twice the budget the sources paused until a checkpoint emptied the buffers.
  EXPECT_GE(metric("stave_source_throttled_total"), 1);
}

// The same views at several parallelisms, and across a restart that changes it: every
// stage's instances own disjoint virtual nodes, so the results must not depend on it. The
// expected rows come from a model of the table kept by the test.
class ParallelismTest : public DatabaseTest, public ::testing::WithParamInterface<size_t> {
 protected:
  void Dml(const std::string& sql,
           const std::function<void(int64_t k, int64_t* g, int64_t* v, bool* keep)>& model) {
    Run(sql);
    for (auto it = table_.begin(); it != table_.end();) {
      bool keep = true;
      model(it->first, &it->second.first, &it->second.second, &keep);
      it = keep ? std::next(it) : table_.erase(it);
    }
  }
  void Insert(int64_t from, int64_t to) {
    std::string sql = "INSERT INTO t VALUES ";
    for (int64_t k = from; k < to; ++k) {
      sql += fmt::format("{}({}, {}, {})", k == from ? "" : ", ", k, k % 13, k % 101);
      table_[k] = {k % 13, k % 101};
    }
    Run(sql);
  }
  void Log(int64_t from, int64_t to) {
    std::string sql = "INSERT INTO log VALUES ";
    for (int64_t i = from; i < to; ++i) {
      sql += fmt::format("{}({}, {})", i == from ? "" : ", ", i % 5, i);
      log_[i % 5] += i;
    }
    Run(sql);
  }
  std::vector<std::string> Expected() const {
    std::map<int64_t, std::pair<int64_t, int64_t>> by_g;  // g → count, sum
    int64_t count = 0, total = 0, big = 0, big_sum = 0, big_min = INT64_MAX, big_max = 0;
    for (const auto& [k, row] : table_) {
      auto& group = by_g[row.first];
      ++group.first;
      group.second += row.second;
      ++count;
      total += row.second;
      if (row.second > 50) {
        ++big;
        big_sum += 2 * row.second;
        big_min = std::min(big_min, k);
        big_max = std::max(big_max, k);
      }
    }
    std::map<int64_t, int64_t> by_n;
    std::string by_g_text, by_n_text, log_text;
    for (const auto& [g, group] : by_g) {
      by_g_text += fmt::format("{}|{}|{};", g, group.first, group.second);
      ++by_n[group.first];
    }
    for (const auto& [n, groups] : by_n) by_n_text += fmt::format("{}|{};", n, groups);
    for (const auto& [g, sum] : log_) log_text += fmt::format("{}|{};", g, sum);
    std::string mod7;
    for (int m = 0; m < 7; ++m) mod7 += fmt::format("{}|{};", m, m == 1 ? 2858 : 2857);
    return {by_g_text,
            fmt::format("{}|{};", count, total),
            fmt::format("{}|{}|{}|{};", big, big_sum, big_min, big_max),
            by_n_text,
            log_text,
            "10000|100000000;",
            mod7};
  }
  std::vector<std::string> Actual() {
    std::vector<std::string> results;
    for (const char* query :
         {"SELECT * FROM by_g ORDER BY g", "SELECT * FROM everything",
          "SELECT count(*), sum(v2), min(k), max(k) FROM big", "SELECT * FROM by_n ORDER BY n",
          "SELECT * FROM log_sum ORDER BY g", "SELECT count(*), sum(id) FROM odd",
          "SELECT * FROM mod7 ORDER BY m"}) {
      std::string joined;
      for (const std::string& row : Rows(query)) joined += row + ";";
      results.push_back(joined);
    }
    return results;
  }
  // Checkpoints until the stream views have read their stream too.
  std::vector<std::string> Settled() {
    std::vector<std::string> expected = Expected();
    std::vector<std::string> actual;
    for (int i = 0; i < 100; ++i) {
      Run("CHECKPOINT");
      actual = Actual();
      if (actual == expected) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return actual;
  }

  std::map<int64_t, std::pair<int64_t, int64_t>> table_;  // k → g, v
  std::map<int64_t, int64_t> log_;                        // g → sum(v)
};

TEST_P(ParallelismTest, ResultsDoNotDependOnParallelism) {
  size_t parallelism = GetParam();
  Open(std::chrono::milliseconds(20), size_t{256} << 20, parallelism);
  Run("CREATE TABLE t (k BIGINT PRIMARY KEY, g BIGINT, v BIGINT);"
      "CREATE TABLE log (g BIGINT, v BIGINT);"
      "CREATE STREAM s (id BIGINT) WITH (connector = 'datagen', 'fields.id.kind' = 'sequence', "
      "  'fields.id.start' = '1', 'fields.id.end' = '20000');");
  Insert(0, 200);  // Views created next backfill these.
  SessionContext three;
  three.streaming_parallelism = 3;  // Kept with the view, whatever the default.
  database_->Execute(
      *parser::Parse("CREATE MATERIALIZED VIEW by_g AS SELECT g, count(*) AS n, sum(v) AS total "
                     "FROM t GROUP BY g")[0],
      nullptr, three);
  Run("CREATE MATERIALIZED VIEW everything AS SELECT count(*) AS n, sum(v) AS total FROM t;"
      "CREATE MATERIALIZED VIEW big AS SELECT k, v * 2 AS v2 FROM t WHERE v > 50;"
      "CREATE MATERIALIZED VIEW by_n AS SELECT n, count(*) AS groups FROM by_g GROUP BY n;"
      "CREATE MATERIALIZED VIEW log_sum AS SELECT g, sum(v) AS total FROM log GROUP BY g;"
      "CREATE MATERIALIZED VIEW odd AS SELECT id FROM s WHERE id % 2 = 1;"
      "CREATE MATERIALIZED VIEW mod7 AS SELECT id % 7 AS m, count(*) AS n FROM s "
      "GROUP BY id % 7;");
  Insert(200, 400);
  Log(0, 200);
  Dml("UPDATE t SET v = v + 7 WHERE k % 5 = 0", [](int64_t k, int64_t*, int64_t* v, bool*) {
    if (k % 5 == 0) *v += 7;
  });
  Dml("DELETE FROM t WHERE k % 11 = 3",
      [](int64_t k, int64_t*, int64_t*, bool* keep) { *keep = k % 11 != 3; });
  EXPECT_EQ(Settled(), Expected());

  // A restart with another default parallelism: the views go on from their committed state.
  database_->Shutdown();
  database_.reset();
  Open(std::chrono::milliseconds(20), size_t{256} << 20, parallelism % 4 + 1);
  EXPECT_EQ(Actual(), Expected());
  Dml("UPDATE t SET g = g + 1 WHERE k % 7 = 2", [](int64_t k, int64_t* g, int64_t*, bool*) {
    if (k % 7 == 2) *g += 1;
  });
  Insert(400, 500);
  Log(200, 300);
  Dml("DELETE FROM t WHERE v < 5",
      [](int64_t, int64_t*, int64_t* v, bool* keep) { *keep = *v >= 5; });
  EXPECT_EQ(Settled(), Expected());
}

INSTANTIATE_TEST_SUITE_P(Parallelism, ParallelismTest, ::testing::Values(1, 2, 4));

}  // namespace
}  // namespace stave::executor
