#include "executor/database.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "common/redact.h"
#include "common/sql_error.h"
#include "executor/batch/batch_executor.h"
#include "executor/catalog/pg_catalog_tables.h"
#include "executor/connectors/connectors.h"
#include "executor/connectors/dead_letter.h"
#include "executor/plan_builder.h"
#include "executor/runtime/source_task.h"
#include "parser/parser.h"
#include "planner/event_time.h"
#include "planner/expression_binder.h"
#include "planner/plan_printer.h"
#include "planner/query_binder.h"
#include "planner/stream_watermark.h"
#include "planner/view_row_key.h"
#include "storage/key_codec.h"

namespace stave::executor {
namespace {

// EXPLAIN's result: one text row per line, in a column named as PostgreSQL names it.
QueryResult ExplainLines(const std::vector<std::string>& lines) {
  QueryResult result;
  result.returns_rows = true;
  result.columns.push_back({"QUERY PLAN", TypeId::kVarchar});
  for (const std::string& line : lines) result.rows.push_back({Value::String(line)});
  result.command_tag = "EXPLAIN";
  return result;
}

std::string KindWord(parser::ObjectKind kind) {
  switch (kind) {
    case parser::ObjectKind::kStream:
      return "stream";
    case parser::ObjectKind::kMaterializedView:
      return "materialized view";
    case parser::ObjectKind::kTable:
      return "table";
    case parser::ObjectKind::kSink:
      return "sink";
    case parser::ObjectKind::kView:
      return "view";
  }
  return "object";
}

std::string TagWord(parser::ObjectKind kind) {
  std::string word = KindWord(kind);
  for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return word;
}

std::optional<parser::ObjectKind> KindOf(planner::ObjectType type) {
  switch (type) {
    case planner::ObjectType::kStream:
      return parser::ObjectKind::kStream;
    case planner::ObjectType::kMaterializedView:
      return parser::ObjectKind::kMaterializedView;
    case planner::ObjectType::kTable:
      return parser::ObjectKind::kTable;
    case planner::ObjectType::kSink:
      return parser::ObjectKind::kSink;
    case planner::ObjectType::kSystemTable:
      return std::nullopt;
  }
  return std::nullopt;
}

// The columns of CREATE STREAM or CREATE TABLE: at least one, distinct names, none named
// like a hidden column, known types.
std::vector<planner::Column> ResolveColumns(const std::vector<parser::ColumnDef>& definitions,
                                            std::string_view what, int position) {
  if (definitions.empty()) {
    throw SqlError(sqlstate::kSyntaxError, fmt::format("a {} needs at least one column", what),
                   position);
  }
  std::vector<planner::Column> columns;
  std::set<std::string> names;
  for (const parser::ColumnDef& column : definitions) {
    if (!names.insert(column.name).second) {
      throw SqlError("42701", fmt::format("column \"{}\" specified more than once", column.name),
                     column.position);
    }
    if (column.name == planner::kRowIdColumn || column.name == planner::kRowKeyColumn) {
      throw SqlError("42701", fmt::format("column name \"{}\" is reserved", column.name),
                     column.position);
    }
    columns.push_back({column.name, planner::ResolveType(column.type), column.not_null});
  }
  return columns;
}

// Moves a WITH clause into `object`: `connector` into its connector, the rest into its
// options (a key given twice is an error). Returns where `connector` was written, else
// `position`.
int TakeWithOptions(const std::vector<parser::Option>& options, planner::CatalogObject* object,
                    int position) {
  for (const parser::Option& option : options) {
    if (option.key == "connector") {
      object->connector = option.value;
      position = option.position;
    } else if (!object->options.emplace(option.key, option.value).second) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("option '{}' is given more than once", option.key),
                     option.position);
    }
  }
  return position;
}

// Takes 'scan.watermark.idle-timeout' (milliseconds) out of a stream's options: a property
// of its watermark, whatever the connector.
void TakeIdleTimeout(const parser::CreateStreamStatement& create, planner::CatalogObject* stream) {
  constexpr std::string_view kKey = "scan.watermark.idle-timeout";
  auto it = stream->options.find(std::string(kKey));
  if (it == stream->options.end()) return;
  int position = create.position;
  for (const parser::Option& option : create.options) {
    if (option.key == kKey) position = option.position;
  }
  if (!stream->watermark) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("option '{}' needs a WATERMARK FOR in the stream's columns", kKey),
                   position);
  }
  char* end = nullptr;
  long long millis = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || millis <= 0) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("option '{}' must be a positive number of milliseconds, not '{}'",
                               kKey, it->second),
                   position);
  }
  stream->watermark_idle_timeout = std::chrono::milliseconds(millis);
  stream->options.erase(it);
}

// The names of the connectors `accept` takes, comma separated (for error messages).
std::string ConnectorNames(const planner::ConnectorRegistry& connectors,
                           const std::function<bool(const planner::ConnectorSpec&)>& accept) {
  std::string names;
  for (const std::string& name : connectors.Names()) {
    if (accept(*connectors.Find(name))) names += (names.empty() ? "" : ", ") + name;
  }
  return names;
}

constexpr std::string_view kCheckpointIntervalSetting = "checkpoint_interval";

QueryResult Command(std::string tag) {
  QueryResult result;
  result.command_tag = std::move(tag);
  return result;
}

}  // namespace

std::unique_ptr<Database> Database::Open(const DatabaseOptions& options,
                                         const planner::ConnectorRegistry* connectors) {
  auto store = storage::Store::Open(options.data_directory).ValueOrThrow();
  std::unique_ptr<Database> database(new Database(options, connectors, std::move(store)));
  JobSet jobs;
  database->Recover(&jobs);
  Database* raw = database.get();
  database->engine_->set_log_heads([raw] { return raw->TableTargets(); });
  database->engine_->set_rebuild_jobs([raw] { return raw->RebuildJobs(); });
  database->engine_->Start(std::move(jobs));
  return database;
}

Database::Database(const DatabaseOptions& options, const planner::ConnectorRegistry* connectors,
                   std::unique_ptr<storage::Store> store)
    : options_(options), connectors_(connectors), store_(std::move(store)) {
  if (!options_.recovery_progress)
    options_.recovery_progress = std::make_shared<RecoveryProgress>();
  std::chrono::milliseconds interval = options.checkpoint_interval;
  if (!options.checkpoint_interval_explicit) {
    std::optional<std::string> stored =
        store_->GetSetting(kCheckpointIntervalSetting).ValueOrThrow();
    if (stored && stored->size() == 8) {
      interval = std::chrono::milliseconds(storage::ReadBigEndian64(*stored));
      spdlog::info("checkpoint interval {} ms, as set by ALTER SYSTEM", interval.count());
    }
  }
  engine_ = std::make_unique<Engine>(store_.get(), &metrics_, interval, options.state_memory_bytes,
                                     options.workers);
  engine_->set_view_state_limit(StoredViewStateLimit(options.view_state_limit_bytes));
  next_object_id_ = store_->next_object_id();
  statements_total_ = metrics_.Counter(
      "stave_statements_total", {}, "SQL statements executed by the database (queries, DDL, DML).");
  roles_ = std::make_unique<Roles>(store_.get());
  RegisterSystemTables();
  RegisterJobSystemTables();
}

