#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/cancellation.h"
#include "common/sql_error.h"
#include "executor/connectors/connectors.h"
#include "executor/database.h"
#include "server/session.h"
#include "tests/test_directory.h"

namespace stave::server {
namespace {

/// Cursors (DECLARE, FETCH, MOVE, CLOSE), COPY ... TO STDOUT and statement_timeout on a real
/// Session and Database.
class SessionCursorsTest : public ::testing::Test {
 protected:
  SessionCursorsTest() {
    executor::RegisterBuiltinConnectors(&connectors_);
    executor::DatabaseOptions options;
    options.data_directory = directory_.path();
    options.checkpoint_interval = std::chrono::milliseconds(0);
    database_ = executor::Database::Open(options, &connectors_);
    session_ = std::make_unique<Session>(database_.get(),
                                         std::vector<std::pair<std::string, std::string>>{});
    Run("CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT)");
    Run("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, NULL)");
  }

  ~SessionCursorsTest() override {
    session_.reset();
    database_->Shutdown();
  }

  executor::QueryResult Run(const std::string& sql) {
    executor::QueryResult last;
    session_->RunSimpleQuery(sql, [&last](const executor::QueryResult& result) { last = result; });
    return last;
  }

  // The SQLSTATE `sql` fails with ("" if it succeeds); the session is told, as the
  // connection would.
  std::string ErrorOf(const std::string& sql) {
    try {
      Run(sql);
    } catch (const SqlError& error) {
      session_->OnError();
      return error.sqlstate();
    }
    return "";
  }

  std::vector<int64_t> Ids(const executor::QueryResult& result) {
    std::vector<int64_t> ids;
    for (const auto& row : result.rows) ids.push_back(row.at(0).int_value());
    return ids;
  }

