#pragma once

#include <cctype>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/data_type.h"
#include "common/sql_error.h"
#include "common/value.h"
#include "executor/query_result.h"
#include "server/query_session.h"

namespace stave::server::testing {

/// A QuerySession for protocol tests that answers a fixed repertoire of statements, so the
/// server can be tested without the parser, planner and executor. Statements are split on
/// ';' (no quoting rules) and matched case-sensitively after trimming:
///   SELECT 1                  one int4 column "?column?" with 1, tag "SELECT 1"
///   SELECT 'a'                one text column with "a"
///   SELECT types              one row of every type, with a NULL in the last column
///   SELECT rows N             N rows of (n bigint, s varchar)
///   SELECT bad row            a row whose value does not match its column type
///   COPY rows N               the rows of SELECT rows N as COPY TO STDOUT CSV HEADER
///   NOTICE                    tag "NOTICE" with a NOTICE and a WARNING
///   BEGIN / COMMIT / ROLLBACK transaction status changes, as PostgreSQL
///   SET application_name = V  reported back as a changed parameter
///   THROW                     throws std::runtime_error("boom")
///   SLEEP MS                  sleeps MS milliseconds, tag "SLEEP"
/// Anything else is a syntax error at its first word, with its position in the query.
/// In a failed transaction block every statement but COMMIT/ROLLBACK fails with 25P02.
///
/// Prepared statements (extended protocol) take the same statements, plus
///   SELECT $1                 one column of $1's type (declared, else text) with its value
///   SELECT $1, $2             two columns: $1 (declared, else int4) and $2 (else text)
/// A SELECT is described by running it; other statements describe as returning no rows.
/// More than one statement is 42601. Sync() counts the syncs.
class ScriptedQuerySession : public QuerySession {
 public:
  explicit ScriptedQuerySession(std::vector<std::pair<std::string, std::string>> startup)
      : startup_(std::move(startup)) {}

  std::vector<std::pair<std::string, std::string>> StartupParameters() override {
    std::string application_name;
    for (const auto& [name, value] : startup_) {
      if (name == "application_name") application_name = value;
    }
    return {{"application_name", application_name},
            {"client_encoding", "UTF8"},
            {"DateStyle", "ISO, MDY"},
            {"integer_datetimes", "on"},
            {"server_encoding", "UTF8"},
            {"server_version", "15.0 (Stave)"},
            {"standard_conforming_strings", "on"},
            {"TimeZone", "UTC"}};
  }

  bool RunSimpleQuery(std::string_view sql,
                      const std::function<void(const executor::QueryResult&)>& on_result) override {
    bool any = false;
    size_t begin = 0;
    while (begin <= sql.size()) {
      size_t end = sql.find(';', begin);
      if (end == std::string_view::npos) end = sql.size();
      std::string_view statement = sql.substr(begin, end - begin);
      size_t offset = begin;
      while (!statement.empty() && std::isspace(static_cast<unsigned char>(statement.front()))) {
        statement.remove_prefix(1);
        ++offset;
      }
      while (!statement.empty() && std::isspace(static_cast<unsigned char>(statement.back()))) {
        statement.remove_suffix(1);
      }
      if (!statement.empty()) {
        any = true;
        on_result(Run(statement, static_cast<int>(offset) + 1));
      }
      begin = end + 1;
    }
    return any;
  }

  std::shared_ptr<const PreparedStatement> Prepare(
      std::string_view sql, const std::vector<std::optional<DataType>>& types) override {
    auto prepared = std::make_shared<ScriptedPreparedStatement>();
    std::string text(sql);
    while (!text.empty() &&
           (std::isspace(static_cast<unsigned char>(text.back())) || text.back() == ';')) {
      text.pop_back();
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
      text.erase(0, 1);
    }
    if (text.find(';') != std::string::npos) {
      throw SqlError(sqlstate::kSyntaxError,
                     "cannot insert multiple commands into a prepared statement");
    }
    prepared->text = text;
    prepared->empty = text.empty();
    auto declared = [&](size_t i, DataType otherwise) {
      return i < types.size() && types[i] ? *types[i] : otherwise;
    };
    if (text == "SELECT $1") {
      prepared->parameter_types = {declared(0, TypeId::kVarchar)};
      prepared->description.returns_rows = true;
      prepared->description.columns = {{"?column?", prepared->parameter_types[0]}};
    } else if (text == "SELECT $1, $2") {
      prepared->parameter_types = {declared(0, TypeId::kInt32), declared(1, TypeId::kVarchar)};
      prepared->description.returns_rows = true;
      prepared->description.columns = {{"a", prepared->parameter_types[0]},
                                       {"b", prepared->parameter_types[1]}};
    } else if (text.starts_with("SELECT")) {
      executor::QueryResult result = Run(text, 1);
      prepared->description.returns_rows = result.returns_rows;
      prepared->description.columns = result.columns;
    }
    return prepared;
  }

  executor::QueryResult ExecutePrepared(const PreparedStatement& statement,
                                        const std::vector<Value>& parameters) override {
    const auto& prepared = static_cast<const ScriptedPreparedStatement&>(statement);
    if (prepared.parameter_types.empty()) return Run(prepared.text, 1);
    if (status_ == 'E') {
      throw SqlError(sqlstate::kInFailedTransaction,
                     "current transaction is aborted, commands ignored until end of "
                     "transaction block");
    }
    executor::QueryResult result = prepared.description;
    result.rows = {parameters};
    result.command_tag = "SELECT 1";
    return result;
  }