Database::~Database() { Shutdown(); }

void Database::RegisterSystemTables() {
  planner::SystemTable checkpoints;
  checkpoints.name = "checkpoints";
  checkpoints.columns = {{"epoch", TypeId::kInt64},           {"started_at", TypeId::kVarchar},
                         {"duration_ms", TypeId::kFloat64},   {"bytes", TypeId::kInt64},
                         {"state", TypeId::kVarchar},         {"barrier_cpu_ms", TypeId::kFloat64},
                         {"commit_cpu_ms", TypeId::kFloat64}, {"write_ms", TypeId::kFloat64}};
  checkpoints.rows = [this] {
    std::vector<std::vector<Value>> rows;
    for (const CheckpointRecord& record : engine_->CheckpointHistory()) {
      rows.push_back({Value::Int(static_cast<int64_t>(record.epoch)),
                      Value::String(fmt::format(
                          "{:%Y-%m-%d %H:%M:%S}",
                          fmt::gmtime(std::chrono::system_clock::to_time_t(record.started)))),
                      Value::Double(CheckpointRecord::Milliseconds(record.duration)),
                      Value::Int(static_cast<int64_t>(record.bytes)),
                      Value::String(std::string(CheckpointRecord::kState)),
                      Value::Double(CheckpointRecord::Milliseconds(record.barrier_cpu)),
                      Value::Double(CheckpointRecord::Milliseconds(record.commit_cpu)),
                      Value::Double(CheckpointRecord::Milliseconds(record.write))});
    }
    return rows;
  };
  catalog_.RegisterSystemTable(std::move(checkpoints));

  planner::SystemTable sinks;
  sinks.name = "sinks";
  sinks.columns = {{"name", TypeId::kVarchar},
                   {"connector", TypeId::kVarchar},
                   {"target", TypeId::kVarchar},
                   {"requested_delivery", TypeId::kVarchar},
                   {"derived_delivery", TypeId::kVarchar},
                   {"committed_epoch", TypeId::kInt64},
                   {"finished_epoch", TypeId::kInt64},
                   {"lag_epochs", TypeId::kInt64},
                   {"state", TypeId::kVarchar},
                   {"last_error", TypeId::kVarchar}};
  sinks.rows = [this] {
    std::vector<std::vector<Value>> rows;
    std::lock_guard lock(sinks_mutex_);
    for (const auto& [id, sink] : sinks_) {
      planner::CatalogObjectPtr object = catalog_.FindById(id);
      if (!object) continue;
      SinkStatus status = sink.writer->status();
      // Lag: committed epochs with rows the target does not have yet.
      auto lag = static_cast<int64_t>(status.owed_epochs);
      rows.push_back(
          {Value::String(object->name), Value::String(object->connector),
           Value::String(sink.description),
           Value::String(std::string(planner::DeliveryName(sink.requested))),
           Value::String(std::string(planner::DeliveryName(sink.derived))),
           Value::Int(static_cast<int64_t>(status.committed_epoch)),
           Value::Int(static_cast<int64_t>(status.finished_epoch)), Value::Int(lag),
           Value::String(status.state),
           status.last_error.empty() ? Value::Null() : Value::String(status.last_error)});
    }
    return rows;
  };
  catalog_.RegisterSystemTable(std::move(sinks));

  // Records streams could not decode, kept by on_error = 'dead_letter'.
  planner::SystemTable bad_records;
  bad_records.name = "bad_records";
  bad_records.columns = {{"stream", TypeId::kVarchar},
                         {"partition", TypeId::kInt32},
                         {"offset", TypeId::kInt64},
                         {"error", TypeId::kVarchar},
                         {"raw", TypeId::kVarchar}};
  bad_records.rows = [this] {
    std::vector<std::vector<Value>> rows;
    Status status = store_->ScanDeadLetters(
        [&](uint32_t stream_id, int32_t partition, int64_t offset, std::string_view bytes) {
          DeadLetter letter;
          planner::CatalogObjectPtr stream = catalog_.FindById(stream_id);
          if (!stream || !DecodeDeadLetter(bytes, &letter)) return true;
          rows.push_back({Value::String(stream->name), Value::Int(partition), Value::Int(offset),
                          Value::String(letter.error), Value::String(RawBytesAsText(letter.raw))});
          return true;
        });
    if (!status.ok()) throw SqlError(sqlstate::kIoError, status.ToString());
    return rows;
  };
  catalog_.RegisterSystemTable(std::move(bad_records));

  // Where each job reading a stream stands, as its last checkpoint recorded.
  planner::SystemTable sources;
  sources.name = "sources";
  sources.columns = {{"stream", TypeId::kVarchar},    {"connector", TypeId::kVarchar},
                     {"reader", TypeId::kVarchar},    {"position", TypeId::kVarchar},
                     {"bad_records", TypeId::kInt64}, {"watermark", TypeId::kVarchar},
                     {"late_rows", TypeId::kInt64},   {"lag", TypeId::kVarchar},
                     {"lost_records", TypeId::kInt64}};
  sources.rows = [this] {
    // Every stream each job reads (a join or a union may read several, or one twice): the
    // running jobs' sources, with their live lag per partition (Kafka); a job that is not
    // running (it failed to start) shows its one stream by its catalog entry.
    struct Read {
      planner::CatalogObjectPtr stream;
      std::string position_name;
      std::string lag;  ///< "partition:records,...".
    };
    std::map<uint32_t, std::vector<Read>> reads;
    for (const JobGraph& graph : engine_->DescribeJobs()) {
      std::vector<Read>& job_reads = reads[graph.id];
      for (const JobGraphNode& node : graph.nodes) {
        if (node.kind != "source") continue;
        planner::CatalogObjectPtr input = catalog_.FindById(node.input);
        if (!input || input->type != planner::ObjectType::kStream) continue;
        Read read{input, node.position_name, ""};
        for (const auto& [partition, records] : node.lag) {
          read.lag += fmt::format("{}{}:{}", read.lag.empty() ? "" : ",", partition, records);
        }
        job_reads.push_back(std::move(read));
      }
    }
    std::vector<std::vector<Value>> rows;
    for (const planner::CatalogObjectPtr& reader : catalog_.List()) {
      auto running = reads.find(reader->id);
      std::vector<Read> job_reads;
      if (running != reads.end()) {
        job_reads = running->second;
      } else if (reader->depends_on.size() == 1) {
        planner::CatalogObjectPtr stream = catalog_.FindById(reader->depends_on.front());
        if (stream && stream->type == planner::ObjectType::kStream) {
          job_reads.push_back({stream, std::string(SourceTask::kPositionName), ""});
        }
      }
      for (const Read& read : job_reads) {
        const planner::CatalogObject* stream = read.stream.get();
        std::optional<std::string> position =
            store_->GetSourcePosition(reader->id, read.position_name).ValueOrThrow();
        SourcePositionSummary summary;
        if (position) summary = DescribeSourcePosition(*stream, *position);
        rows.push_back(
            {Value::String(stream->name), Value::String(stream->connector),
             Value::String(reader->name),
             summary.position.empty() ? Value::Null() : Value::String(summary.position),
             Value::Int(static_cast<int64_t>(summary.bad_records)),
             // In the event-time column's type, as the user would write it.
             summary.watermark && *summary.watermark != INT64_MIN
                 ? Value::String(Value::Int(*summary.watermark)
                                     .ToText(stream->columns[*stream->watermark_column].type))
                 : Value::Null(),
             Value::Int(static_cast<int64_t>(summary.late_rows)),
             read.lag.empty() ? Value::Null() : Value::String(read.lag),
             Value::Int(static_cast<int64_t>(summary.lost_records))});
      }
    }
    return rows;
  };
  catalog_.RegisterSystemTable(std::move(sources));

  for (planner::SystemTable& table : PgCatalogTables(&catalog_)) {
    catalog_.RegisterSystemTable(std::move(table));
  }
  for (planner::SystemTable& table : InformationSchemaTables(&catalog_)) {
    catalog_.RegisterSystemTable(std::move(table));
  }
}

