#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/sql_error.h"
#include "executor/connectors/connectors.h"
#include "executor/database.h"
#include "server/session.h"
#include "tests/test_directory.h"

namespace stave::server {
namespace {

/// Prepared statements of the extended query protocol on a real Session and Database:
/// parameter type inference, execution with values, and the implicit transaction up to Sync.
class SessionPreparedTest : public ::testing::Test {
 protected:
  SessionPreparedTest() {
    executor::RegisterBuiltinConnectors(&connectors_);
    executor::DatabaseOptions options;
    options.data_directory = directory_.path();
    options.checkpoint_interval = std::chrono::milliseconds(0);
    database_ = executor::Database::Open(options, &connectors_);
    session_ = std::make_unique<Session>(database_.get(),
                                         std::vector<std::pair<std::string, std::string>>{});
    Simple("CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT, price DOUBLE PRECISION, day DATE)");
  }

  ~SessionPreparedTest() override {
    session_.reset();
    database_->Shutdown();
  }

  void Simple(const std::string& sql) {
    session_->RunSimpleQuery(sql, [](const executor::QueryResult&) {});
  }

  std::vector<TypeId> ParameterTypes(const std::string& sql,
                                     const std::vector<std::optional<DataType>>& declared = {}) {
    std::shared_ptr<const PreparedStatement> prepared = session_->Prepare(sql, declared);
    std::vector<TypeId> ids;
    for (DataType type : prepared->parameter_types) ids.push_back(type.id);
    return ids;
  }

  executor::QueryResult Execute(const std::string& sql, const std::vector<Value>& values) {
    auto prepared = session_->Prepare(sql, {});
    return session_->ExecutePrepared(*prepared, values);
  }

  int64_t Count() {
    executor::QueryResult result = Execute("SELECT count(*) FROM t", {});
    session_->Sync();
    return result.rows.at(0).at(0).int_value();
  }

