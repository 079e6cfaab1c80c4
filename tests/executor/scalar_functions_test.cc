// Conditional, string and math functions through SQL, against PostgreSQL 15's answers (each
// expected value below is what PostgreSQL returns for the same expression).
#include <gtest/gtest.h>

#include "common/sql_error.h"
#include "executor/connectors/connectors.h"
#include "executor/database.h"
#include "parser/parser.h"
#include "tests/test_directory.h"

namespace stave::executor {
namespace {

class ScalarFunctionsTest : public ::testing::Test {
 protected:
  ScalarFunctionsTest() {
    RegisterBuiltinConnectors(&connectors_);
    DatabaseOptions options;
    options.data_directory = directory_.path();
    database_ = Database::Open(options, &connectors_);
  }

  // The one value `SELECT expression` gives, as text ("NULL" for NULL).
  std::string Eval(const std::string& expression) {
    QueryResult result;
    for (const auto& statement : parser::Parse("SELECT " + expression))
      result = database_->Execute(*statement);
    EXPECT_EQ(result.rows.size(), 1u);
    const Value& value = result.rows.at(0).at(0);
    return value.is_null() ? "NULL" : value.ToText(result.columns[0].type);
  }

  // The SQLSTATE `SELECT expression` fails with, or "ok".
  std::string ErrorOf(const std::string& expression) {
    try {
      Eval(expression);
    } catch (const SqlError& error) {
      return error.sqlstate();
    }
    return "ok";
  }

