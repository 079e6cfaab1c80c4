#include "executor/connectors/postgres/postgres_sink.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <pqxx/pqxx>
#include <pqxx/tablewriter>
#include <set>

#include "common/failpoint.h"
#include "common/redact.h"
#include "common/sql_error.h"
#include "executor/connectors/connectors.h"

namespace stave::executor {
namespace {

constexpr std::string_view kProgressTable = "stave_sink_progress";
// libpq settings of every connection, in URL form: a bounded wait for a server that does
// not answer, and TCP keepalives, so that a target that vanished mid-statement is noticed
// in about half a minute instead of never (a prepare at a barrier must not hang).
constexpr std::string_view kConnectionSettings =
    "connect_timeout=5&application_name=stave&keepalives=1&keepalives_idle=10&"
    "keepalives_interval=5&keepalives_count=3";

// Rows per upsert or delete statement (one array per column).
constexpr size_t kMaxRowsPerStatement = 10000;

SqlError OptionError(std::string_view option, const std::string& message) {
  return SqlError(sqlstate::kInvalidParameterValue,
                  fmt::format("postgres sink option '{}': {}", option, message));
}

// A libpq keyword value, quoted: 'it''s' style is not libpq's; it wants \' and \\.
std::string QuoteConnectionValue(const std::string& value) {
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "'";
}

// The PostgreSQL type a column of `type` gets in a table the sink creates: `text` for
// character data (unbounded, as Stave's varchar is), else the type's own name.
std::string PostgresTypeName(DataType type) {
  if (type.IsArray() && type.ElementType().IsString()) return "text[]";
  return type.IsString() || type.id == TypeId::kUnknown ? "text" : type.NameWithTypmod();
}

// Whether an existing target column of PostgreSQL type `target` (format_type's spelling)
// takes every value of `type` without loss.
bool AcceptsType(const std::string& target, DataType type) {
  auto starts = [&](std::string_view prefix) { return target.rfind(prefix, 0) == 0; };
  switch (type.id) {
    case TypeId::kBoolean:
      return target == "boolean";
    case TypeId::kInt16:
      return target == "smallint" || target == "integer" || target == "bigint" || starts("numeric");
    case TypeId::kInt32:
      return target == "integer" || target == "bigint" || starts("numeric");
    case TypeId::kInt64:
      return target == "bigint" || starts("numeric");
    case TypeId::kFloat32:
      return target == "real" || target == "double precision";
    case TypeId::kFloat64:
      return target == "double precision";
    case TypeId::kVarchar:
    case TypeId::kUnknown:
      return target == "text" || starts("character varying") || starts("character(");
    case TypeId::kDate:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kInterval:
      // Values go as text in PostgreSQL's own output format (timestamptz with its +00), so
      // only the same type takes them without loss.
      return target == type.Name();
    case TypeId::kNumeric:
      // Unconstrained numeric takes every value; numeric(p, s) only the same precision.
      return target == "numeric" || target == type.NameWithTypmod();
    case TypeId::kBytea:
      return target == "bytea";
    case TypeId::kJsonb:
      return target == "jsonb";
    case TypeId::kArray:
      // Arrays go in their text form, which only an array of the same element type takes;
      // varchar[] also goes to text[].
      return target == type.Name() || (type.ElementType().IsString() &&
                                       (target == "text[]" || target == "character varying[]"));
  }
  return false;
}

// One field of COPY's text format: \N for NULL, backslash escapes for the separators.
void AppendCopyField(const std::optional<std::string>& text, std::string* line) {
  if (!text) {
    *line += "\\N";
    return;
  }
  for (char c : *text) {
    switch (c) {
      case '\\':
        *line += "\\\\";
        break;
      case '\n':
        *line += "\\n";
        break;
      case '\r':
        *line += "\\r";
        break;
      case '\t':
        *line += "\\t";
        break;
      default:
        *line += c;
    }
  }
}

// One element of an array literal ({"a","b c",NULL}): quoted, with \ and " escaped.
void AppendArrayElement(const std::optional<std::string>& text, std::string* array) {
  if (!text) {
    *array += "NULL";
    return;
  }
  *array += '"';
  for (char c : *text) {
    if (c == '"' || c == '\\') *array += '\\';
    *array += c;
  }
  *array += '"';
}

// Whether a value of `type` is written as its plain integer (no Value needed, no escaping).
bool IsPlainInteger(const DataType& type) {
  return type.id == TypeId::kInt64 || type.id == TypeId::kInt32 || type.id == TypeId::kInt16;
}

// Row `row` of `column` as PostgreSQL reads a value of `type` in text, nullopt for NULL.
std::optional<std::string> FieldText(const Column& column, size_t row, const DataType& type) {
  if (column.IsNull(row)) return std::nullopt;
  if (IsPlainInteger(type)) return std::to_string(column.ints[row]);
  return column.GetValue(row).ToText(type);
}

}  // namespace

namespace {

// The SQLSTATE of a server error. libpqxx 6 leaves sqlstate() empty for some error classes
// (insufficient_privilege), so the exception's class tells the state's class then.
std::string SqlStateOf(const pqxx::sql_error& error) {
  if (!error.sqlstate().empty()) return error.sqlstate();
  if (dynamic_cast<const pqxx::insufficient_privilege*>(&error)) return "42501";
  if (dynamic_cast<const pqxx::undefined_table*>(&error)) return "42P01";
  if (dynamic_cast<const pqxx::undefined_column*>(&error)) return "42703";
  if (dynamic_cast<const pqxx::syntax_error*>(&error)) return "42601";
  if (dynamic_cast<const pqxx::not_null_violation*>(&error)) return "23502";
  if (dynamic_cast<const pqxx::unique_violation*>(&error)) return "23505";
  if (dynamic_cast<const pqxx::integrity_constraint_violation*>(&error)) return "23000";
  if (dynamic_cast<const pqxx::data_exception*>(&error)) return "22000";
  if (dynamic_cast<const pqxx::feature_not_supported*>(&error)) return "0A000";
  if (dynamic_cast<const pqxx::disk_full*>(&error)) return "53100";
  if (dynamic_cast<const pqxx::insufficient_resources*>(&error)) return "53000";
  return "58000";
}

}  // namespace

template <typename Work>
auto PostgresSinkTarget::Guarded(Work&& work) -> decltype(work()) {
  try {
    return work();
  } catch (const pqxx::sql_error& error) {
    std::string message = error.what();
    while (!message.empty() && message.back() == '\n') message.pop_back();
    throw SqlError(SqlStateOf(error),
                   fmt::format("{} refused: {}", options_.display_target, message));
  } catch (const pqxx::broken_connection& error) {
    throw SqlError("08006", fmt::format("lost the connection to {}: {}", options_.display_target,
                                        error.what()));
  } catch (const pqxx::in_doubt_error& error) {
    throw SqlError("08007", fmt::format("the outcome of a commit at {} is unknown: {}",
                                        options_.display_target, error.what()));
  } catch (const pqxx::failure& error) {
    throw SqlError("58000", fmt::format("{}: {}", options_.display_target, error.what()));
  }
}

std::string QuotePostgresIdentifier(std::string_view name) {
  std::string quoted = "\"";
  for (char c : name) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

PostgresSinkOptions PostgresSinkOptions::Parse(const std::map<std::string, std::string>& options,
                                               const planner::SinkInput& input) {
  static const std::set<std::string> kKnown = {
      "url",   "host",        "port", "user",   "password",     "dbname",
      "table", "primary_key", "mode", "commit", "create_table", "max_rows_per_transaction"};
  for (const auto& [key, value] : options) {
    if (!kKnown.count(key)) {
      std::string known;
      for (const std::string& name : kKnown) known += (known.empty() ? "" : ", ") + name;
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("unknown option '{}' for the postgres sink", key))
          .WithHint("Known options: connector, delivery, " + known + ".");
    }
  }
  auto get = [&](const std::string& key) -> std::optional<std::string> {
    auto it = options.find(key);
    if (it == options.end()) return std::nullopt;
    return it->second;
  };
  PostgresSinkOptions result;
  for (const planner::Column& column : input.columns) {
    result.columns.push_back(column.name);
    result.types.push_back(column.type);
  }

  // Where: a URL, or libpq's keywords.
  std::optional<std::string> url = get("url");
  std::vector<std::string> keywords = {"host", "port", "user", "password", "dbname"};
  if (url) {
    for (const std::string& keyword : keywords) {
      if (get(keyword)) {
        throw OptionError(keyword, "give either url or host/port/user/password/dbname, not both");
      }
    }
    if (url->rfind("postgresql://", 0) != 0 && url->rfind("postgres://", 0) != 0) {
      throw OptionError("url", "must start with postgresql://");
    }
    result.connection_string = *url;
    result.connection_string += url->find('?') == std::string::npos ? "?" : "&";
    result.connection_string += kConnectionSettings;
    result.display_target = RedactConnectionString(*url);
  } else {
    if (!get("host")) throw OptionError("url", "a postgres sink needs url (or host)");
    for (const std::string& keyword : keywords) {
      if (std::optional<std::string> value = get(keyword)) {
        result.connection_string += keyword + "=" + QuoteConnectionValue(*value) + " ";
      }
    }
    std::string settings(kConnectionSettings);
    std::replace(settings.begin(), settings.end(), '&', ' ');
    result.connection_string += settings;
    result.display_target =
        fmt::format("postgresql://{}{}:{}/{}", get("user") ? *get("user") + "@" : "", *get("host"),
                    get("port").value_or("5432"), get("dbname").value_or(""));
  }

  std::optional<std::string> table = get("table");
  if (!table || table->empty()) throw OptionError("table", "a postgres sink needs table='...'");
  size_t dot = table->find('.');
  if (dot == std::string::npos) {
    result.table = *table;
  } else {
    result.schema = table->substr(0, dot);
    result.table = table->substr(dot + 1);
  }
  if (result.schema.empty() || result.table.empty() ||
      result.table.find('.') != std::string::npos) {
    throw OptionError("table", "expected 'table' or 'schema.table'");
  }

  if (std::optional<std::string> key = get("primary_key")) {
    for (const std::string& name : SplitOptionList(*key)) {
      auto it = std::find(result.columns.begin(), result.columns.end(), name);
      if (it == result.columns.end()) {
        throw OptionError("primary_key", fmt::format("the input has no column \"{}\"", name));
      }
      size_t position = static_cast<size_t>(it - result.columns.begin());
      if (std::find(result.primary_key.begin(), result.primary_key.end(), position) !=
          result.primary_key.end()) {
        throw OptionError("primary_key", fmt::format("column \"{}\" is named twice", name));
      }
      result.primary_key.push_back(position);
    }
  }

  std::string mode = get("mode").value_or(result.primary_key.empty() ? "append" : "upsert");
  if (mode == "upsert") {
    result.mode = Mode::kUpsert;
    if (result.primary_key.empty()) {
      throw OptionError("mode", "upsert needs primary_key = 'column[, column]'");
    }
  } else if (mode == "append") {
    result.mode = Mode::kAppend;
    if (!input.append_only) {
      throw OptionError("mode",
                        "append needs an append-only input, and this input updates or deletes "
                        "rows")
          .WithHint("Use mode = 'upsert' with primary_key = '<the input's key columns>'.");
    }
    if (!result.primary_key.empty() && get("mode")) {
      throw OptionError("primary_key", "is for mode = 'upsert'; append writes every row");
    }
  } else {
    throw OptionError("mode", fmt::format("'{}' is not 'upsert' or 'append'", mode));
  }

  std::string commit = get("commit").value_or("progress");
  if (commit == "progress") {
    result.commit = Commit::kProgress;
  } else if (commit == "two_phase") {
    result.commit = Commit::kTwoPhase;
  } else {
    throw OptionError("commit", fmt::format("'{}' is not 'progress' or 'two_phase'", commit));
  }

  std::string create = get("create_table").value_or("true");
  if (create != "true" && create != "false") {
    throw OptionError("create_table", "must be 'true' or 'false'");
  }
  result.create_table = create == "true";

  if (std::optional<std::string> rows = get("max_rows_per_transaction")) {
    uint64_t value = 0;
    auto [end, error] = std::from_chars(rows->data(), rows->data() + rows->size(), value);
    if (error != std::errc() || end != rows->data() + rows->size() || value == 0) {
      throw OptionError("max_rows_per_transaction", "must be a positive number of rows");
    }
    result.max_rows_per_transaction = value;
  }
  return result;
}

std::string PostgresSinkOptions::Describe() const {
  std::string key;
  for (size_t position : primary_key) key += (key.empty() ? "" : ", ") + columns[position];
  return fmt::format("postgres {} table {}.{}, {}{}, commit={}", display_target, schema, table,
                     mode == Mode::kUpsert ? "upsert" : "append",
                     key.empty() ? "" : " on (" + key + ")",
                     commit == Commit::kTwoPhase ? "two_phase" : "progress");
}

PostgresSinkTarget::PostgresSinkTarget(std::string sink, PostgresSinkOptions options)
    : sink_(std::move(sink)),
      options_(std::move(options)),
      qualified_table_(QuotePostgresIdentifier(options_.schema) + "." +
                       QuotePostgresIdentifier(options_.table)),
      qualified_progress_(QuotePostgresIdentifier(options_.schema) + "." +
                          QuotePostgresIdentifier(kProgressTable)) {
  // A hash keeps the name within PostgreSQL's 63 bytes whatever the sink's name (FNV-1a:
  // stable across builds, unlike std::hash).
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : sink_) hash = (hash ^ c) * 1099511628211ull;
  qualified_staging_ = QuotePostgresIdentifier(options_.schema) + "." +
                       QuotePostgresIdentifier(fmt::format("stave_stage_{:016x}", hash));
}

