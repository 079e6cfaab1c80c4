// Restarting jobs in-process: after a failed checkpoint (the engine rebuilds every job once
// the data directory takes writes again) and after view_state_limit was raised.

#include <spdlog/spdlog.h>

#include <map>
#include <optional>

#include "common/sql_error.h"
#include "executor/batch/query_memory.h"
#include "executor/database.h"
#include "parser/parser.h"
#include "storage/key_codec.h"

namespace stave::executor {

namespace {
constexpr std::string_view kViewStateLimitSetting = "view_state_limit";
}  // namespace

std::unique_ptr<Job> Database::RebuildJob(const planner::CatalogObject& object,
                                          uint64_t start_epoch) {
  parser::StatementPtr parsed = ParseDefinition(object.definition);
  const parser::Statement& statement = *parsed;
  std::unique_ptr<Job> job;
  std::shared_ptr<SinkWriter> writer;
  if (statement.kind == parser::StatementKind::kCreateMaterializedView) {
    job = PlanView(static_cast<const parser::CreateMaterializedViewStatement&>(statement),
                   object.id, object.parallelism, object.plan_version)
              .second;
  } else if (statement.kind == parser::StatementKind::kCreateSink) {
    PlannedSink planned =
        PlanSink(static_cast<const parser::CreateSinkStatement&>(statement), object.id,
                 object.parallelism, SinkPlanning::kRecover, object.plan_version);
    job = std::move(planned.job);
    writer = planned.runtime.writer;
    std::lock_guard lock(sinks_mutex_);
    auto it = sinks_.find(object.id);
    // The old writer stops first: what it prepared is resolved by the new one's start.
    if (it != sinks_.end()) {
      it->second.writer->Stop();
      it->second = std::move(planned.runtime);
    } else {
      sinks_.emplace(object.id, std::move(planned.runtime));
    }
  } else {
    throw SqlError("XX001", "not a view or a sink");
  }
  job->Recover(*store_, start_epoch);
  if (writer) writer->Start(store_->committed_epoch());
  return job;
}

JobSet Database::RebuildJobs() {
  // Under the DDL lock: none can commit while the engine is stopped, and one in flight when
  // the checkpoint failed was refused -- but a refused one whose write failed only at its
  // sync may still have reached the disk, and after a reopen the store holds it. The jobs
  // are rebuilt only while the catalog in memory is the one the store holds.
  std::lock_guard ddl_lock(ddl_mutex_);
  CheckCatalogMatchesStore();
  JobSet jobs;
  for (const planner::CatalogObjectPtr& object : catalog_.List()) {
    if (object->type != planner::ObjectType::kMaterializedView &&
        object->type != planner::ObjectType::kSink) {
      continue;
    }
    try {
      jobs.emplace(object->id, RebuildJob(*object, store_->committed_epoch()));
    } catch (const SqlError& error) {
      throw SqlError(error.sqlstate(), fmt::format("cannot restart {} \"{}\": {}",
                                                   planner::ObjectTypeName(object->type),
                                                   object->name, error.what()));
    }
  }
  UpdateChangeLogs(&jobs, {}, nullptr);
  return jobs;
}

void Database::CheckCatalogMatchesStore() const {
  std::map<uint32_t, std::pair<std::string, std::string>> stored;  // Id → name, definition.
  for (const auto& [id, entry] : store_->LoadCatalogEntries().ValueOrThrow()) {
    std::optional<planner::CatalogObject> object = planner::DeserializeCatalogEntry(entry);
    if (object) stored[id] = {object->name, object->definition};
  }
  std::map<uint32_t, std::pair<std::string, std::string>> loaded;
  for (const planner::CatalogObjectPtr& object : catalog_.List())
    loaded[object->id] = {object->name, object->definition};
  if (stored == loaded) return;
  throw SqlError("XX000",
                 "the catalog on disk differs from the one in memory: a DDL statement reported "
                 "as failed during the storage failure reached the disk after all")
      .WithHint("Restart the server: it loads the catalog the data directory holds.");
}

void Database::SetViewStateLimit(size_t bytes, bool persist) {
  std::lock_guard ddl_lock(ddl_mutex_);
  engine_->set_view_state_limit(bytes);
  std::set<uint32_t> stopped = engine_->JobsOverStateLimit();
  if (!persist && stopped.empty()) return;
  std::string stored;
  storage::AppendBigEndian64(bytes, &stored);
  engine_->ApplyChange([&](JobSet* jobs, storage::EpochBatch* batch) {
    if (persist) batch->PutSetting(kViewStateLimitSetting, stored);
    for (uint32_t id : stopped) {
      planner::CatalogObjectPtr object = catalog_.FindById(id);
      auto it = jobs->find(id);
      if (!object || it == jobs->end()) continue;
      try {
        // Replaced in this epoch: the engine starts it with this epoch's barrier, from the
        // checkpoint of the epoch the old one stopped after.
        std::unique_ptr<Job> job = RebuildJob(*object, batch->epoch());
        it->second->Stop();
        it->second = std::move(job);
        bool read = !catalog_.Dependents(id).empty();
        if (object->type == planner::ObjectType::kMaterializedView)
          it->second->set_log_changes(read);
        spdlog::info("{} \"{}\" restarts from its last checkpoint under view_state_limit {}",
                     planner::ObjectTypeName(object->type), object->name, FormatByteSize(bytes));
      } catch (const SqlError& error) {
        spdlog::error("cannot restart \"{}\": {}", object->name, error.what());
      }
    }
  });
}

size_t Database::StoredViewStateLimit(size_t flag_value) const {
  if (options_.view_state_limit_explicit) return flag_value;
  std::optional<std::string> stored = store_->GetSetting(kViewStateLimitSetting).ValueOrThrow();
  if (!stored || stored->size() != 8) return flag_value;
  size_t bytes = storage::ReadBigEndian64(*stored);
  spdlog::info("view_state_limit {}, as set by ALTER SYSTEM", FormatByteSize(bytes));
  return bytes;
}

}  // namespace stave::executor
