#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "common/cancellation.h"
#include "executor/copy_from.h"
#include "executor/dml.h"
#include "executor/engine.h"
#include "executor/metrics.h"
#include "executor/query_result.h"
#include "executor/recovery_progress.h"
#include "executor/roles.h"
#include "executor/runtime/sink_writer.h"
#include "executor/table.h"
#include "executor/transaction.h"
#include "parser/ast.h"
#include "parser/copy_statement.h"
#include "planner/catalog.h"
#include "planner/connector_spec.h"
#include "planner/delivery.h"
#include "storage/store.h"

namespace stave::executor {

struct DatabaseOptions {
  std::string data_directory = "data";
  /// Zero: checkpoints only on demand (CHECKPOINT) and at shutdown.
  std::chrono::milliseconds checkpoint_interval{1000};
  /// Whether checkpoint_interval was given explicitly (a flag), which then wins over a
  /// value stored by ALTER SYSTEM, as a command-line setting does in PostgreSQL.
  bool checkpoint_interval_explicit = false;
  /// Whether clients may arm failpoints at runtime (SET stave.failpoints = '...'). Off in
  /// production: no client may crash a server started without it.
  bool enable_failpoints = false;
  /// Uncommitted state the views may hold in memory before a checkpoint is taken early.
  size_t state_memory_bytes = size_t{256} << 20;
  /// Committed state each view keeps cached in memory (an aggregate's groups), over all its
  /// instances: a budget per view, not yet one for the whole server.
  size_t state_cache_bytes = size_t{512} << 20;
  /// The most committed state each view's (or sink's) dataflow may hold; past it the job
  /// stops with 54000 (0: no limit). ALTER SYSTEM SET view_state_limit changes it.
  size_t view_state_limit_bytes = 0;
  /// Whether view_state_limit_bytes was given explicitly (a flag): it then wins over a
  /// value stored by ALTER SYSTEM.
  bool view_state_limit_explicit = false;
  /// Threads running the dataflows; 0: one per core.
  size_t workers = 0;
  /// Parallel instances per stage of a view created without SET streaming_parallelism;
  /// 0: one per worker.
  size_t streaming_parallelism = 0;
  /// The planner revision new views are planned with. Only tests set an older one: the
  /// views a data directory of an earlier release holds were planned that way.
  uint32_t plan_version = planner::kPlanVersion;
  /// What an ad-hoc SELECT may hold in memory (executor/batch/query_memory.h) when its
  /// session did not SET query_memory_limit; 0: no limit.
  size_t query_memory_bytes = size_t{1} << 30;
  /// Where recovery reports its progress (the admin endpoint reads it before the database
  /// is open); null: the database keeps its own.
  std::shared_ptr<RecoveryProgress> recovery_progress;
};

/// The settings of the session a statement runs in that change what it does.
struct SessionContext {
  /// SET streaming_parallelism: parallel instances per stage of the views the session
  /// creates; 0: the server's default.
  size_t streaming_parallelism = 0;
  /// The client's request to stop the statement (a CancelRequest, statement_timeout);
  /// ad-hoc queries check it between chunks. Null: nobody can cancel it.
  const Cancellation* cancellation = nullptr;
  /// SET query_memory_limit: what an ad-hoc SELECT may hold in memory (0: no limit);
  /// nullopt: the server's default.
  std::optional<size_t> query_memory_bytes;
};

/// One Stave database: the store, the catalog, the engine running the views, and the
/// execution of statements that touch them (DDL, SELECT, SHOW, CHECKPOINT). Session-level
/// statements (SET, BEGIN, ...) belong to the server's sessions. Thread-safe.
class Database {
 public:
  /// Opens the data directory and recovers: every stream and view of the catalog is
  /// planned again from its definition, every view's dataflow resumes from the last
  /// committed epoch. Throws SqlError if the directory cannot be opened or recovered.
  static std::unique_ptr<Database> Open(const DatabaseOptions& options,
                                        const planner::ConnectorRegistry* connectors);
  ~Database();

  /// Executes one statement. DML goes into `transaction` when the session has one open,
  /// else commits on its own. Throws SqlError.
  QueryResult Execute(const parser::Statement& statement, Transaction* transaction = nullptr,
                      const SessionContext& session = {});

  /// The shape of what `statement` would return, without running it: `returns_rows` and
  /// `columns` (no rows, no command tag). Binding it also infers the types of its
  /// parameters `$n` still untyped (see parser::ParameterSlot). Statements that only read
  /// (EXPLAIN, SHOW ...) are run to learn their columns. Throws SqlError as Execute would
  /// for binding errors.
  QueryResult Describe(const parser::Statement& statement);

  /// The parallelism of views created without SET streaming_parallelism.
  size_t default_parallelism() const;

  /// Commits a session's transaction atomically and durably. Throws SqlError (then
  /// nothing of it was written).
  void Commit(Transaction* transaction);