PostgresSinkTarget::~PostgresSinkTarget() { Disconnect(); }

std::string PostgresSinkTarget::PreparedIdPrefix() const { return "stave:" + sink_ + ":"; }

void PostgresSinkTarget::Connect() {
  Disconnect();
  try {
    connection_ = std::make_unique<pqxx::connection>(options_.connection_string);
    if (!connection_->is_open()) throw pqxx::broken_connection("the server closed the connection");
    if (options_.mode == PostgresSinkOptions::Mode::kUpsert) PrepareStatements();
  } catch (const pqxx::broken_connection& error) {
    // libpq's message names the host and port, never the password.
    std::string message = error.what();
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
      message.pop_back();
    }
    throw SqlError("08001",
                   fmt::format("cannot connect to {}: {}", options_.display_target, message));
  }
}

void PostgresSinkTarget::Disconnect() noexcept {
  try {
    connection_.reset();
  } catch (...) {
  }
}

void PostgresSinkTarget::Execute(const std::string& sql) {
  pqxx::nontransaction work(*connection_);
  work.exec0(sql);
}

void PostgresSinkTarget::Create() {
  try {
    Connect();
    Guarded([&] { CreateUnguarded(); });
  } catch (...) {
    Disconnect();
    throw;
  }
  Disconnect();
}