void Database::SetCheckpointInterval(std::chrono::milliseconds interval, bool persist) {
  engine_->set_checkpoint_interval(interval);
  if (!persist) return;
  std::string bytes;
  storage::AppendBigEndian64(static_cast<uint64_t>(interval.count()), &bytes);
  engine_->ApplyChange([&](JobSet*, storage::EpochBatch* batch) {
    batch->PutSetting(kCheckpointIntervalSetting, bytes);
  });
}

void Database::Shutdown() {
  if (engine_) engine_->Stop();
  std::lock_guard lock(sinks_mutex_);
  for (auto& [id, sink] : sinks_) sink.writer->Stop();
}

void Database::Recover(JobSet* jobs) {
  auto entries = store_->LoadCatalogEntries().ValueOrThrow();
  spdlog::info("recovering {} objects as of epoch {}", entries.size(), store_->committed_epoch());
  RecoveryProgress& progress = *options_.recovery_progress;
  progress.Start(entries.size(), store_->committed_epoch());
  size_t recovered = 0;
  for (const auto& [id, bytes] : entries) {
    ++recovered;
    std::optional<planner::CatalogObject> entry = planner::DeserializeCatalogEntry(bytes);
    if (!entry) throw SqlError("XX001", fmt::format("catalog entry {} is corrupt", id));
    try {
      parser::StatementPtr parsed = ParseDefinition(entry->definition);
      const parser::Statement& statement = *parsed;
      if (statement.kind == parser::StatementKind::kCreateStream) {
        catalog_.Add(PlanStream(static_cast<const parser::CreateStreamStatement&>(statement), id));
      } else if (statement.kind == parser::StatementKind::kCreateTable) {
        planner::CatalogObjectPtr object =
            PlanTable(static_cast<const parser::CreateTableStatement&>(statement), id);
        catalog_.Add(object);
        std::lock_guard lock(tables_mutex_);
        tables_.emplace(id, std::make_shared<Table>(object, store_.get()));
      } else if (statement.kind == parser::StatementKind::kCreateMaterializedView) {
        auto [object, job] =
            PlanView(static_cast<const parser::CreateMaterializedViewStatement&>(statement), id,
                     entry->parallelism, entry->plan_version);
        catalog_.Add(object);
        jobs->emplace(id, std::move(job));
      } else if (statement.kind == parser::StatementKind::kCreateSink) {
        PlannedSink planned =
            PlanSink(static_cast<const parser::CreateSinkStatement&>(statement), id,
                     entry->parallelism, SinkPlanning::kRecover, entry->plan_version);
        catalog_.Add(planned.object);
        jobs->emplace(id, std::move(planned.job));
        std::lock_guard lock(sinks_mutex_);
        sinks_.emplace(id, std::move(planned.runtime));
      } else {
        throw SqlError("XX001", "not a CREATE statement");
      }
      spdlog::info("recovering: planned {} \"{}\" ({}/{})", planner::ObjectTypeName(entry->type),
                   entry->name, recovered, entries.size());
      progress.ObjectDone();
    } catch (const SqlError& error) {
      throw SqlError("XX001",
                     fmt::format("cannot recover {} \"{}\" from its definition: {}",
                                 planner::ObjectTypeName(entry->type), entry->name, error.what()));
    }
  }
  // Change logs first: the views' operators read the setting as they start.
  UpdateChangeLogs(jobs, {}, nullptr);
  progress.SetPhase("restoring state");
  for (auto& [id, job] : *jobs) {
    try {
      job->Recover(*store_, store_->committed_epoch());
    } catch (const SqlError& error) {
      throw SqlError("XX001", fmt::format("cannot recover \"{}\": {}", job->name(), error.what()));
    }
  }
  {
    // Sinks reconcile their targets with the checkpoint and deliver what they owe.
    progress.SetPhase("starting sinks");
    std::lock_guard lock(sinks_mutex_);
    for (auto& [id, sink] : sinks_) sink.writer->Start(store_->committed_epoch());
  }
  progress.Finish();
  spdlog::info("recovered {} objects at epoch {} in {:.3f} s", entries.size(),
               store_->committed_epoch(), progress.status().seconds);
}

size_t Database::default_parallelism() const {
  return options_.streaming_parallelism > 0 ? options_.streaming_parallelism : engine_->workers();
}