  /// COPY table [(columns)] FROM STDIN: resolves the table and its columns (42P01; 42809
  /// for a stream, view or sink; 42703) and returns what decodes the client's data into
  /// rows of `transaction`, which the caller commits (database_copy.cc).
  std::unique_ptr<CopyFrom> StartCopyFrom(const parser::CopyStatement& copy,
                                          Transaction* transaction);

  /// Stops the engine after a final checkpoint. Idempotent.
  void Shutdown();

  /// Changes the checkpoint interval server-wide. With `persist` (ALTER SYSTEM) it is also
  /// committed with the next epoch and used at later starts.
  void SetCheckpointInterval(std::chrono::milliseconds interval, bool persist);

  /// Changes view_state_limit server-wide (0: none); with `persist` (ALTER SYSTEM) it is
  /// also committed and used at later starts. Jobs stopped by the old limit restart from
  /// their last committed epoch: they stop again if their state is still over it.
  void SetViewStateLimit(size_t bytes, bool persist);

  /// A sink as the admin API and the system tables show it: never its options (they may
  /// hold a password), only its target's description.
  struct SinkDescription {
    uint32_t id = 0;
    std::string name;
    std::string connector;
    std::string input;   ///< What it reads: a name, or "(query)".
    std::string target;  ///< Without secrets.
    planner::Delivery requested = planner::Delivery::kExactlyOnce;
    planner::Delivery derived = planner::Delivery::kExactlyOnce;
    SinkStatus status;
  };
  std::vector<SinkDescription> DescribeSinks() const;

  /// A running job: the dataflow of a materialized view or of a sink.
  struct JobDescription {
    JobGraph graph;
    std::string kind;  ///< "materialized view" or "sink".
    size_t parallelism = 1;
    /// Only for a view: its definition (a sink's may hold a password).
    std::string definition;
    /// Approximate bytes of the job's state tables in RocksDB (a view's rows included).
    uint64_t state_bytes = 0;
    /// Its sources' backfills together (rows summed; running while any runs); none if no
    /// source backfills (a job reading streams only).
    std::optional<BackfillStatus> backfill;
  };
  std::vector<JobDescription> DescribeJobs();

  /// Takes a checkpoint that covers every write acknowledged before the call (as CHECKPOINT
  /// does) and returns the epoch committed then. Throws SqlError.
  uint64_t CheckpointNow();

  /// BACKUP TO and POST /api/v1/backups: takes a checkpoint covering every acknowledged
  /// write, then writes a consistent copy of the data directory into `directory` (absolute;
  /// new or empty) and returns the epoch the copy holds. A server started on the copy
  /// restores it. Throws SqlError: 42602 for a relative path, 58P02 when the target exists
  /// and is not empty, 58P01 when its parent does not exist, 58030 for an I/O failure.
  uint64_t Backup(const std::string& directory);

  /// Approximate bytes of committed state on disk, over all objects.
  uint64_t ApproximateStateBytes() const { return store_->ApproximateSize(); }

  Metrics* metrics() { return &metrics_; }
  /// The recovery at start: its progress, then its final counts.
  const RecoveryProgress& recovery_progress() const { return *options_.recovery_progress; }
  const DatabaseOptions& options() const { return options_; }
  const planner::Catalog& catalog() const { return catalog_; }
  /// The state, for inspection (tests, system tables); writes go through the engine only.
  const storage::Store& store() const { return *store_; }
  Engine* engine() { return engine_.get(); }
  /// The users clients log in as (CREATE/ALTER/DROP USER).
  Roles* roles() { return roles_.get(); }

 private:
  Database(const DatabaseOptions& options, const planner::ConnectorRegistry* connectors,
           std::unique_ptr<storage::Store> store);