void PostgresSinkTarget::CreateUnguarded() {
  {
    std::optional<pqxx::nontransaction> scope;
    pqxx::nontransaction& work = scope.emplace(*connection_);
    if (two_phase()) {
      int prepared = work.exec1("SHOW max_prepared_transactions")[0].as<int>();
      if (prepared <= 0) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       fmt::format("commit = 'two_phase' needs prepared transactions, and {} has "
                                   "max_prepared_transactions = 0",
                                   options_.display_target))
            .WithHint(
                "Set max_prepared_transactions > 0 on the target server and restart it, or "
                "use commit = 'progress'.");
      }
    }
    std::string qualified = qualified_table_;
    pqxx::row exists = work.exec_params1("SELECT to_regclass($1) IS NOT NULL", qualified);
    if (!exists[0].as<bool>()) {
      if (!options_.create_table) {
        throw SqlError(sqlstate::kUndefinedTable,
                       fmt::format("the target table {}.{} does not exist in {}", options_.schema,
                                   options_.table, options_.display_target))
            .WithHint("Create it, or leave create_table = 'true' to let the sink create it.");
      }
      std::string columns;
      for (size_t i = 0; i < options_.columns.size(); ++i) {
        columns +=
            fmt::format("{}{} {}", i ? ", " : "", QuotePostgresIdentifier(options_.columns[i]),
                        PostgresTypeName(options_.types[i]));
      }
      if (!options_.primary_key.empty()) {
        columns += ", PRIMARY KEY (";
        for (size_t i = 0; i < options_.primary_key.size(); ++i) {
          columns +=
              (i ? ", " : "") + QuotePostgresIdentifier(options_.columns[options_.primary_key[i]]);
        }
        columns += ")";
      }
      work.exec0(fmt::format("CREATE TABLE IF NOT EXISTS {} ({})", qualified_table_, columns));
    } else {
      // Every column the sink writes must exist and take the sink's values.
      std::map<std::string, std::string> target_types;
      for (const pqxx::row& row : work.exec_params(
               "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
               "WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped",
               qualified)) {
        target_types[row[0].as<std::string>()] = row[1].as<std::string>();
      }
      for (size_t i = 0; i < options_.columns.size(); ++i) {
        auto it = target_types.find(options_.columns[i]);
        if (it == target_types.end()) {
          throw SqlError(sqlstate::kUndefinedColumn,
                         fmt::format("the target table {}.{} has no column \"{}\"", options_.schema,
                                     options_.table, options_.columns[i]));
        }
        if (!AcceptsType(it->second, options_.types[i])) {
          throw SqlError(sqlstate::kDatatypeMismatch,
                         fmt::format("column \"{}\" of the target table {}.{} is {}, which does "
                                     "not take every {} value the sink writes",
                                     options_.columns[i], options_.schema, options_.table,
                                     it->second, options_.types[i].Name()));
        }
      }
      if (options_.mode == PostgresSinkOptions::Mode::kUpsert) {
        // ON CONFLICT needs a unique index on exactly the key columns.
        std::vector<std::string> key;
        for (size_t position : options_.primary_key) key.push_back(options_.columns[position]);
        std::sort(key.begin(), key.end());
        bool found = false;
        for (const pqxx::row& row : work.exec_params(
                 "SELECT array_agg(a.attname::text ORDER BY a.attname::text) FROM pg_index i "
                 "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
                 "WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indpred IS NULL "
                 "GROUP BY i.indexrelid",
                 qualified)) {
          std::vector<std::string> columns;
          pqxx::array_parser parser = row[0].as_array();
          for (auto item = parser.get_next(); item.first != pqxx::array_parser::done;
               item = parser.get_next()) {
            if (item.first == pqxx::array_parser::string_value) columns.push_back(item.second);
          }
          found |= columns == key;
        }
        if (!found) {
          throw SqlError(sqlstate::kInvalidParameterValue,
                         fmt::format("the target table {}.{} has no primary key or unique index "
                                     "on exactly ({}), which upserts need",
                                     options_.schema, options_.table, fmt::join(key, ", ")));
        }
      }
    }
    work.exec0(
        fmt::format("CREATE TABLE IF NOT EXISTS {} (sink text PRIMARY KEY, epoch bigint NOT NULL, "
                    "updated_at timestamptz NOT NULL DEFAULT now())",
                    qualified_progress_));
    scope.reset();
    // An earlier sink of this name (dropped while its target was away) is forgotten.
    RecoverUnguarded(std::nullopt);
    pqxx::nontransaction forget(*connection_);
    forget.exec_params(fmt::format("DELETE FROM {} WHERE sink = $1", qualified_progress_), sink_);
    forget.exec0("DROP TABLE IF EXISTS " + qualified_staging_);
  }
}