QueryResult Database::Execute(const parser::Statement& statement, Transaction* transaction,
                              const SessionContext& session) {
  statements_total_->fetch_add(1, std::memory_order_relaxed);
  switch (statement.kind) {
    case parser::StatementKind::kCreateTable:
      return CreateTable(static_cast<const parser::CreateTableStatement&>(statement));
    case parser::StatementKind::kInsert:
    case parser::StatementKind::kUpdate:
    case parser::StatementKind::kDelete: {
      Transaction autocommit;
      Transaction* target = transaction ? transaction : &autocommit;
      DmlExecutor dml = MakeDml();
      QueryResult result;
      if (statement.kind == parser::StatementKind::kInsert) {
        result = dml.Insert(static_cast<const parser::InsertStatement&>(statement), target);
      } else if (statement.kind == parser::StatementKind::kUpdate) {
        result = dml.Update(static_cast<const parser::UpdateStatement&>(statement), target);
      } else {
        result = dml.Delete(static_cast<const parser::DeleteStatement&>(statement), target);
      }
      if (!transaction) Commit(&autocommit);
      return result;
    }
    case parser::StatementKind::kSelect:
      return Select(static_cast<const parser::SelectStatement&>(statement), session);
    case parser::StatementKind::kCreateStream:
      return CreateStream(static_cast<const parser::CreateStreamStatement&>(statement));
    case parser::StatementKind::kCreateMaterializedView:
      return CreateView(static_cast<const parser::CreateMaterializedViewStatement&>(statement),
                        session);
    case parser::StatementKind::kDrop:
      return Drop(static_cast<const parser::DropStatement&>(statement));
    case parser::StatementKind::kShowObjects:
      return ShowObjects(static_cast<const parser::ShowObjectsStatement&>(statement));
    case parser::StatementKind::kShowSystemTable:
      return ShowSystemTable(static_cast<const parser::ShowSystemTableStatement&>(statement));
    case parser::StatementKind::kCheckpoint:
      CheckpointCoveringWrites();
      return Command("CHECKPOINT");
    case parser::StatementKind::kBackup: {
      const auto& backup = static_cast<const parser::BackupStatement&>(statement);
      if (transaction && !transaction->tables().empty()) {
        // Its writes are not committed, so the backup could not hold them.
        throw SqlError("25001", "BACKUP cannot run inside a transaction block that has written",
                       statement.position);
      }
      uint64_t epoch = Backup(backup.directory);
      QueryResult result = Command("BACKUP");
      result.notices.push_back(
          {"NOTICE", "00000",
           fmt::format("backup of epoch {} written to \"{}\"", epoch, backup.directory)});
      return result;
    }
    case parser::StatementKind::kCreateSink:
      return CreateSink(static_cast<const parser::CreateSinkStatement&>(statement), session);
    case parser::StatementKind::kExplain:
      return Explain(static_cast<const parser::ExplainStatement&>(statement), session);
    case parser::StatementKind::kAlterSink:
      return AlterSink(static_cast<const parser::AlterSinkStatement&>(statement));
    case parser::StatementKind::kRole:
      return roles_->Execute(static_cast<const parser::RoleStatement&>(statement));
    default:
      throw SqlError(sqlstate::kFeatureNotSupported, "this statement is not supported here",
                     statement.position);
  }
}

QueryResult Database::Describe(const parser::Statement& statement) {
  QueryResult shape;
  switch (statement.kind) {
    case parser::StatementKind::kSelect: {
      planner::BoundQuery query =
          planner::BindQuery(static_cast<const parser::SelectStatement&>(statement), catalog_,
                             planner::QueryPurpose::kBatch);
      shape.returns_rows = true;
      for (size_t i = 0; i < query.visible_columns; ++i) {
        shape.columns.push_back({query.root->output[i].name, query.root->output[i].type});
      }
      return shape;
    }
    case parser::StatementKind::kInsert:
    case parser::StatementKind::kUpdate:
    case parser::StatementKind::kDelete:
      return MakeDml().Describe(statement);
    case parser::StatementKind::kShowObjects:
    case parser::StatementKind::kShowSystemTable:
    case parser::StatementKind::kExplain: {
      // Neither changes anything; their columns depend on what they show.
      QueryResult result = Execute(statement);
      shape.returns_rows = result.returns_rows;
      shape.columns = std::move(result.columns);
      return shape;
    }
    default:
      return shape;
  }
}

planner::CatalogObjectPtr Database::PlanStream(const parser::CreateStreamStatement& create,
                                               uint32_t id) {
  auto object = std::make_shared<planner::CatalogObject>();
  object->id = id;
  object->type = planner::ObjectType::kStream;
  object->name = planner::ResolveObjectName(create.name, create.position);
  object->definition = create.text;
  object->format = create.format;
  for (const parser::ColumnDef& column : create.columns) {
    if (column.primary_key) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "a stream is append-only and has no primary key", column.position)
          .WithHint("Declare a table with a primary key, or group by the key in a view.");
    }
  }
  object->columns = ResolveColumns(create.columns, "stream", create.position);
  if (create.watermark) planner::BindStreamWatermark(*create.watermark, object.get());
  int connector_position = TakeWithOptions(create.options, object.get(), create.position);
  TakeIdleTimeout(create, object.get());
  if (object->connector.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue, "a stream needs WITH (connector = '...')",
                   create.position);
  }
  const planner::ConnectorSpec* spec = connectors_->Find(object->connector);
  if (!spec || !spec->validate_source) {
    std::string known = ConnectorNames(*connectors_, [](const planner::ConnectorSpec& each) {
      return static_cast<bool>(each.validate_source);
    });
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("unknown connector '{}' (available: {})", object->connector, known),
                   connector_position);
  }
  try {
    spec->validate_source(object->options, object->columns, object->format);
  } catch (SqlError& error) {
    throw error.WithPositionIfUnset(create.position);
  }
  return object;
}

planner::CatalogObjectPtr Database::PlanTable(const parser::CreateTableStatement& create,
                                              uint32_t id) {
  auto object = std::make_shared<planner::CatalogObject>();
  object->id = id;
  object->type = planner::ObjectType::kTable;
  object->name = planner::ResolveObjectName(create.name, create.position);
  object->definition = create.text;
  object->append_only = create.append_only;
  if (!create.options.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("unknown table option '{}'", create.options.front().key),
                   create.options.front().position);
  }
  object->columns = ResolveColumns(create.columns, "table", create.position);
  for (const std::string& key : create.primary_key) {
    auto it = std::find_if(object->columns.begin(), object->columns.end(),
                           [&](const planner::Column& c) { return c.name == key; });
    if (it == object->columns.end()) {
      throw SqlError(sqlstate::kUndefinedColumn,
                     fmt::format("column \"{}\" named in key does not exist", key),
                     create.primary_key_position);
    }
    it->not_null = true;
    object->primary_key.push_back(static_cast<size_t>(it - object->columns.begin()));
  }
  return object;
}

