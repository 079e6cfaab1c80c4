#include "server/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>

#include "common/failpoint.h"
#include "common/sql_error.h"
#include "common/version.h"
#include "executor/batch/query_memory.h"
#include "executor/plan_builder.h"
#include "parser/copy_statement.h"
#include "parser/parse_cache.h"
#include "parser/parser.h"
#include "server/flag_values.h"
#include "server/statement_timeout.h"

namespace stave::server {
namespace {

struct SettingDefinition {
  std::string_view name;  // As PostgreSQL spells it in ParameterStatus and SHOW ALL.
  std::string_view default_value;
  bool reported;  // Sent as ParameterStatus (GUC_REPORT).
  std::string_view description;
};

constexpr std::array<SettingDefinition, 25> kSettings = {{
    {"checkpoint_interval", "1s", false, "Time between checkpoints (server-wide); 0 = on demand."},
    {"view_state_limit", "0", false,
     "Committed state each view may hold (server-wide, e.g. 64MB); 0 = no limit."},
    {"streaming_parallelism", "default", false,
     "Parallel instances per stage of the materialized views created next; default = one per "
     "worker thread."},
    {"application_name", "", true, "Sets the application name to be reported."},
    {"client_encoding", "UTF8", true, "Sets the client's character set encoding."},
    {"DateStyle", "ISO, MDY", true, "Sets the display format for date and time values."},
    {"default_transaction_read_only", "off", true, "Default read-only status of new transactions."},
    {"in_hot_standby", "off", true, "Shows whether hot standby is currently active."},
    {"integer_datetimes", "on", true, "Shows whether datetimes are integer based."},
    {"IntervalStyle", "postgres", true, "Sets the display format for interval values."},
    {"is_superuser", "on", true, "Shows whether the current user is a superuser."},
    {"server_encoding", "UTF8", true, "Shows the server (database) character set encoding."},
    {"server_version", "15.18 (Stave 0.1.0)", true, "Shows the server version."},
    {"session_authorization", "stave", true, "Sets the session user name."},
    {"standard_conforming_strings", "on", true,
     "Causes '...' strings to treat backslashes literally."},
    {"TimeZone", "UTC", true, "Sets the time zone for displaying and interpreting time stamps."},
    {"extra_float_digits", "1", false,
     "Sets the number of digits displayed for floating-point values."},
    {"search_path", "\"$user\", public", false, "Sets the schema search order for names."},
    {"transaction_isolation", "read committed", false,
     "Sets the current transaction's isolation level."},
    {"default_transaction_isolation", "read committed", false,
     "Sets the isolation level of new transactions."},
    {"statement_timeout", "0", false, "Sets the maximum allowed duration of any statement."},
    {"query_memory_limit", "default", false,
     "Sets the memory an ad-hoc query may hold (e.g. 256MB; 0 = no limit; default = the "
     "server's --query-memory-limit)."},
    {"idle_session_timeout", "0", false,
     "Sets the maximum allowed idle time between queries, when not in a transaction; 0 = off."},
    {"server_version_num", "150018", false, "Shows the server version as an integer."},
    {"max_identifier_length", "63", false, "Shows the maximum identifier length."},
}};

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

const SettingDefinition* FindDefinition(const std::string& lower_name) {
  for (const SettingDefinition& setting : kSettings) {
    if (Lower(setting.name) == lower_name) return &setting;
  }
  return nullptr;
}

// A timeout setting as PostgreSQL reads it: a bare number is milliseconds, else a duration
// with a unit (200ms, 5s, 1min).
std::optional<std::chrono::milliseconds> ParseTimeoutMilliseconds(const std::string& text) {
  if (!text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    if (text.size() > 12) return std::nullopt;
    return std::chrono::milliseconds(std::stoll(text));
  }
  return ParseDuration(text);
}

executor::QueryResult Command(std::string tag) {
  executor::QueryResult result;
  result.command_tag = std::move(tag);
  return result;
}

// COMMIT and ROLLBACK outside a transaction block succeed with PostgreSQL's warning.
executor::QueryResult WarnOutsideBlock(executor::QueryResult result, bool in_block) {
  if (!in_block)
    result.notices.push_back({"WARNING", "25P01", "there is no transaction in progress"});
  return result;
}

// Whether a statement may run inside an implicit transaction with the writes before it
// uncommitted: table writes, transaction control and settings.
bool JoinsImplicitTransaction(parser::StatementKind kind) {
  using Kind = parser::StatementKind;
  return kind == Kind::kInsert || kind == Kind::kUpdate || kind == Kind::kDelete ||
         kind == Kind::kTransaction || kind == Kind::kSetVariable || kind == Kind::kShowVariable ||
         kind == Kind::kResetVariable;
}

}  // namespace

Session::Session(executor::Database* database,
                 const std::vector<std::pair<std::string, std::string>>& startup_parameters)
    : database_(database) {
  for (const SettingDefinition& setting : kSettings) {
    settings_[Lower(setting.name)] = std::string(setting.default_value);
  }
  for (const auto& [name, value] : startup_parameters) {
    std::string lower = Lower(name);
    if (lower == "user") {
      settings_["session_authorization"] = value;
    } else if (FindDefinition(lower) && lower != "server_version" && lower != "server_encoding") {
      try {
        Assign(lower, value, 0);
      } catch (const SqlError&) {
        // A bad start-up value keeps the default, as an unknown start-up parameter does.
      }
    }
  }
  changed_.clear();
}

std::vector<std::pair<std::string, std::string>> Session::StartupParameters() {
  std::vector<std::pair<std::string, std::string>> parameters;
  for (const SettingDefinition& setting : kSettings) {
    if (setting.reported) parameters.emplace_back(setting.name, settings_[Lower(setting.name)]);
  }
  return parameters;
}

std::vector<std::pair<std::string, std::string>> Session::TakeChangedParameters() {
  std::vector<std::pair<std::string, std::string>> parameters;
  for (const std::string& name : changed_) {
    const SettingDefinition* setting = FindDefinition(name);
    if (setting && setting->reported) parameters.emplace_back(setting->name, settings_[name]);
  }
  changed_.clear();
  return parameters;
}

char Session::TransactionStatus() const {
  switch (transaction_) {
    case TransactionState::kIdle:
    case TransactionState::kImplicit:
      return 'I';
    case TransactionState::kInBlock:
      return 'T';
    case TransactionState::kFailed:
      return 'E';
  }
  return 'I';
}

void Session::AttachCancellation(std::shared_ptr<Cancellation> cancellation) {
  cancellation_ = std::move(cancellation);
}

void Session::OnError() {
  if (transaction_ == TransactionState::kInBlock) transaction_ = TransactionState::kFailed;
  // An error in the extended protocol (a bad parameter in Bind, say) ends the implicit
  // transaction of the statements before it: all or nothing.
  if (transaction_ == TransactionState::kImplicit) {
    writes_.reset();
    transaction_ = TransactionState::kIdle;
  }
}

bool Session::RunSimpleQuery(std::string_view sql,
                             const std::function<void(const executor::QueryResult&)>& on_result) {
  // COPY and the cursor statements are read without the grammar; each is a query string
  // of its own.
  if (std::optional<parser::CopyStatement> copy = parser::ParseCopy(sql)) {
    on_result(RunCopy(*copy));
    return true;
  }
  if (std::optional<parser::CursorStatement> cursor = parser::ParseCursorStatement(sql)) {
    on_result(RunCursorStatement(*cursor));
    return true;
  }
  std::shared_ptr<const parser::ParseCache::Statements> statements =
      parser::ParseCache::Shared().Parse(sql);
  if (statements->empty()) return false;
  if (statements->size() > 1 && transaction_ == TransactionState::kIdle) {
    writes_ = std::make_unique<executor::Transaction>();
    transaction_ = TransactionState::kImplicit;
  }
  for (const parser::StatementPtr& statement : *statements) {
    on_result(RunInImplicitTransaction(*statement));
  }
  if (transaction_ == TransactionState::kImplicit) CommitImplicit();
  return true;
}

executor::QueryResult Session::RunInImplicitTransaction(const parser::Statement& statement) {
  try {
    if (transaction_ == TransactionState::kImplicit && !JoinsImplicitTransaction(statement.kind)) {
      // A query does not see a transaction's own writes yet, CHECKPOINT covers committed
      // writes only, and DDL is not transactional: the writes before such a statement
      // commit first, and the ones after it form the next all-or-nothing run.
      CommitImplicit();
      writes_ = std::make_unique<executor::Transaction>();
      transaction_ = TransactionState::kImplicit;
    }
    return RunStatement(statement);
  } catch (...) {
    if (transaction_ == TransactionState::kImplicit) {  // All or nothing.
      writes_.reset();
      transaction_ = TransactionState::kIdle;
    }
    throw;
  }
}

void Session::CommitImplicit() {
  std::unique_ptr<executor::Transaction> writes = std::move(writes_);
  transaction_ = TransactionState::kIdle;
  if (!writes->tables().empty()) database_->Commit(writes.get());
}

executor::QueryResult Session::RunStatement(const parser::Statement& statement) {
  if (transaction_ == TransactionState::kFailed &&
      statement.kind != parser::StatementKind::kTransaction) {
    throw SqlError(
        sqlstate::kInFailedTransaction,
        "current transaction is aborted, commands ignored until end of transaction block");
  }
  switch (statement.kind) {
    case parser::StatementKind::kSetVariable:
      return Set(static_cast<const parser::SetVariableStatement&>(statement));
    case parser::StatementKind::kShowVariable:
      return Show(static_cast<const parser::ShowVariableStatement&>(statement));
    case parser::StatementKind::kResetVariable:
      return Reset(static_cast<const parser::ResetVariableStatement&>(statement));
    case parser::StatementKind::kTransaction:
      return Transaction(static_cast<const parser::TransactionStatement&>(statement));
    default: {
      executor::SessionContext context;
      const std::string& parallelism = settings_["streaming_parallelism"];
      if (parallelism != "default") context.streaming_parallelism = std::stoul(parallelism);
      const std::string& memory = settings_["query_memory_limit"];
      if (memory != "default") context.query_memory_bytes = ParseByteSize(memory);
      std::optional<Cancellation::Clock::time_point> deadline;
      std::chrono::milliseconds timeout = ParseStatementTimeout(settings_["statement_timeout"], 0);
      if (timeout.count() > 0) deadline = Cancellation::Clock::now() + timeout;
      Cancellation::Statement running(cancellation_.get(), deadline);
      context.cancellation = cancellation_.get();
      planner::ScopedSessionValues session_values(this);
      return database_->Execute(statement, writes_.get(), context);
    }
  }
}

void Session::Assign(const std::string& name, const std::string& value, int position, bool system) {
  const SettingDefinition* setting = FindDefinition(name);
  if (!setting && name.find('.') == std::string::npos) {
    throw SqlError(sqlstate::kUndefinedParameter,
                   fmt::format("unrecognized configuration parameter \"{}\"", name), position);
  }
  std::string stored = value;
  if (name == "stave.failpoints") {
    if (!database_->options().enable_failpoints) {
      throw SqlError("42501", "failpoints are disabled", position)
          .WithHint("Start staved with --enable-failpoints (never in production).");
    }
    std::string error;
    if (!failpoint::ArmFromSpec(value, &error)) {
      throw SqlError(sqlstate::kInvalidParameterValue, error, position);
    }
  } else if (name == "checkpoint_interval") {
    std::optional<std::chrono::milliseconds> interval = ParseDuration(value);
    if (!interval) {
      throw SqlError(
          sqlstate::kInvalidParameterValue,
          fmt::format("invalid value for parameter \"checkpoint_interval\": \"{}\"", value),
          position)
          .WithHint("Use a duration such as 1s or 200ms; 0 checkpoints only on demand.");
    }
    // A server-wide setting: every session and view shares one checkpoint schedule.
    database_->SetCheckpointInterval(*interval, system);
    stored = value;
  } else if (name == "view_state_limit") {
    std::optional<size_t> bytes = ParseByteSize(value);
    if (!bytes) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("invalid value for parameter \"view_state_limit\": \"{}\"", value),
                     position)
          .WithHint("Use a size such as 64MB or 2GB; 0 means no limit.");
    }
    // Server-wide, as checkpoint_interval: a view's limit is the same for every session.
    database_->SetViewStateLimit(*bytes, system);
    stored = executor::FormatByteSize(*bytes);
  } else if (name == "streaming_parallelism") {
    stored = Lower(value);
    if (stored != "default" && stored != "0") {
      char* end = nullptr;
      unsigned long parallelism = std::strtoul(stored.c_str(), &end, 10);
      if (stored.empty() || *end != '\0' || parallelism < 1 ||
          parallelism > executor::kMaxParallelism) {
        throw SqlError(
            sqlstate::kInvalidParameterValue,
            fmt::format("invalid value for parameter \"streaming_parallelism\": \"{}\"", value),
            position)
            .WithHint(fmt::format("Use a number from 1 to {}, or default (one per worker thread).",
                                  executor::kMaxParallelism));
      }
      stored = std::to_string(parallelism);
    } else {
      stored = "default";
    }
  } else if (name == "statement_timeout") {
    stored = FormatStatementTimeout(ParseStatementTimeout(value, position));
  } else if (name == "query_memory_limit") {
    std::optional<size_t> bytes = ParseByteSize(value);
    if (Lower(value) == "default") {
      stored = "default";
    } else if (!bytes) {
      throw SqlError(
          sqlstate::kInvalidParameterValue,
          fmt::format("invalid value for parameter \"query_memory_limit\": \"{}\"", value),
          position)
          .WithHint("Use a size such as 256MB or 2GB; 0 means no limit.");
    } else {
      stored = executor::FormatByteSize(*bytes);
    }
  } else if (name == "idle_session_timeout") {
    std::optional<std::chrono::milliseconds> timeout = ParseTimeoutMilliseconds(value);
    if (!timeout) {
      throw SqlError(
          sqlstate::kInvalidParameterValue,
          fmt::format("invalid value for parameter \"idle_session_timeout\": \"{}\"", value),
          position)
          .WithHint("Use milliseconds (5000) or a duration such as 5s or 1min; 0 turns it off.");
    }
    idle_session_timeout_ = *timeout;
  } else if (name == "client_encoding") {
    std::string upper = value;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper != "UTF8" && upper != "UTF-8" && upper != "UNICODE") {
      throw SqlError(
          sqlstate::kFeatureNotSupported,
          fmt::format("client encoding \"{}\" is not supported; Stave speaks UTF8", value),
          position);
    }
    stored = "UTF8";
  } else if (name == "server_version" || name == "server_encoding" || name == "is_superuser" ||
             name == "integer_datetimes" || name == "in_hot_standby" ||
             name == "server_version_num" || name == "max_identifier_length") {
    throw SqlError("55P02", fmt::format("parameter \"{}\" cannot be changed", name), position);
  }
  settings_[name] = stored;
  changed_.push_back(name);
}