uint64_t PostgresSinkTarget::ReadProgress() {
  pqxx::nontransaction work(*connection_);
  pqxx::result result = work.exec_params(
      fmt::format("SELECT epoch FROM {} WHERE sink = $1", qualified_progress_), sink_);
  return result.empty() ? 0 : result[0][0].as<uint64_t>();
}

std::vector<std::string> PostgresSinkTarget::ListPrepared() {
  pqxx::nontransaction work(*connection_);
  std::vector<std::string> ids;
  std::string prefix = PreparedIdPrefix();
  // Compare the prefix exactly: a LIKE pattern would treat _ and % in the name as wildcards.
  for (const pqxx::row& row :
       work.exec_params("SELECT gid FROM pg_prepared_xacts WHERE database = current_database() "
                        "AND left(gid, length($1)) = $1",
                        prefix)) {
    ids.push_back(row[0].as<std::string>());
  }
  return ids;
}

uint64_t PostgresSinkTarget::Recover(const std::optional<std::string>& keep) {
  return Guarded([&] { return RecoverUnguarded(keep); });
}

uint64_t PostgresSinkTarget::RecoverUnguarded(const std::optional<std::string>& keep) {
  for (const std::string& id : ListPrepared()) {
    if (keep && id == *keep) continue;
    pqxx::nontransaction work(*connection_);
    work.exec0("ROLLBACK PREPARED " + work.quote(id));
  }
  return ReadProgress();
}