std::pair<planner::CatalogObjectPtr, std::unique_ptr<Job>> Database::PlanView(
    const parser::CreateMaterializedViewStatement& create, uint32_t id, uint32_t parallelism,
    uint32_t plan_version) {
  planner::BoundQuery query = planner::BindQuery(
      *create.query, catalog_, planner::QueryPurpose::kMaterializedView, plan_version);
  auto object = std::make_shared<planner::CatalogObject>();
  object->id = id;
  object->type = planner::ObjectType::kMaterializedView;
  object->name = planner::ResolveObjectName(create.name, create.position);
  object->definition = create.text;
  for (size_t i = 0; i < query.visible_columns; ++i)
    object->columns.push_back(query.root->output[i]);
  for (const auto& input : query.inputs) object->depends_on.push_back(input->id);
  object->append_only = query.append_only;
  object->parallelism = parallelism;
  object->plan_version = plan_version;
  object->row_key_columns = planner::VisibleRowKeyColumns(query);
  object->event_time_columns = planner::VisibleEventTimeColumns(*query.root, query.visible_columns);
  std::unique_ptr<Job> job = BuildJob(
      *object, query, store_.get(), &metrics_,
      [this](uint32_t table_id) { return FindTable(table_id); },
      JobOptions{parallelism > 0 ? parallelism : default_parallelism(), engine_->throttle(),
                 options_.state_cache_bytes});
  return {object, std::move(job)};
}

Database::PlannedSink Database::PlanSink(const parser::CreateSinkStatement& create, uint32_t id,
                                         uint32_t parallelism, SinkPlanning planning,
                                         uint32_t plan_version) {
  auto object = std::make_shared<planner::CatalogObject>();
  object->id = id;
  object->type = planner::ObjectType::kSink;
  object->name = planner::ResolveObjectName(create.name, create.position);
  object->definition = create.text;
  object->format = create.format;
  object->parallelism = parallelism;
  object->plan_version = plan_version;
  int connector_position = TakeWithOptions(create.options, object.get(), create.position);
  int delivery_position = create.position;
  for (const parser::Option& option : create.options) {
    if (option.key == "delivery") delivery_position = option.position;
  }
  std::string sink_connectors = ConnectorNames(
      *connectors_,
      [](const planner::ConnectorSpec& each) { return static_cast<bool>(each.validate_sink); });
  if (object->connector.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue, "a sink needs WITH (connector = '...')",
                   create.position)
        .WithHint("Sink connectors: " + sink_connectors + ".");
  }
  const planner::ConnectorSpec* spec = connectors_->Find(object->connector);
  if (!spec || !spec->validate_sink) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("unknown sink connector '{}' (available: {})", object->connector,
                               sink_connectors),
                   connector_position);
  }
  planner::Delivery requested = planner::Delivery::kExactlyOnce;
  if (auto it = object->options.find("delivery"); it != object->options.end()) {
    std::optional<planner::Delivery> parsed = planner::ParseDelivery(it->second);
    if (!parsed) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("delivery '{}' is not 'exactly_once', 'at_least_once' or "
                                 "'at_most_once'",
                                 it->second),
                     delivery_position);
    }
    requested = *parsed;
  }

  // The query: the AS query, or every column of the FROM relation.
  parser::SelectStatement select_all;
  const parser::SelectStatement* select = create.query.get();
  if (create.from) {
    auto star = std::make_unique<parser::StarExpr>();
    star->position = create.from_position;
    select_all.items.push_back({std::move(star), ""});
    select_all.from.emplace();
    select_all.from->name = *create.from;
    select_all.from->position = create.from_position;
    select_all.position = create.from_position;
    select = &select_all;
  }
  planner::BoundQuery query =
      planner::BindQuery(*select, catalog_, planner::QueryPurpose::kMaterializedView, plan_version);
  for (size_t i = 0; i < query.visible_columns; ++i)
    object->columns.push_back(query.root->output[i]);
  for (const auto& input : query.inputs) object->depends_on.push_back(input->id);
  object->append_only = query.append_only;

  planner::SinkInput input{object->columns, query.append_only};
  planner::SinkCapability capability;
  try {
    capability = spec->validate_sink(SinkConnectorOptions(*object), input, object->format);
  } catch (SqlError& error) {
    throw error.WithPositionIfUnset(create.position);
  }
  planner::DeliveryChain chain =
      planner::AnalyzeDelivery(query.inputs, catalog_, *connectors_,
                               {fmt::format("sink \"{}\" ({})", object->name, object->connector),
                                capability.guarantee, capability.reason});
  PlannedSink planned;
  planned.object = object;
  planned.runtime.input =
      create.from ? planner::ResolveObjectName(*create.from, create.from_position) : "(query)";
  planned.runtime.description = capability.description;
  planned.runtime.requested = requested;
  planned.runtime.derived = chain.guarantee();
  planned.runtime.chain = chain.Describe(requested);
  if (planning == SinkPlanning::kExplain) return planned;
  if (planning == SinkPlanning::kCreate) CheckDelivery(chain, requested, object->name);

  OpenedSink opened = OpenSinkTarget(*object, input);
  SinkRecord record;
  if (planning == SinkPlanning::kCreate) {
    try {
      opened.target->Create();
    } catch (SqlError& error) {
      throw error.WithPositionIfUnset(create.position);
    }
  } else if (std::optional<std::string> stored =
                 store_->GetSourcePosition(id, SinkRecord::kPositionName).ValueOrThrow()) {
    std::optional<SinkRecord> decoded = SinkRecord::Decode(*stored);
    if (!decoded) throw SqlError("XX001", "the sink's checkpoint record is corrupt");
    record = *decoded;
  }
  storage::RowTypes types;
  for (const planner::Column& column : object->columns) types.push_back(column.type);
  auto writer = std::make_shared<SinkWriter>(
      id, object->name, std::move(opened.target), store_.get(), std::move(types), record,
      metrics_.Counter("stave_sink_rows_delivered_total", {{"sink", object->name}},
                       "Row changes a sink made durable in its target (committed there)."));
  planned.job = BuildSinkJob(
      *object, query, store_.get(), &metrics_,
      [this](uint32_t table_id) { return FindTable(table_id); },
      JobOptions{parallelism > 0 ? parallelism : default_parallelism(), engine_->throttle(),
                 options_.state_cache_bytes},
      writer, std::move(opened.key_columns));
  planned.runtime.writer = std::move(writer);
  return planned;
}