  testing::TestDirectory directory_;
  planner::ConnectorRegistry connectors_;
  std::unique_ptr<executor::Database> database_;
  std::unique_ptr<Session> session_;
};

TEST_F(SessionPreparedTest, ParameterTypesComeFromTheirContext) {
  EXPECT_EQ(ParameterTypes("SELECT name FROM t WHERE id = $1"), std::vector{TypeId::kInt64});
  EXPECT_EQ(ParameterTypes("SELECT $1 + 1"), std::vector{TypeId::kInt32});
  EXPECT_EQ(ParameterTypes("SELECT * FROM t LIMIT $1 OFFSET $2"),
            (std::vector{TypeId::kInt64, TypeId::kInt64}));
  EXPECT_EQ(ParameterTypes("INSERT INTO t (day, id) VALUES ($1, $2)"),
            (std::vector{TypeId::kDate, TypeId::kInt64}));
  EXPECT_EQ(ParameterTypes("UPDATE t SET price = $1 WHERE name = $2"),
            (std::vector{TypeId::kFloat64, TypeId::kVarchar}));
  EXPECT_EQ(ParameterTypes("DELETE FROM t WHERE day < $1"), std::vector{TypeId::kDate});
  EXPECT_EQ(ParameterTypes("SELECT CAST($1 AS INT) FROM t"), std::vector{TypeId::kInt32});
  // Nothing decides: text. A parameter used twice has one type, from its first use.
  EXPECT_EQ(ParameterTypes("SELECT $1"), std::vector{TypeId::kVarchar});
  EXPECT_EQ(ParameterTypes("SELECT * FROM t WHERE id = $1 OR price = $1"),
            std::vector{TypeId::kInt64});
  // Declared types win; numbers not written still count.
  EXPECT_EQ(ParameterTypes("SELECT * FROM t WHERE id = $2", {TypeId::kInt16}),
            (std::vector{TypeId::kInt16, TypeId::kInt64}));
  EXPECT_EQ(ParameterTypes("SELECT $1", {std::nullopt, TypeId::kBoolean}),
            (std::vector{TypeId::kVarchar, TypeId::kBoolean}));
}

TEST_F(SessionPreparedTest, DescriptionNamesTheResultColumns) {
  auto prepared = session_->Prepare("SELECT id, name AS label FROM t WHERE id = $1", {});
  ASSERT_TRUE(prepared->description.returns_rows);
  ASSERT_EQ(prepared->description.columns.size(), 2u);
  EXPECT_EQ(prepared->description.columns[1].name, "label");
  EXPECT_EQ(prepared->description.columns[1].type.id, TypeId::kVarchar);
  EXPECT_FALSE(session_->Prepare("INSERT INTO t (id) VALUES ($1)", {})->description.returns_rows);
  EXPECT_TRUE(session_->Prepare("SHOW application_name", {})->description.returns_rows);
  EXPECT_TRUE(session_->Prepare("", {})->empty);
}

TEST_F(SessionPreparedTest, StatementsRunWithTheirValues) {
  auto insert = session_->Prepare("INSERT INTO t (id, name, price) VALUES ($1, $2, $3)", {});
  for (int64_t id = 1; id <= 3; ++id) {
    session_->ExecutePrepared(*insert, {Value::Int(id), Value::String("n" + std::to_string(id)),
                                        id == 3 ? Value::Null() : Value::Double(0.5 * id)});
  }
  session_->Sync();
  executor::QueryResult result = Execute("SELECT name FROM t WHERE id >= $1 ORDER BY id LIMIT $2",
                                         {Value::Int(2), Value::Int(1)});
  ASSERT_EQ(result.rows.size(), 1u);
  EXPECT_EQ(result.rows[0][0].string_value(), "n2");
  result = Execute("SELECT id FROM t WHERE price IS NULL AND name = $1", {Value::String("n3")});
  ASSERT_EQ(result.rows.size(), 1u);
  EXPECT_EQ(result.rows[0][0].int_value(), 3);
  session_->Sync();
}

TEST_F(SessionPreparedTest, WritesUntilSyncAreOneTransaction) {
  auto insert = session_->Prepare("INSERT INTO t (id) VALUES ($1)", {});
  session_->ExecutePrepared(*insert, {Value::Int(1)});
  session_->ExecutePrepared(*insert, {Value::Int(2)});
  EXPECT_EQ(session_->TransactionStatus(), 'I');
  session_->Sync();
  EXPECT_EQ(Count(), 2);
  // An error (here a duplicate key) rolls back the writes before it since the last Sync.
  session_->ExecutePrepared(*insert, {Value::Int(3)});
  EXPECT_THROW(session_->ExecutePrepared(*insert, {Value::Int(1)}), SqlError);
  session_->OnError();
  session_->Sync();
  EXPECT_EQ(Count(), 2);
  // An error reported outside the session (a bad parameter in Bind) does too.
  session_->ExecutePrepared(*insert, {Value::Int(4)});
  session_->OnError();
  session_->Sync();
  EXPECT_EQ(Count(), 2);
}

TEST_F(SessionPreparedTest, ErrorsAsPostgreSql) {
  auto sqlstate_of = [&](const std::string& sql) {
    try {
      session_->Prepare(sql, {});
    } catch (const SqlError& error) {
      return std::string(error.sqlstate());
    }
    return std::string("none");
  };
  EXPECT_EQ(sqlstate_of("SELECT 1; SELECT 2"), "42601");
  EXPECT_EQ(sqlstate_of("SELECT nosuch FROM t WHERE id = $1"), "42703");
  EXPECT_EQ(sqlstate_of("CREATE MATERIALIZED VIEW v AS SELECT * FROM t WHERE id = $1"), "0A000");
  try {
    Simple("SELECT * FROM t WHERE id = $1");
    FAIL() << "a simple query has no parameter values";
  } catch (const SqlError& error) {
    EXPECT_EQ(error.sqlstate(), "42P02");
    EXPECT_STREQ(error.what(), "there is no parameter $1");
  }
}

TEST_F(SessionPreparedTest, ReturningIsDescribedAndUntypedParametersAreText) {
  auto insert =
      session_->Prepare("INSERT INTO t (id, name) VALUES ($1, $2) RETURNING id, name", {});
  ASSERT_TRUE(insert->description.returns_rows);
  ASSERT_EQ(insert->description.columns.size(), 2u);
  EXPECT_EQ(insert->description.columns[0].name, "id");
  EXPECT_EQ(insert->description.columns[1].type.id, TypeId::kVarchar);
  auto remove = session_->Prepare("DELETE FROM t WHERE id = $1 RETURNING *", {});
  EXPECT_EQ(remove->description.columns.size(), 4u);
  auto update = session_->Prepare("UPDATE t SET price = 1 WHERE id = $1", {});
  EXPECT_FALSE(update->description.returns_rows);
  // PostgreSQL describes a parameter nothing types as text (25); one a column types as its
  // column's type.
  auto untyped = session_->Prepare("SELECT $1, name FROM t WHERE name = $2 AND id = $3", {});
  EXPECT_EQ(untyped->parameter_oids, (std::vector<int32_t>{25, 1043, 20}));
}

}  // namespace
}  // namespace stave::server