void PostgresSinkTarget::Prepare(uint64_t epoch, const std::string& id,
                                 const SinkChangeBatches& changes) {
  Guarded([&] {
    Execute("BEGIN");
    WriteEpoch(epoch, changes);
    pqxx::nontransaction work(*connection_);
    work.exec0("PREPARE TRANSACTION " + work.quote(id));
  });
}

void PostgresSinkTarget::CommitPrepared(uint64_t epoch, const std::string& id) {
  Guarded([&] { CommitPreparedUnguarded(epoch, id); });
}

void PostgresSinkTarget::CommitPreparedUnguarded(uint64_t epoch, const std::string& id) {
  {
    pqxx::nontransaction work(*connection_);
    pqxx::result prepared = work.exec_params("SELECT 1 FROM pg_prepared_xacts WHERE gid = $1", id);
    if (!prepared.empty()) {
      work.exec0("COMMIT PREPARED " + work.quote(id));
      return;
    }
  }
  if (ReadProgress() >= epoch) return;  // Committed already; the reply was lost.
  // 55000: retrying cannot bring the rows back; the sink's state says so.
  throw SqlError("55000", fmt::format("the prepared transaction {} of epoch {} is gone from {} "
                                      "but was never committed: it was rolled back outside Stave",
                                      id, epoch, options_.display_target));
}