QueryResult Database::CreateSink(const parser::CreateSinkStatement& create,
                                 const SessionContext& session) {
  std::lock_guard lock(ddl_mutex_);
  std::string name = planner::ResolveObjectName(create.name, create.position);
  if (catalog_.Find(name)) {
    if (create.if_not_exists) return Command("CREATE SINK");
    throw SqlError(sqlstate::kDuplicateObject, fmt::format("sink \"{}\" already exists", name),
                   create.position);
  }
  PlannedSink planned =
      PlanSink(create, static_cast<uint32_t>(next_object_id_),
               static_cast<uint32_t>(session.streaming_parallelism), SinkPlanning::kCreate);
  planner::CatalogObjectPtr object = planned.object;
  std::shared_ptr<SinkWriter> writer = planned.runtime.writer;
  writer->Start(store_->committed_epoch());
  CommitCreateWithJob(object, std::move(planned.job));
  std::lock_guard sinks_lock(sinks_mutex_);
  sinks_.emplace(object->id, std::move(planned.runtime));
  return Command("CREATE SINK");
}

planner::CatalogObjectPtr Database::FindSink(const parser::QualifiedName& name,
                                             int position) const {
  std::string resolved = planner::ResolveObjectName(name, position);
  planner::CatalogObjectPtr object = catalog_.Find(resolved);
  if (!object || object->type != planner::ObjectType::kSink) {
    throw SqlError(sqlstate::kUndefinedObject, fmt::format("sink \"{}\" does not exist", resolved),
                   position);
  }
  return object;
}

parser::StatementPtr Database::ParseDefinition(const std::string& definition) {
  std::vector<parser::StatementPtr> statements = parser::Parse(definition);
  if (statements.size() != 1) throw SqlError("XX001", "not one statement");
  return std::move(statements[0]);
}

QueryResult Database::ExplainView(const parser::CreateMaterializedViewStatement& create,
                                  size_t parallelism, uint32_t plan_version) const {
  planner::BoundQuery query = planner::BindQuery(
      *create.query, catalog_, planner::QueryPurpose::kMaterializedView, plan_version);
  std::vector<std::string> lines = {"Logical plan:"};
  for (const std::string& line : planner::ExplainPlan(*query.root)) lines.push_back("  " + line);
  lines.push_back("Streaming plan:");
  std::optional<AggregateViewRows> view_rows = AggregateStoringViewRows(query, plan_version);
  std::string sink = fmt::format("Materialize into {} [state: {}]",
                                 planner::ResolveObjectName(create.name, create.position),
                                 view_rows     ? "rows by key, written by the aggregate"
                                 : query.keyed ? "rows by key"
                                               : "rows");
  for (const std::string& line :
       ExplainDataflow(query, parallelism, sink, view_rows ? view_rows->aggregate : nullptr)) {
    lines.push_back("  " + line);
  }
  return ExplainLines(lines);
}

QueryResult Database::Explain(const parser::ExplainStatement& explain,
                              const SessionContext& session) {
  SinkRuntime runtime;
  std::string name;
  if (explain.sink) {
    planner::CatalogObjectPtr object = FindSink(*explain.sink, explain.sink_position);
    name = object->name;
    std::lock_guard lock(sinks_mutex_);
    auto it = sinks_.find(object->id);
    if (it == sinks_.end()) {
      throw SqlError(sqlstate::kUndefinedObject, fmt::format("sink \"{}\" does not exist", name));
    }
    runtime = it->second;
  } else if (explain.statement && explain.statement->kind == parser::StatementKind::kCreateSink) {
    const auto& create = static_cast<const parser::CreateSinkStatement&>(*explain.statement);
    PlannedSink planned = PlanSink(create, 0, 0, SinkPlanning::kExplain);
    name = planned.object->name;
    runtime = std::move(planned.runtime);
  } else if (explain.statement && explain.statement->kind == parser::StatementKind::kSelect) {
    const auto& select = static_cast<const parser::SelectStatement&>(*explain.statement);
    planner::BoundQuery query = planner::BindQuery(select, catalog_, planner::QueryPurpose::kBatch);
    return ExplainLines(planner::ExplainPlan(*query.root));
  } else if (explain.view) {
    // The running view's plan: its text planned again as recovery plans it, with the
    // planner revision and the parallelism it was created with.
    std::string resolved = planner::ResolveObjectName(*explain.view, explain.view_position);
    planner::CatalogObjectPtr object = catalog_.Find(resolved);
    if (!object || object->type != planner::ObjectType::kMaterializedView) {
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("materialized view \"{}\" does not exist", resolved),
                     explain.view_position);
    }
    parser::StatementPtr statement = ParseDefinition(object->definition);
    if (statement->kind != parser::StatementKind::kCreateMaterializedView) {
      throw SqlError("XX001", fmt::format("the definition of \"{}\" is not a view's", resolved));
    }
    return ExplainView(static_cast<const parser::CreateMaterializedViewStatement&>(*statement),
                       object->parallelism > 0 ? object->parallelism : default_parallelism(),
                       object->plan_version);
  } else if (explain.statement &&
             explain.statement->kind == parser::StatementKind::kCreateMaterializedView) {
    return ExplainView(
        static_cast<const parser::CreateMaterializedViewStatement&>(*explain.statement),
        session.streaming_parallelism > 0 ? session.streaming_parallelism : default_parallelism(),
        options_.plan_version);
  } else {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "EXPLAIN shows queries, materialized views and sinks: EXPLAIN SELECT ..., "
                   "EXPLAIN CREATE MATERIALIZED VIEW ..., EXPLAIN MATERIALIZED VIEW name, "
                   "EXPLAIN CREATE SINK ..., or EXPLAIN SINK name",
                   explain.position);
  }
  QueryResult result;
  result.returns_rows = true;
  result.columns.push_back({"QUERY PLAN", TypeId::kVarchar});
  auto line = [&](std::string text) { result.rows.push_back({Value::String(std::move(text))}); };
  line(fmt::format("Sink \"{}\" from {}: {}", name, runtime.input, runtime.description));
  line(fmt::format("  delivery requested: {}", planner::DeliveryName(runtime.requested)));
  for (const std::string& stave : runtime.chain) line("  " + stave);
  result.command_tag = "EXPLAIN";
  return result;
}

QueryResult Database::AlterSink(const parser::AlterSinkStatement& alter) {
  planner::CatalogObjectPtr object = FindSink(alter.name, alter.position);
  std::shared_ptr<SinkWriter> writer;
  {
    std::lock_guard lock(sinks_mutex_);
    auto it = sinks_.find(object->id);
    if (it != sinks_.end()) writer = it->second.writer;
  }
  if (!writer) {
    throw SqlError(sqlstate::kUndefinedObject,
                   fmt::format("sink \"{}\" does not exist", object->name));
  }
  writer->SetPaused(alter.pause);
  engine_->Checkpoint();  // The next checkpoint records it, so a restart keeps it.
  return Command("ALTER SINK");
}