  void Sync() override { ++syncs_; }
  int syncs() const { return syncs_; }

  std::vector<std::pair<std::string, std::string>> TakeChangedParameters() override {
    return std::exchange(changed_, {});
  }

  char TransactionStatus() const override { return status_; }

  void OnError() override {
    if (status_ == 'T') status_ = 'E';
  }

 private:
  executor::QueryResult Run(std::string_view statement, int position) {
    executor::QueryResult result;
    if (statement == "COMMIT" || statement == "ROLLBACK") {
      result.command_tag = status_ == 'E' ? "ROLLBACK" : std::string(statement);
      status_ = 'I';
      return result;
    }
    if (status_ == 'E') {
      throw SqlError(sqlstate::kInFailedTransaction,
                     "current transaction is aborted, commands ignored until end of transaction "
                     "block");
    }
    if (statement == "BEGIN") {
      status_ = 'T';
      result.command_tag = "BEGIN";
      return result;
    }
    if (statement == "SELECT 1") {
      result.returns_rows = true;
      result.columns = {{"?column?", TypeId::kInt32}};
      result.rows = {{Value::Int(1)}};
      result.command_tag = "SELECT 1";
      return result;
    }
    if (statement == "SELECT 'a'") {
      result.returns_rows = true;
      result.columns = {{"?column?", TypeId::kUnknown}};
      result.rows = {{Value::String("a")}};
      result.command_tag = "SELECT 1";
      return result;
    }
    if (statement == "SELECT types") {
      result.returns_rows = true;
      result.columns = {{"b", TypeId::kBoolean}, {"i", TypeId::kInt16},   {"n", TypeId::kInt64},
                        {"f", TypeId::kFloat64}, {"s", TypeId::kVarchar}, {"z", TypeId::kInt32}};
      result.rows = {{Value::Boolean(true), Value::Int(-7), Value::Int(9000000000),
                      Value::Double(1.5), Value::String("h\xC3\xA9llo"), Value::Null()}};
      result.command_tag = "SELECT 1";
      return result;
    }
    if (statement.starts_with("SELECT rows ")) {
      int count = std::stoi(std::string(statement.substr(12)));
      result.returns_rows = true;
      result.columns = {{"n", TypeId::kInt64}, {"s", TypeId::kVarchar}};
      for (int i = 0; i < count; ++i) {
        result.rows.push_back({Value::Int(i), Value::String("row " + std::to_string(i))});
      }
      result.command_tag = "SELECT " + std::to_string(count);
      return result;
    }
    if (statement.starts_with("COPY rows ")) {
      result = Run("SELECT rows " + std::string(statement.substr(10)), position);
      result.returns_rows = false;
      result.copy_out.emplace();
      result.copy_out->csv = true;
      result.copy_out->header = true;
      result.copy_out->delimiter = ',';
      result.copy_out->null_string = "";
      result.command_tag = "COPY " + std::to_string(result.rows.size());
      return result;
    }
    if (statement == "NOTICE") {
      result.notices = {{"NOTICE", "00000", "table \"x\" does not exist, skipping"},
                        {"WARNING", "25P01", "there is no transaction in progress"}};
      result.command_tag = "NOTICE";
      return result;
    }
    if (statement == "SELECT bad row") {
      result.returns_rows = true;
      result.columns = {{"n", TypeId::kInt64}};
      result.rows = {{Value::String("not a number")}};
      result.command_tag = "SELECT 1";
      return result;
    }
    if (statement.starts_with("SET application_name = ")) {
      changed_.emplace_back("application_name", std::string(statement.substr(23)));
      result.command_tag = "SET";
      return result;
    }
    if (statement == "THROW") throw std::runtime_error("boom");
    if (statement.starts_with("SLEEP ")) {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::stoi(std::string(statement.substr(6)))));
      result.command_tag = "SLEEP";
      return result;
    }
    // A syntax error at the second word if there is one (as "syntax error at or near"
    // points at the token the parser choked on), else at the first.
    size_t space = statement.find(' ');
    size_t at = space == std::string_view::npos ? 0 : space + 1;
    std::string_view token = statement.substr(at, statement.find(' ', at) - at);
    throw SqlError(sqlstate::kSyntaxError, "syntax error at or near \"" + std::string(token) + "\"",
                   position + static_cast<int>(at));
  }

  struct ScriptedPreparedStatement : PreparedStatement {
    std::string text;
  };

  std::vector<std::pair<std::string, std::string>> startup_;
  std::vector<std::pair<std::string, std::string>> changed_;
  char status_ = 'I';
  int syncs_ = 0;
};

/// A thread-safe QuerySessionFactory for ScriptedQuerySession that remembers the startup
/// parameters of the last connection.
class ScriptedSessionFactory {
 public:
  QuerySessionFactory AsFactory() {
    return [this](const std::vector<std::pair<std::string, std::string>>& parameters) {
      std::lock_guard<std::mutex> lock(mutex_);
      last_parameters_ = parameters;
      ++sessions_created_;
      return std::make_unique<ScriptedQuerySession>(parameters);
    };
  }

  std::vector<std::pair<std::string, std::string>> last_parameters() {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_parameters_;
  }

  int sessions_created() {
    std::lock_guard<std::mutex> lock(mutex_);
    return sessions_created_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::string>> last_parameters_;
  int sessions_created_ = 0;
};

}  // namespace stave::server::testing