void PostgresSinkTarget::Deliver(uint64_t epoch, uint64_t count, const SinkChangeBatches& changes) {
  if (count > options_.max_rows_per_transaction) {
    Guarded([&] { DeliverStaged(epoch, changes); });
    return;
  }
  Guarded([&] {
    Execute("BEGIN");
    WriteEpoch(epoch, changes);
    Execute("COMMIT");
  });
}

void PostgresSinkTarget::WriteEpoch(uint64_t epoch, const SinkChangeBatches& changes) {
  std::vector<size_t> all_columns(options_.columns.size());
  for (size_t i = 0; i < all_columns.size(); ++i) all_columns[i] = i;
  if (options_.mode == PostgresSinkOptions::Mode::kAppend) {
    std::vector<std::string> quoted;
    for (const std::string& column : options_.columns) {
      quoted.push_back(QuotePostgresIdentifier(column));
    }
    CopyRows(qualified_table_, quoted, "", changes, /*with_op=*/false);
    WriteProgress(epoch);
    return;
  }
  changes([&](const Chunk& batch) {
    std::vector<uint32_t> upserts;
    std::vector<uint32_t> deletes;
    for (size_t row = 0; row < batch.size(); ++row) {
      (IsSinkDelete(batch, row) ? deletes : upserts).push_back(static_cast<uint32_t>(row));
    }
    // Compacted per key: an epoch never upserts and deletes the same key, so order is free.
    if (!deletes.empty()) WriteArrays("stave_delete", batch, deletes, options_.primary_key);
    if (!upserts.empty()) WriteArrays("stave_upsert", batch, upserts, all_columns);
  });
  WriteProgress(epoch);
}

void PostgresSinkTarget::WriteProgress(uint64_t epoch) {
  pqxx::nontransaction work(*connection_);
  work.exec_params(fmt::format("INSERT INTO {} (sink, epoch) VALUES ($1, $2) ON CONFLICT (sink) "
                               "DO UPDATE SET epoch = EXCLUDED.epoch, updated_at = now()",
                               qualified_progress_),
                   sink_, epoch);
}