std::shared_ptr<Table> Database::FindTable(uint32_t id) const {
  std::lock_guard lock(tables_mutex_);
  auto it = tables_.find(id);
  return it == tables_.end() ? nullptr : it->second;
}

void Database::UpdateChangeLogs(JobSet* jobs, const std::set<uint32_t>& dropped,
                                storage::EpochBatch* batch) {
  for (const auto& object : catalog_.List()) {
    if (object->type != planner::ObjectType::kMaterializedView || dropped.count(object->id))
      continue;
    auto it = jobs->find(object->id);
    if (it == jobs->end()) continue;
    bool read = false;
    for (const auto& dependent : catalog_.Dependents(object->id))
      read |= !dropped.count(dependent->id);
    it->second->set_log_changes(read);
    if (!read && batch) batch->DeleteTableLog(object->id);
  }
}

void Database::CheckpointCoveringWrites() {
  engine_->Checkpoint(TableTargets());
  // A view over a view sees its input's changes of an epoch once that epoch committed: one
  // more checkpoint per level of views over views.
  std::map<uint32_t, int> depth;
  int max_depth = 0;
  for (const auto& object : catalog_.List()) {  // Ids ascend: inputs come before readers.
    int level = 0;
    for (uint32_t input : object->depends_on) level = std::max(level, depth[input] + 1);
    depth[object->id] = object->type == planner::ObjectType::kMaterializedView ? level : 0;
    max_depth = std::max(max_depth, depth[object->id]);
  }
  for (int level = 1; level < max_depth; ++level) {
    SourceTargets targets;
    uint64_t epoch = store_->committed_epoch();
    for (const auto& [id, object_depth] : depth) {
      if (object_depth > 0) targets[id] = epoch;
    }
    engine_->Checkpoint(targets);
  }
}

SourceTargets Database::TableTargets() const {
  std::lock_guard lock(tables_mutex_);
  SourceTargets targets;
  for (const auto& [id, table] : tables_) targets[id] = table->next_sequence();
  return targets;
}

DmlExecutor Database::MakeDml() {
  return DmlExecutor(
      &catalog_, store_.get(),
      [this](const planner::CatalogObject& object) { return FindTable(object.id); },
      [this](const parser::SelectStatement& select) { return Select(select); });
}

void Database::Commit(Transaction* transaction) {
  DmlExecutor::Commit(transaction, store_.get());
  engine_->Wake();
}

void Database::CommitCreate(const planner::CatalogObjectPtr& object, Engine::Change change) {
  uint64_t next_id = next_object_id_ + 1;
  engine_->ApplyChange([&](JobSet* jobs, storage::EpochBatch* batch) {
    if (change) change(jobs, batch);
    batch->PutCatalogEntry(object->id, planner::SerializeCatalogEntry(*object));
    batch->PutNextObjectId(next_id);
  });
  next_object_id_ = next_id;
  catalog_.Add(object);
}

void Database::CommitCreateWithJob(const planner::CatalogObjectPtr& object,
                                   std::unique_ptr<Job> job) {
  CommitCreate(object, [&](JobSet* jobs, storage::EpochBatch* batch) {
    // A new job starts at its input's beginning; Recover finds no position and starts its
    // operators (a global aggregate emits its first row into this very epoch).
    job->Recover(*store_, batch->epoch());
    jobs->emplace(object->id, std::move(job));
    for (uint32_t input : object->depends_on) {
      auto it = jobs->find(input);
      if (it != jobs->end()) it->second->set_log_changes(true);
    }
  });
}

QueryResult Database::CreateTable(const parser::CreateTableStatement& create) {
  std::lock_guard lock(ddl_mutex_);
  std::string name = planner::ResolveObjectName(create.name, create.position);
  if (catalog_.Find(name)) {
    if (create.if_not_exists) return Command("CREATE TABLE");
    throw SqlError(sqlstate::kDuplicateTable, fmt::format("relation \"{}\" already exists", name),
                   create.position);
  }
  planner::CatalogObjectPtr object = PlanTable(create, static_cast<uint32_t>(next_object_id_));
  auto table = std::make_shared<Table>(object, store_.get());
  CommitCreate(object);
  std::lock_guard tables_lock(tables_mutex_);
  tables_.emplace(object->id, std::move(table));
  return Command("CREATE TABLE");
}

QueryResult Database::CreateStream(const parser::CreateStreamStatement& create) {
  std::lock_guard lock(ddl_mutex_);
  std::string name = planner::ResolveObjectName(create.name, create.position);
  if (planner::CatalogObjectPtr existing = catalog_.Find(name)) {
    if (create.if_not_exists) return Command("CREATE STREAM");
    throw SqlError(sqlstate::kDuplicateTable, fmt::format("relation \"{}\" already exists", name),
                   create.position);
  }
  planner::CatalogObjectPtr object = PlanStream(create, static_cast<uint32_t>(next_object_id_));
  if (const planner::ConnectorSpec* spec = connectors_->Find(object->connector);
      spec && spec->probe_source) {
    try {
      spec->probe_source(object->options, object->columns, object->format);
    } catch (SqlError& error) {
      throw error.WithPositionIfUnset(create.position);
    }
  }
  CommitCreate(object);
  return Command("CREATE STREAM");
}

QueryResult Database::CreateView(const parser::CreateMaterializedViewStatement& create,
                                 const SessionContext& session) {
  std::lock_guard lock(ddl_mutex_);
  std::string name = planner::ResolveObjectName(create.name, create.position);
  if (planner::CatalogObjectPtr existing = catalog_.Find(name)) {
    if (create.if_not_exists) return Command("CREATE MATERIALIZED VIEW");
    throw SqlError(sqlstate::kDuplicateTable, fmt::format("relation \"{}\" already exists", name),
                   create.position);
  }
  auto planned =
      PlanView(create, static_cast<uint32_t>(next_object_id_),
               static_cast<uint32_t>(session.streaming_parallelism), options_.plan_version);
  planner::CatalogObjectPtr object = planned.first;
  std::unique_ptr<Job> job = std::move(planned.second);
  CommitCreateWithJob(object, std::move(job));
  // Over a table that already holds rows, the view returns only once it has read them all
  // and committed, so a SELECT right after sees them.
  bool reads_stored =
      std::any_of(object->depends_on.begin(), object->depends_on.end(), [this](uint32_t id) {
        planner::CatalogObjectPtr input = catalog_.FindById(id);
        return input && input->type != planner::ObjectType::kStream;
      });
  if (reads_stored) CheckpointCoveringWrites();
  return Command("CREATE MATERIALIZED VIEW");
}