executor::QueryResult Session::Set(const parser::SetVariableStatement& set) {
  std::string name = Lower(set.name);
  if (set.system && name != "checkpoint_interval" && name != "view_state_limit") {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("ALTER SYSTEM SET \"{}\" is not supported", name), set.position)
        .WithHint("ALTER SYSTEM sets server-wide settings: checkpoint_interval, view_state_limit.");
  }
  if (set.is_default) {
    const SettingDefinition* setting = FindDefinition(name);
    Assign(name, setting ? std::string(setting->default_value) : "", set.position, set.system);
    return Command(set.system ? "ALTER SYSTEM" : "SET");
  }
  std::string value;
  for (size_t i = 0; i < set.values.size(); ++i) {
    if (i > 0) value += ", ";
    value += set.values[i];
  }
  Assign(name, value, set.position, set.system);
  return Command(set.system ? "ALTER SYSTEM" : "SET");
}

executor::QueryResult Session::Show(const parser::ShowVariableStatement& show) {
  executor::QueryResult result;
  result.returns_rows = true;
  result.command_tag = "SHOW";
  std::string name = Lower(show.name);
  if (name == "all") {
    result.columns = {{"name", TypeId::kVarchar},
                      {"setting", TypeId::kVarchar},
                      {"description", TypeId::kVarchar}};
    for (const SettingDefinition& setting : kSettings) {
      result.rows.push_back({Value::String(std::string(setting.name)),
                             Value::String(settings_[Lower(setting.name)]),
                             Value::String(std::string(setting.description))});
    }
    return result;
  }
  if (name == "checkpoint_interval") {
    settings_[name] = fmt::format("{}ms", database_->engine()->checkpoint_interval().count());
  }
  if (name == "view_state_limit") {
    settings_[name] = executor::FormatByteSize(database_->engine()->view_state_limit());
  }
  auto it = settings_.find(name);
  if (it == settings_.end()) {
    throw SqlError(sqlstate::kUndefinedParameter,
                   fmt::format("unrecognized configuration parameter \"{}\"", show.name),
                   show.position);
  }
  const SettingDefinition* setting = FindDefinition(name);
  result.columns = {{setting ? Lower(setting->name) : name, TypeId::kVarchar}};
  result.rows.push_back({Value::String(it->second)});
  return result;
}