void PostgresSinkTarget::DeliverStaged(uint64_t epoch, const SinkChangeBatches& changes) {
  std::vector<std::string> names;
  std::string definitions;
  for (size_t i = 0; i < options_.columns.size(); ++i) {
    names.push_back(QuotePostgresIdentifier(options_.columns[i]));
    definitions += fmt::format(", {} {}", names.back(), PostgresTypeName(options_.types[i]));
  }
  std::string columns = fmt::format("{}", fmt::join(names, ", "));
  std::set<int64_t> staged;  // Parts of this epoch an earlier attempt staged.
  {
    pqxx::nontransaction work(*connection_);
    work.exec0(fmt::format(
        "CREATE UNLOGGED TABLE IF NOT EXISTS {} (stave_epoch bigint NOT NULL, stave_part integer "
        "NOT NULL, stave_delete boolean NOT NULL{})",
        qualified_staging_, definitions));
    work.exec_params(fmt::format("DELETE FROM {} WHERE stave_epoch <> $1", qualified_staging_),
                     epoch);
    for (const pqxx::row& row :
         work.exec_params(fmt::format("SELECT DISTINCT stave_part FROM {} WHERE stave_epoch = $1",
                                      qualified_staging_),
                          epoch)) {
      staged.insert(row[0].as<int64_t>());
    }
  }
  std::vector<std::string> staging_columns = {"stave_epoch", "stave_part", "stave_delete"};
  staging_columns.insert(staging_columns.end(), names.begin(), names.end());
  int64_t part = 0;
  changes([&](const Chunk& batch) {
    if (!staged.count(part)) {
      Execute("BEGIN");
      CopyRows(
          qualified_staging_, staging_columns, fmt::format("{}\t{}\t", epoch, part),
          [&](const auto& consume) { consume(batch); }, /*with_op=*/true);
      Execute("COMMIT");
      failpoint::Hit("sink_after_staged_part");
    }
    ++part;
  });
  // One transaction makes the whole epoch visible.
  Execute("BEGIN");
  {
    pqxx::nontransaction work(*connection_);
    if (options_.mode == PostgresSinkOptions::Mode::kAppend) {
      work.exec_params(fmt::format("INSERT INTO {} ({}) SELECT {} FROM {} WHERE stave_epoch = $1",
                                   qualified_table_, columns, columns, qualified_staging_),
                       epoch);
    } else {
      std::string match;
      std::string key;
      std::string updates;
      std::set<size_t> key_positions(options_.primary_key.begin(), options_.primary_key.end());
      for (size_t position : options_.primary_key) {
        match += fmt::format(" AND t.{} = s.{}", names[position], names[position]);
        key += (key.empty() ? "" : ", ") + names[position];
      }
      for (size_t i = 0; i < names.size(); ++i) {
        if (!key_positions.count(i)) {
          updates +=
              fmt::format("{}{} = EXCLUDED.{}", updates.empty() ? "" : ", ", names[i], names[i]);
        }
      }
      work.exec_params(fmt::format("DELETE FROM {} AS t USING {} AS s WHERE s.stave_epoch = $1 "
                                   "AND s.stave_delete{}",
                                   qualified_table_, qualified_staging_, match),
                       epoch);
      work.exec_params(
          fmt::format("INSERT INTO {} ({}) SELECT {} FROM {} WHERE stave_epoch = $1 AND NOT "
                      "stave_delete ON CONFLICT ({}) {}",
                      qualified_table_, columns, columns, qualified_staging_, key,
                      updates.empty() ? "DO NOTHING" : "DO UPDATE SET " + updates),
          epoch);
    }
    work.exec_params(fmt::format("DELETE FROM {} WHERE stave_epoch = $1", qualified_staging_),
                     epoch);
  }
  WriteProgress(epoch);
  Execute("COMMIT");
}

void PostgresSinkTarget::CopyRows(const std::string& table, const std::vector<std::string>& columns,
                                  const std::string& prefix, const SinkChangeBatches& batches,
                                  bool with_op) {
  pqxx::nontransaction work(*connection_);
  // COPY, the fastest way in. libpqxx 6's stream_to takes only tuples, whose width is fixed
  // at compile time, so the rows go through its older tablewriter as lines of COPY's text
  // format, escaped here. The tablewriter splices the names into COPY as given: quoted.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  pqxx::tablewriter writer(work, table, columns.begin(), columns.end());
#pragma GCC diagnostic pop
  // Lines go out in blocks of about kCopyBlockBytes: COPY's messages need not end at a row,
  // and the writer copies and sends what it is given once, not once a row.
  constexpr size_t kCopyBlockBytes = 64 << 10;
  std::string block;
  block.reserve(kCopyBlockBytes + 1024);
  auto send = [&] {
    block.pop_back();  // The writer ends what it sends with a newline of its own.
    writer.write_raw_line(block);
    block.clear();
  };
  batches([&](const Chunk& rows) {
    for (size_t row = 0; row < rows.size(); ++row) {
      block += prefix;
      if (with_op) block += IsSinkDelete(rows, row) ? "t\t" : "f\t";
      for (size_t i = 0; i < options_.columns.size(); ++i) {
        if (i) block += '\t';
        const Column& column = rows.columns[i];
        if (!column.IsNull(row) && IsPlainInteger(options_.types[i])) {
          fmt::format_int digits(column.ints[row]);
          block.append(digits.data(), digits.size());
          continue;
        }
        AppendCopyField(FieldText(column, row, options_.types[i]), &block);
      }
      block += '\n';
      if (block.size() >= kCopyBlockBytes) send();
    }
  });
  if (!block.empty()) send();
  writer.complete();
}