  testing::TestDirectory directory_;
  planner::ConnectorRegistry connectors_;
  std::unique_ptr<executor::Database> database_;
  std::unique_ptr<Session> session_;
};

TEST_F(SessionCursorsTest, FetchMoveAndCloseInATransactionBlock) {
  EXPECT_EQ(ErrorOf("DECLARE c CURSOR FOR SELECT id FROM t ORDER BY id"), "25P01");
  Run("BEGIN");
  EXPECT_EQ(Run("DECLARE c NO SCROLL CURSOR FOR SELECT id, name FROM t ORDER BY id").command_tag,
            "DECLARE CURSOR");
  executor::QueryResult fetched = Run("FETCH FORWARD 2 FROM c");
  EXPECT_EQ(fetched.command_tag, "FETCH 2");
  ASSERT_TRUE(fetched.returns_rows);
  ASSERT_EQ(fetched.columns.size(), 2u);
  EXPECT_EQ(fetched.columns[1].name, "name");
  EXPECT_EQ(Ids(fetched), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Run("MOVE 1 IN c").command_tag, "MOVE 1");
  EXPECT_EQ(Ids(Run("FETCH c")), (std::vector<int64_t>{4}));
  fetched = Run("FETCH ALL FROM c");
  EXPECT_EQ(fetched.command_tag, "FETCH 1");
  EXPECT_EQ(Ids(fetched), (std::vector<int64_t>{5}));
  EXPECT_EQ(Run("FETCH NEXT FROM c").command_tag, "FETCH 0");
  EXPECT_EQ(Run("MOVE FORWARD ALL IN c").command_tag, "MOVE 0");
  EXPECT_EQ(Run("CLOSE c").command_tag, "CLOSE CURSOR");
  EXPECT_EQ(ErrorOf("FETCH c"), "34000");
  EXPECT_EQ(session_->TransactionStatus(), 'E');
  Run("ROLLBACK");
}

TEST_F(SessionCursorsTest, CursorsEndWithTheirTransactionUnlessHeld) {
  Run("BEGIN");
  Run("DECLARE plain CURSOR FOR SELECT id FROM t ORDER BY id");
  Run("DECLARE held CURSOR WITH HOLD FOR SELECT id FROM t ORDER BY id");
  EXPECT_EQ(ErrorOf("DECLARE \"plain\" CURSOR FOR SELECT 1"), "42P03");
  Run("ROLLBACK");
  Run("BEGIN");
  EXPECT_EQ(ErrorOf("FETCH held"), "34000");  // Declared in the rolled-back transaction.
  Run("ROLLBACK");
  Run("BEGIN");
  Run("DECLARE plain CURSOR WITHOUT HOLD FOR SELECT id FROM t ORDER BY id");
  Run("DECLARE held INSENSITIVE CURSOR WITH HOLD FOR SELECT id FROM t ORDER BY id");
  Run("COMMIT");
  EXPECT_EQ(ErrorOf("FETCH plain"), "34000");
  EXPECT_EQ(Ids(Run("FETCH 3 held")), (std::vector<int64_t>{1, 2, 3}));
  Run("BEGIN");
  Run("ROLLBACK");  // A held cursor from before survives a later rollback.
  EXPECT_EQ(Ids(Run("FETCH held")), (std::vector<int64_t>{4}));
  Run("CLOSE ALL");
  EXPECT_EQ(ErrorOf("FETCH held"), "34000");
  // Outside a block WITH HOLD is allowed; errors in the query carry its position.
  EXPECT_EQ(Run("DECLARE h CURSOR WITH HOLD FOR SELECT 7").command_tag, "DECLARE CURSOR");
  try {
    Run("DECLARE x CURSOR WITH HOLD FOR SELECT nope FROM t");
    FAIL() << "expected an error";
  } catch (const SqlError& error) {
    EXPECT_EQ(error.sqlstate(), "42703");
    EXPECT_EQ(error.position(), 39);
  }
  // Without SCROLL rows held whole scroll; NO SCROLL refuses to, as in PostgreSQL.
  EXPECT_EQ(Run("FETCH BACKWARD 1 FROM h").command_tag, "FETCH 0");
  Run("DECLARE n NO SCROLL CURSOR WITH HOLD FOR SELECT 7");
  EXPECT_EQ(Run("FETCH n").command_tag, "FETCH 1");
  EXPECT_EQ(ErrorOf("FETCH BACKWARD 1 FROM n"), "55000");
  EXPECT_EQ(ErrorOf("DECLARE b BINARY CURSOR WITH HOLD FOR SELECT 1"), "0A000");
  EXPECT_EQ(ErrorOf("FETCH 1 FROM"), "42601");
}

TEST_F(SessionCursorsTest, CursorsThroughTheExtendedProtocol) {
  Run("BEGIN");
  auto declare = session_->Prepare("DECLARE c CURSOR FOR SELECT id FROM t ORDER BY id", {});
  EXPECT_FALSE(declare->description.returns_rows);
  EXPECT_EQ(session_->ExecutePrepared(*declare, {}).command_tag, "DECLARE CURSOR");
  auto fetch = session_->Prepare("FETCH FORWARD 4 FROM c", {});
  ASSERT_TRUE(fetch->description.returns_rows);
  EXPECT_EQ(fetch->description.columns.at(0).name, "id");
  EXPECT_EQ(Ids(session_->ExecutePrepared(*fetch, {})), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(Ids(session_->ExecutePrepared(*fetch, {})), (std::vector<int64_t>{5}));
  session_->Sync();
  Run("COMMIT");
  EXPECT_THROW(session_->Prepare("FETCH c", {}), SqlError);
}

TEST_F(SessionCursorsTest, CopyToStdoutCarriesRowsAndFormat) {
  executor::QueryResult copy =
      Run("COPY (SELECT id, name FROM t ORDER BY id) TO STDOUT CSV HEADER");
  EXPECT_EQ(copy.command_tag, "COPY 5");
  ASSERT_TRUE(copy.copy_out.has_value());
  EXPECT_TRUE(copy.copy_out->csv);
  EXPECT_TRUE(copy.copy_out->header);
  EXPECT_EQ(copy.copy_out->delimiter, ',');
  EXPECT_EQ(copy.rows.size(), 5u);
  copy = Run("copy t (name) to stdout with (delimiter '|', null 'none');");
  EXPECT_EQ(copy.command_tag, "COPY 5");
  EXPECT_EQ(copy.columns.size(), 1u);
  EXPECT_EQ(copy.copy_out->null_string, "none");
  EXPECT_EQ(copy.copy_out->delimiter, '|');
  EXPECT_EQ(ErrorOf("COPY t TO STDOUT (DELIMITER 'ab')"), "0A000");
  EXPECT_EQ(ErrorOf("COPY t TO STDOUT CSV DELIMITER '\"'"), "22023");
  EXPECT_EQ(ErrorOf("COPY (SELECT 1; SELECT 2) TO STDOUT"), "42601");
  EXPECT_EQ(ErrorOf("COPY (INSERT INTO t VALUES (9, 'x')) TO STDOUT"), "0A000");
  EXPECT_EQ(ErrorOf("COPY t TO STDOUT; SELECT 1"), "0A000");
  EXPECT_THROW(session_->Prepare("COPY t TO STDOUT", {}), SqlError);
}

TEST_F(SessionCursorsTest, StatementTimeoutIsValidatedAndShown) {
  auto show = [this] { return Run("SHOW statement_timeout").rows.at(0).at(0).string_value(); };
  EXPECT_EQ(show(), "0");
  Run("SET statement_timeout = 1500");
  EXPECT_EQ(show(), "1500ms");
  Run("SET statement_timeout = '2min'");
  EXPECT_EQ(show(), "2min");
  Run("SET statement_timeout = '3600 s'");
  EXPECT_EQ(show(), "1h");
  EXPECT_EQ(ErrorOf("SET statement_timeout = 'later'"), "22023");
  EXPECT_EQ(ErrorOf("SET statement_timeout = -5"), "22023");
  EXPECT_EQ(show(), "1h");
}

TEST(CancellationTest, CancelStopsOnlyTheRunningStatement) {
  Cancellation cancellation;
  cancellation.Cancel();  // Nothing runs: ignored.
  {
    Cancellation::Statement running(&cancellation, std::nullopt);
    EXPECT_NO_THROW(cancellation.ThrowIfCancelled());
    cancellation.Cancel();
    try {
      cancellation.ThrowIfCancelled();
      FAIL() << "expected 57014";
    } catch (const SqlError& error) {
      EXPECT_EQ(error.sqlstate(), "57014");
      EXPECT_STREQ(error.what(), "canceling statement due to user request");
    }
  }
  {
    Cancellation::Statement running(&cancellation, Cancellation::Clock::now());
    try {
      cancellation.ThrowIfCancelled();
      FAIL() << "expected 57014";
    } catch (const SqlError& error) {
      EXPECT_STREQ(error.what(), "canceling statement due to statement timeout");
    }
  }
  Cancellation::Statement next(&cancellation, std::nullopt);
  EXPECT_NO_THROW(cancellation.ThrowIfCancelled());
}

}  // namespace
}  // namespace stave::server