executor::QueryResult Session::Reset(const parser::ResetVariableStatement& reset) {
  std::string name = Lower(reset.name);
  if (name == "all") {
    for (const SettingDefinition& setting : kSettings) {
      std::string lower = Lower(setting.name);
      if (settings_[lower] != setting.default_value && lower != "session_authorization") {
        settings_[lower] = std::string(setting.default_value);
        changed_.push_back(lower);
      }
    }
    return Command("RESET");
  }
  const SettingDefinition* setting = FindDefinition(name);
  if (!setting) {
    if (name.find('.') != std::string::npos) {
      settings_.erase(name);
      return Command("RESET");
    }
    throw SqlError(sqlstate::kUndefinedParameter,
                   fmt::format("unrecognized configuration parameter \"{}\"", reset.name),
                   reset.position);
  }
  Assign(name, std::string(setting->default_value), reset.position);
  return Command("RESET");
}

executor::QueryResult Session::Transaction(const parser::TransactionStatement& statement) {
  switch (statement.transaction_kind) {
    case parser::TransactionKind::kBegin: {
      if (transaction_ == TransactionState::kFailed) {
        throw SqlError(
            sqlstate::kInFailedTransaction,
            "current transaction is aborted, commands ignored until end of transaction block");
      }
      executor::QueryResult begin = Command("BEGIN");
      if (transaction_ == TransactionState::kInBlock) {
        begin.notices.push_back({"WARNING", "25001", "there is already a transaction in progress"});
      }
      // In a multi-statement string, BEGIN turns the implicit transaction into a block that
      // the statements before it belong to.
      if (transaction_ == TransactionState::kIdle) {
        writes_ = std::make_unique<executor::Transaction>();
      }
      transaction_ = TransactionState::kInBlock;
      return begin;
    }
    case parser::TransactionKind::kCommit: {
      bool failed = transaction_ == TransactionState::kFailed;
      // PostgreSQL warns outside any block; an implicit one (statements of one query
      // string) ends quietly.
      bool in_block = transaction_ != TransactionState::kIdle;
      std::unique_ptr<executor::Transaction> writes = std::move(writes_);
      transaction_ = TransactionState::kIdle;
      CloseCursorsAtTransactionEnd(!failed);
      if (failed) return Command("ROLLBACK");
      if (writes) database_->Commit(writes.get());  // On error the transaction is over too.
      return WarnOutsideBlock(Command("COMMIT"), in_block);
    }
    case parser::TransactionKind::kRollback: {
      bool in_block = transaction_ != TransactionState::kIdle;
      writes_.reset();
      transaction_ = TransactionState::kIdle;
      CloseCursorsAtTransactionEnd(false);
      return WarnOutsideBlock(Command("ROLLBACK"), in_block);
    }
  }
  return Command("BEGIN");
}