void PostgresSinkTarget::PrepareStatements() {
  // Both statements take one array per column, so their text is the same for any number of
  // rows: prepared once per connection, planned once.
  std::string columns;
  std::string arrays;
  std::string updates;
  std::set<size_t> key_positions(options_.primary_key.begin(), options_.primary_key.end());
  for (size_t i = 0; i < options_.columns.size(); ++i) {
    std::string name = QuotePostgresIdentifier(options_.columns[i]);
    columns += (i ? ", " : "") + name;
    arrays += fmt::format("{}${}::{}[]", i ? ", " : "", i + 1, PostgresTypeName(options_.types[i]));
    if (!key_positions.count(i)) {
      updates += fmt::format("{}{} = EXCLUDED.{}", updates.empty() ? "" : ", ", name, name);
    }
  }
  std::string key;
  std::string key_arrays;
  std::string match;
  for (size_t k = 0; k < options_.primary_key.size(); ++k) {
    size_t position = options_.primary_key[k];
    std::string name = QuotePostgresIdentifier(options_.columns[position]);
    key += (k ? ", " : "") + name;
    key_arrays += fmt::format("{}${}::{}[]", k ? ", " : "", k + 1,
                              PostgresTypeName(options_.types[position]));
    match += fmt::format("{}t.{} = d.{}", k ? " AND " : "", name, name);
  }
  connection_->prepare(
      "stave_upsert",
      fmt::format("INSERT INTO {} ({}) SELECT * FROM unnest({}) ON CONFLICT ({}) {}",
                  qualified_table_, columns, arrays, key,
                  updates.empty() ? "DO NOTHING" : "DO UPDATE SET " + updates));
  connection_->prepare("stave_delete",
                       fmt::format("DELETE FROM {} AS t USING unnest({}) AS d ({}) WHERE {}",
                                   qualified_table_, key_arrays, key, match));
}

void PostgresSinkTarget::WriteArrays(const std::string& statement, const Chunk& changes,
                                     const std::vector<uint32_t>& rows,
                                     const std::vector<size_t>& columns) {
  pqxx::nontransaction work(*connection_);
  std::vector<std::string> arrays(columns.size());
  for (size_t first = 0; first < rows.size(); first += kMaxRowsPerStatement) {
    size_t end = std::min(rows.size(), first + kMaxRowsPerStatement);
    for (size_t c = 0; c < columns.size(); ++c) {
      std::string& array = arrays[c];
      array = "{";
      for (size_t r = first; r < end; ++r) {
        if (r > first) array += ',';
        AppendArrayElement(
            FieldText(changes.columns[columns[c]], rows[r], options_.types[columns[c]]), &array);
      }
      array += '}';
    }
    work.exec_prepared(statement, pqxx::prepare::make_dynamic_params(arrays));
  }
}

void PostgresSinkTarget::Drop() {
  Connect();
  Guarded([&] {
    RecoverUnguarded(std::nullopt);
    pqxx::nontransaction work(*connection_);
    work.exec_params(fmt::format("DELETE FROM {} WHERE sink = $1", qualified_progress_), sink_);
    work.exec0("DROP TABLE IF EXISTS " + qualified_staging_);
  });
  Disconnect();
}

planner::ConnectorSpec PostgresConnectorSpec() {
  planner::ConnectorSpec spec;
  spec.name = "postgres";
  spec.validate_sink = [](const std::map<std::string, std::string>& options,
                          const planner::SinkInput& input, const std::string& format) {
    planner::RefuseFormat("postgres", format);
    PostgresSinkOptions parsed = PostgresSinkOptions::Parse(options, input);
    planner::SinkCapability capability;
    capability.guarantee = planner::Delivery::kExactlyOnce;
    capability.description = parsed.Describe();
    capability.reason =
        parsed.commit == PostgresSinkOptions::Commit::kTwoPhase
            ? "each epoch is prepared in the target at its barrier and committed after its "
              "checkpoint; recovery commits or rolls back by the checkpoint, and a progress row "
              "tells finished epochs"
            : "each epoch is written after its checkpoint in one transaction with the sink's "
              "progress row, so a replay skips epochs the target already has";
    return capability;
  };
  return spec;
}

}  // namespace stave::executor
