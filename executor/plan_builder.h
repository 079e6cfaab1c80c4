#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include <functional>

#include "executor/job.h"
#include "executor/metrics.h"
#include "executor/operators/hash_aggregate_operator.h"
#include "executor/runtime/sink_writer.h"
#include "executor/table.h"
#include "planner/catalog.h"
#include "planner/logical_plan.h"
#include "storage/store.h"

namespace stave::executor {

/// State tables of one object: its id in the high bits, the operator's slot in the low 8,
/// so dropping an object deletes one contiguous range of table ids.
inline uint32_t StateTableId(uint32_t object_id, uint32_t slot) { return (object_id << 8) | slot; }
/// Slot 0 of a materialized view holds its rows (what SELECT reads).
inline constexpr uint32_t kViewRowsSlot = 0;

/// The most parallel instances a stage may have (ViewLogSequence has 16 bits for them).
inline constexpr size_t kMaxParallelism = 1024;

/// How a view's dataflow runs.
struct JobOptions {
  size_t parallelism = 1;  ///< Instances per stage.
  /// True while the sources must pause (the engine's hard memory cap); may be null.
  const std::atomic<bool>* throttle = nullptr;
  /// Memory for committed state kept cached (an aggregate's groups), over all instances.
  size_t state_cache_bytes = size_t{512} << 20;
};

/// Builds the dataflow of a materialized view from its bound query: a reader of the input,
/// then stages of `options.parallelism` instances each, split at every aggregation (a hash
/// exchange by its group keys), the last one ending in the materialization into the view's
/// rows. `tables` gives the runtime of a table the view reads.
/// Throws SqlError if the plan has a node streaming execution does not support.
std::unique_ptr<Job> BuildJob(const planner::CatalogObject& view, const planner::BoundQuery& query,
                              const storage::Store* store, Metrics* metrics,
                              const std::function<std::shared_ptr<Table>(uint32_t)>& tables,
                              const JobOptions& options);

/// Builds the dataflow of a sink: its query's stages (parallel only past an aggregation),
/// then one instance of the sink operator, which hands each epoch to `writer`.
/// `key_columns`: the positions of the target's key among the sink's columns (upsert), or
/// empty (append). The job tells `writer` of every committed checkpoint.
std::unique_ptr<Job> BuildSinkJob(const planner::CatalogObject& sink,
                                  const planner::BoundQuery& query, const storage::Store* store,
                                  Metrics* metrics,
                                  const std::function<std::shared_ptr<Table>(uint32_t)>& tables,
                                  const JobOptions& options, std::shared_ptr<SinkWriter> writer,
                                  std::vector<size_t> key_columns);

/// EXPLAIN's streaming plan of a materialized view's query: the dataflow's stages in the
/// order rows flow, each with its parallel instances, what feeds it (a source, or an
/// exchange from an earlier stage, by hash of keys or round-robin) and its operators with
/// the state they keep, ending in `sink` (e.g. "Materialize into v"). `view_rows`: the
/// aggregate that keeps its groups in the view's rows (AggregateStoringViewRows), if any.
std::vector<std::string> ExplainDataflow(const planner::BoundQuery& query, size_t parallelism,
                                         const std::string& sink,
                                         const planner::AggregateNode* view_rows = nullptr);

/// An aggregate that keeps its groups' states in its view's rows, each after its group's row.
struct AggregateViewRows {
  const planner::AggregateNode* aggregate = nullptr;
  HashAggregateOperator::ViewRows rows;  ///< Which of its columns the view's rows show.
};

/// The aggregate of a view planned with `plan_version` that keeps its groups' states in the
/// view's rows, if any. One does from revision 6 on (planner::kPlanVersion) when the plan
/// ends in an aggregate, alone or under a projection of its columns as they are, the view's
/// rows are keyed by its group keys in order, and no window closes (closing drops a group's
/// state but not its row).
std::optional<AggregateViewRows> AggregateStoringViewRows(const planner::BoundQuery& query,
                                                          uint32_t plan_version);

}  // namespace stave::executor