std::string Session::UserName() const {
  auto it = settings_.find("session_authorization");
  return it == settings_.end() ? std::string("stave") : it->second;
}

std::optional<std::string> Session::FindSetting(const std::string& name) const {
  std::string lower = Lower(name);
  if (lower == "checkpoint_interval") {
    return fmt::format("{}ms", database_->engine()->checkpoint_interval().count());
  }
  auto it = settings_.find(lower);
  if (it == settings_.end()) return std::nullopt;
  return it->second;
}

std::vector<planner::SessionValues::Setting> Session::Settings() const {
  std::vector<Setting> settings;
  for (const SettingDefinition& definition : kSettings) {
    settings.push_back(
        {std::string(definition.name), FindSetting(std::string(definition.name)).value_or(""),
         std::string(definition.description), std::string(definition.default_value)});
  }
  return settings;
}

std::string Session::SetConfig(const std::string& name, const std::optional<std::string>& value,
                               bool is_local, int position) {
  // SET LOCAL is taken as SET, as the SET statement takes it (docs/sql.md, "Sessions").
  static_cast<void>(is_local);
  const SettingDefinition* definition = FindDefinition(name);
  if (value) {
    Assign(name, *value, position);
  } else {
    Assign(name, definition ? std::string(definition->default_value) : "", position);
  }
  return FindSetting(name).value_or("");
}

}  // namespace stave::server