  /// Builds the catalog object of CREATE STREAM (validating its connector and options).
  planner::CatalogObjectPtr PlanStream(const parser::CreateStreamStatement& create, uint32_t id);
  /// Builds the catalog object of CREATE TABLE.
  planner::CatalogObjectPtr PlanTable(const parser::CreateTableStatement& create, uint32_t id);
  /// Builds the catalog object and the job of CREATE MATERIALIZED VIEW.
  /// `parallelism`: as SET asked (0: the default), stored with the view; `plan_version`: the
  /// planner revision (a new view's, or the one a recovered view was created with).
  std::pair<planner::CatalogObjectPtr, std::unique_ptr<Job>> PlanView(
      const parser::CreateMaterializedViewStatement& create, uint32_t id, uint32_t parallelism,
      uint32_t plan_version = planner::kPlanVersion);
  /// A sink as it runs: its writer, and what EXPLAIN SINK, SHOW SINKS and the system table
  /// say about it.
  struct SinkRuntime {
    std::shared_ptr<SinkWriter> writer;
    std::string input;        ///< What it reads (a name, or "(query)").
    std::string description;  ///< Its target, without secrets.
    planner::Delivery requested = planner::Delivery::kExactlyOnce;
    planner::Delivery derived = planner::Delivery::kExactlyOnce;
    std::vector<std::string> chain;  ///< EXPLAIN SINK's lines.
  };
  /// A sink planned but not yet running.
  struct PlannedSink {
    planner::CatalogObjectPtr object;
    std::unique_ptr<Job> job;
    SinkRuntime runtime;
  };
  enum class SinkPlanning {
    kExplain,  ///< Only the catalog object and the delivery chain; nothing is checked.
    kCreate,   ///< Refuses a delivery the chain cannot keep; checks the target.
    kRecover,  ///< Builds the job from the last checkpoint's record.
  };
  /// Plans CREATE SINK: binds its query, checks its options and the delivery it asks for,
  /// and (unless explaining) opens its target and builds its job, `parallelism` and
  /// `plan_version` as for views.
  PlannedSink PlanSink(const parser::CreateSinkStatement& create, uint32_t id, uint32_t parallelism,
                       SinkPlanning planning, uint32_t plan_version = planner::kPlanVersion);
  QueryResult CreateSink(const parser::CreateSinkStatement& create, const SessionContext& session);
  QueryResult Explain(const parser::ExplainStatement& explain, const SessionContext& session);
  /// A view's logical and streaming plans, as planned with `plan_version` and run by
  /// `parallelism` instances per stage.
  QueryResult ExplainView(const parser::CreateMaterializedViewStatement& create, size_t parallelism,
                          uint32_t plan_version) const;
  QueryResult AlterSink(const parser::AlterSinkStatement& alter);
  /// The sink named `name`, or a 42704 error.
  planner::CatalogObjectPtr FindSink(const parser::QualifiedName& name, int position) const;
  void Recover(JobSet* jobs);
  /// The job of a view or sink in the catalog, built anew from its definition and
  /// recovered at the last committed checkpoint, not started; a sink's writer is replaced
  /// by one reconciled with that checkpoint.
  std::unique_ptr<Job> RebuildJob(const planner::CatalogObject& object, uint64_t start_epoch);
  /// The one statement a catalog entry's definition holds; XX001 when it holds another count.
  static parser::StatementPtr ParseDefinition(const std::string& definition);
  /// Every job rebuilt: how the engine restarts after a storage failure.
  JobSet RebuildJobs();
  /// Throws unless the catalog in memory holds exactly the objects the store holds.
  void CheckCatalogMatchesStore() const;
  /// The view_state_limit to start with: the flag's if given, else ALTER SYSTEM's, else
  /// the flag's default.
  size_t StoredViewStateLimit(size_t flag_value) const;
  /// Adds the tables of the stave_catalog schema (checkpoint history, ...).
  void RegisterSystemTables();
  /// Adds the system tables of the engine's jobs and their operators.
  void RegisterJobSystemTables();
  /// SHOW JOBS, SHOW CHECKPOINTS: a system table's rows.
  QueryResult ShowSystemTable(const parser::ShowSystemTableStatement& show);

  QueryResult CreateStream(const parser::CreateStreamStatement& create);
  QueryResult CreateView(const parser::CreateMaterializedViewStatement& create,
                         const SessionContext& session);
  QueryResult CreateTable(const parser::CreateTableStatement& create);
  /// Commits a DDL change: the catalog entry of `object` and what `change` adds.
  void CommitCreate(const planner::CatalogObjectPtr& object, Engine::Change change = nullptr);
  /// Commits a new view's or sink's catalog entry and starts its job in the same epoch; the
  /// views it reads log their changes from then on.
  void CommitCreateWithJob(const planner::CatalogObjectPtr& object, std::unique_ptr<Job> job);
  std::shared_ptr<Table> FindTable(uint32_t id) const;
  /// Where every table's log ends now: what CHECKPOINT must cover.
  SourceTargets TableTargets() const;
  /// Commits checkpoints until every view, also views over views, reflects every table
  /// write acknowledged before the call.
  void CheckpointCoveringWrites();
  /// Turns each view's change log on while other views read it.
  void UpdateChangeLogs(JobSet* jobs, const std::set<uint32_t>& dropped,
                        storage::EpochBatch* batch);
  DmlExecutor MakeDml();
  QueryResult Drop(const parser::DropStatement& drop);
  QueryResult ShowObjects(const parser::ShowObjectsStatement& show);
  QueryResult Select(const parser::SelectStatement& select, const SessionContext& session = {});

  DatabaseOptions options_;
  const planner::ConnectorRegistry* connectors_;
  std::unique_ptr<storage::Store> store_;
  Metrics metrics_;
  planner::Catalog catalog_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Roles> roles_;
  std::mutex ddl_mutex_;  // One DDL statement at a time: names and ids are decided under it.
  mutable std::mutex tables_mutex_;
  std::map<uint32_t, std::shared_ptr<Table>> tables_;  // GUARDED_BY(tables_mutex_)
  uint64_t next_object_id_;                            // GUARDED_BY(ddl_mutex_)
  mutable std::mutex sinks_mutex_;
  std::map<uint32_t, SinkRuntime> sinks_;  // GUARDED_BY(sinks_mutex_)
  std::atomic<uint64_t>* statements_total_ = nullptr;
};

}  // namespace stave::executor