QueryResult Database::Drop(const parser::DropStatement& drop) {
  std::lock_guard lock(ddl_mutex_);
  std::string name = planner::ResolveObjectName(drop.name, drop.position);
  std::string tag = "DROP " + TagWord(drop.object_kind);
  planner::CatalogObjectPtr object = catalog_.Find(name);
  if (!object || KindOf(object->type) != drop.object_kind) {
    if (object) {
      throw SqlError(sqlstate::kWrongObjectType,
                     fmt::format("\"{}\" is not a {}", name, KindWord(drop.object_kind)),
                     drop.position)
          .WithHint(fmt::format("Use DROP {} to remove a {}.", TagWord(*KindOf(object->type)),
                                planner::ObjectTypeName(object->type)));
    }
    if (drop.if_exists) {
      QueryResult result = Command(tag);
      result.notices.push_back(
          {"NOTICE", "00000",
           fmt::format("{} \"{}\" does not exist, skipping", KindWord(drop.object_kind), name)});
      return result;
    }
    throw SqlError(sqlstate::kUndefinedTable,
                   fmt::format("{} \"{}\" does not exist", KindWord(drop.object_kind), name),
                   drop.position);
  }
  // Everything to drop, dependents first.
  std::vector<planner::CatalogObjectPtr> victims;
  std::function<void(const planner::CatalogObjectPtr&)> collect =
      [&](const planner::CatalogObjectPtr& target) {
        for (const auto& dependent : catalog_.Dependents(target->id)) {
          if (!drop.cascade) {
            throw SqlError(sqlstate::kDependentObjectsStillExist,
                           fmt::format("cannot drop {} {} because other objects depend on it",
                                       planner::ObjectTypeName(object->type), name),
                           drop.position)
                .WithDetail(fmt::format("{} {} depends on {} {}",
                                        planner::ObjectTypeName(dependent->type), dependent->name,
                                        planner::ObjectTypeName(target->type), target->name))
                .WithHint("Use DROP ... CASCADE to drop the dependent objects too.");
          }
          collect(dependent);
        }
        victims.push_back(target);
      };
  collect(object);
  std::set<uint32_t> dropped;
  for (const auto& victim : victims) dropped.insert(victim->id);
  engine_->ApplyChange([&](JobSet* jobs, storage::EpochBatch* batch) {
    UpdateChangeLogs(jobs, dropped, batch);
    for (const auto& victim : victims) {
      jobs->erase(victim->id);
      batch->DeleteCatalogEntry(victim->id);
      batch->DeleteStateTables(StateTableId(victim->id, 0), StateTableId(victim->id + 1, 0));
      batch->DeleteSourcePositions(victim->id);
      batch->DeleteTableLog(victim->id);
      batch->DeleteDeadLetters(victim->id);
    }
  });
  for (const auto& victim : victims) {
    catalog_.Remove(victim->id);
    {
      std::lock_guard lock(tables_mutex_);
      tables_.erase(victim->id);
    }
    std::optional<SinkRuntime> sink;
    {
      std::lock_guard lock(sinks_mutex_);
      auto it = sinks_.find(victim->id);
      if (it != sinks_.end()) {
        sink = std::move(it->second);
        sinks_.erase(it);
      }
    }
    // Its owed epochs went with the batch; in the target, its progress row and prepared
    // transactions go now. A target that is away keeps them until a sink of the same name
    // is created again, which clears them.
    if (sink) {
      std::string error = sink->writer->DropTarget();
      if (!error.empty()) {
        spdlog::warn("sink \"{}\" dropped, but its target was not cleaned: {}", victim->name,
                     error);
      }
    }
  }
  return Command(tag);
}

QueryResult Database::ShowObjects(const parser::ShowObjectsStatement& show) {
  QueryResult result;
  result.returns_rows = true;
  result.columns.push_back({"Name", TypeId::kVarchar});
  if (show.object_kind == parser::ObjectKind::kStream) {
    result.columns.push_back({"Connector", TypeId::kVarchar});
  } else if (show.object_kind == parser::ObjectKind::kMaterializedView) {
    result.columns.push_back({"Definition", TypeId::kVarchar});
  } else if (show.object_kind == parser::ObjectKind::kSink) {
    // Never the definition: its options may hold a password.
    for (const char* column : {"From", "Target", "Delivery", "State"}) {
      result.columns.push_back({column, TypeId::kVarchar});
    }
  }
  for (const auto& object : catalog_.List()) {
    if (KindOf(object->type) != show.object_kind) continue;
    std::vector<Value> row = {Value::String(object->name)};
    if (show.object_kind == parser::ObjectKind::kStream)
      row.push_back(Value::String(object->connector));
    if (show.object_kind == parser::ObjectKind::kMaterializedView) {
      row.push_back(Value::String(RedactSqlSecrets(object->definition)));
    }
    if (show.object_kind == parser::ObjectKind::kSink) {
      std::lock_guard lock(sinks_mutex_);
      auto it = sinks_.find(object->id);
      if (it == sinks_.end()) continue;
      const SinkRuntime& sink = it->second;
      row.push_back(Value::String(sink.input));
      row.push_back(Value::String(sink.description));
      row.push_back(Value::String(std::string(planner::DeliveryName(sink.requested))));
      row.push_back(Value::String(sink.writer->status().state));
    }
    result.rows.push_back(std::move(row));
  }
  std::sort(result.rows.begin(), result.rows.end(),
            [](const auto& a, const auto& b) { return a[0].string_value() < b[0].string_value(); });
  result.command_tag = "SHOW";
  return result;
}

QueryResult Database::Select(const parser::SelectStatement& select, const SessionContext& session) {
  planner::BoundQuery query = planner::BindQuery(select, catalog_, planner::QueryPurpose::kBatch);
  for (const auto& input : query.inputs) {
    if (std::optional<SqlError> error = engine_->JobError(input->id)) {
      throw SqlError(error->sqlstate(), fmt::format("materialized view \"{}\" stopped: {}",
                                                    input->name, error->what()))
          .WithHint(!error->hint().empty()
                        ? error->hint()
                        : "Drop the view, or fix the cause and restart the server to retry from "
                          "the last checkpoint.");
    }
  }
  // A fresh snapshot, taken after binding so every object the query found is in it: views
  // as of the last committed epoch (RocksDB holds nothing else of theirs), tables with
  // every acknowledged write.
  std::shared_ptr<const storage::Snapshot> snapshot = store_->NewSnapshot().ValueOrThrow();
  return ExecuteBatchQuery(query, *snapshot, session.cancellation,
                           session.query_memory_bytes.value_or(options_.query_memory_bytes));
}

}  // namespace stave::executor