  testing::TestDirectory directory_;
  planner::ConnectorRegistry connectors_;
  std::unique_ptr<Database> database_;
};

TEST_F(ScalarFunctionsTest, Conditional) {
  EXPECT_EQ(Eval("nullif(1, 1)"), "NULL");
  EXPECT_EQ(Eval("nullif(1, 2)"), "1");
  EXPECT_EQ(Eval("nullif('a', 'b')"), "a");
  EXPECT_EQ(Eval("nullif(NULL, 1)"), "NULL");
  EXPECT_EQ(Eval("greatest(1, 5, 3)"), "5");
  EXPECT_EQ(Eval("greatest(1, NULL, 3)"), "3");
  EXPECT_EQ(Eval("least(2, 1.5)"), "1.5");
  EXPECT_EQ(Eval("least(NULL, NULL)"), "NULL");
  EXPECT_EQ(Eval("greatest('apple', 'pear')"), "pear");
  EXPECT_EQ(ErrorOf("greatest(1, 'x' || 'y')"), "42804");
  EXPECT_EQ(ErrorOf("nullif(1)"), "42883");
}

TEST_F(ScalarFunctionsTest, Strings) {
  EXPECT_EQ(Eval("substr('hello', 2, 3)"), "ell");
  EXPECT_EQ(Eval("substr('hello', 0, 3)"), "he");
  EXPECT_EQ(Eval("substr('hello', 2)"), "ello");
  EXPECT_EQ(Eval("substr('hello', 10)"), "");
  EXPECT_EQ(Eval("substring('héllo', 2, 2)"), "él");
  EXPECT_EQ(ErrorOf("substr('hello', 1, -1)"), "22011");
  EXPECT_EQ(Eval("concat('a', NULL, 1, 'b')"), "a1b");
  EXPECT_EQ(Eval("trim('  x  ')"), "x");
  EXPECT_EQ(Eval("btrim('xxhixx', 'x')"), "hi");
  EXPECT_EQ(Eval("ltrim('  x  ')"), "x  ");
  EXPECT_EQ(Eval("rtrim('xyzzy', 'yz')"), "x");
  EXPECT_EQ(Eval("replace('abcabc', 'b', 'XY')"), "aXYcaXYc");
  EXPECT_EQ(Eval("replace('abc', '', 'X')"), "abc");
  EXPECT_EQ(Eval("split_part('a,b,c', ',', 2)"), "b");
  EXPECT_EQ(Eval("split_part('a,b,c', ',', -1)"), "c");
  EXPECT_EQ(Eval("split_part('a,b,c', ',', 4)"), "");
  EXPECT_EQ(ErrorOf("split_part('a,b', ',', 0)"), "22023");
  EXPECT_EQ(Eval("strpos('héllo', 'l')"), "3");
  EXPECT_EQ(Eval("strpos('hello', 'z')"), "0");
  EXPECT_EQ(Eval("left('hello', 2)"), "he");
  EXPECT_EQ(Eval("left('hello', -2)"), "hel");
  EXPECT_EQ(Eval("right('hello', 2)"), "lo");
  EXPECT_EQ(Eval("right('hello', -2)"), "llo");
  EXPECT_EQ(Eval("repeat('ab', 3)"), "ababab");
  EXPECT_EQ(Eval("repeat('ab', -1)"), "");
  EXPECT_EQ(ErrorOf("repeat('ab', 2000000000)"), "54000");
  EXPECT_EQ(Eval("reverse('héllo')"), "olléh");
  EXPECT_EQ(Eval("starts_with('hello', 'he')"), "t");
  EXPECT_EQ(Eval("lpad('7', 3, '0')"), "007");
  EXPECT_EQ(Eval("lpad('hello', 2)"), "he");
  EXPECT_EQ(Eval("rpad('ab', 5, 'xy')"), "abxyx");
  EXPECT_EQ(Eval("upper(substr(NULL, 1))"), "NULL");
  EXPECT_EQ(ErrorOf("substr(1, 2)"), "42883");
}

TEST_F(ScalarFunctionsTest, RegularExpressions) {
  EXPECT_EQ(Eval("regexp_replace('foobarbaz', 'b..', 'X')"), "fooXbaz");
  EXPECT_EQ(Eval("regexp_replace('foobarbaz', 'b..', 'X', 'g')"), "fooXX");
  EXPECT_EQ(Eval("regexp_replace('foobarbaz', 'b(.)(.)', '[\\2\\1]', 'g')"), "foo[ra][za]");
  EXPECT_EQ(Eval("regexp_replace('Hello', 'h', 'J', 'i')"), "Jello");
  EXPECT_EQ(Eval("regexp_replace('abc', 'b', '<\\&>')"), "a<b>c");
  EXPECT_EQ(ErrorOf("regexp_replace('abc', '(', 'x')"), "2201B");
  EXPECT_EQ(ErrorOf("regexp_replace('abc', 'b', 'x', 'z')"), "22023");
}

TEST_F(ScalarFunctionsTest, Math) {
  // Decimal literals are numeric: round(2.5) is 3 (half away from zero), while
  // round(2.5::float8) is 2 (half to even).
  EXPECT_EQ(Eval("round(2.5)"), "3");
  EXPECT_EQ(Eval("round(2.5::float8)"), "2");
  EXPECT_EQ(Eval("round(2.345, 2)"), "2.35");
  EXPECT_EQ(Eval("trunc(-2.345, 1)"), "-2.3");
  EXPECT_EQ(ErrorOf("round(2.5::float8, 1)"), "42883");
  EXPECT_EQ(Eval("round(-3.7)"), "-4");
  EXPECT_EQ(Eval("floor(-1.5)"), "-2");
  EXPECT_EQ(Eval("ceil(1.2)"), "2");
  EXPECT_EQ(Eval("ceiling(-1.2)"), "-1");
  EXPECT_EQ(Eval("trunc(-1.7)"), "-1");
  EXPECT_EQ(Eval("sqrt(16)"), "4");
  EXPECT_EQ(ErrorOf("sqrt(-1)"), "2201F");
  EXPECT_EQ(Eval("power(2, 10)"), "1024");
  EXPECT_EQ(ErrorOf("power(0, -1)"), "2201F");
  EXPECT_EQ(ErrorOf("power(-8, 0.5)"), "2201F");
  EXPECT_EQ(ErrorOf("power(10, 400)"), "22003");
  EXPECT_EQ(Eval("exp(0)"), "1");
  EXPECT_EQ(ErrorOf("exp(1000)"), "22003");
  EXPECT_EQ(ErrorOf("exp(-1000)"), "22003");
  EXPECT_EQ(Eval("ln(1)"), "0");
  EXPECT_EQ(ErrorOf("ln(0)"), "2201E");
  EXPECT_EQ(ErrorOf("log(-1)"), "2201E");
  EXPECT_EQ(Eval("log(1000)"), "3");
  EXPECT_EQ(Eval("sign(-4)"), "-1");
  EXPECT_EQ(Eval("mod(7, 3)"), "1");
  EXPECT_EQ(Eval("mod(-7, 3)"), "-1");
  EXPECT_EQ(ErrorOf("mod(7, 0)"), "22012");
  EXPECT_EQ(Eval("mod(7.5, 2)"), "1.5");
  EXPECT_EQ(ErrorOf("mod(7.5::float8, 2)"), "42883");
  EXPECT_EQ(Eval("round(NULL)"), "NULL");
  EXPECT_EQ(ErrorOf("sqrt('x' || 'y')"), "42883");
}

TEST_F(ScalarFunctionsTest, OverColumnsInAView) {
  for (const auto& statement : parser::Parse(
           "CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR, score DOUBLE PRECISION);"
           "INSERT INTO people VALUES (1, '  Ann ', 2.25), (2, NULL, -4), (3, 'bob', NULL);"
           "CREATE MATERIALIZED VIEW shaped AS SELECT id, upper(trim(name)) AS name, "
           "coalesce(round(score), 0) AS score, greatest(id, 2) AS g FROM people;"
           "CHECKPOINT")) {
    database_->Execute(*statement);
  }
  QueryResult result;
  for (const auto& statement : parser::Parse("SELECT * FROM shaped ORDER BY id"))
    result = database_->Execute(*statement);
  std::vector<std::string> rows;
  for (const auto& row : result.rows) {
    std::string text;
    for (size_t c = 0; c < row.size(); ++c)
      text += (c ? "|" : "") + (row[c].is_null() ? "NULL" : row[c].ToText(result.columns[c].type));
    rows.push_back(text);
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"1|ANN|2|2", "2|NULL|-4|2", "3|BOB|0|3"}));
}

}  // namespace
}  // namespace stave::executor
