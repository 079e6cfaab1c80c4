#pragma once

#include "common/cancellation.h"
#include "executor/query_result.h"
#include "planner/logical_plan.h"
#include "storage/store.h"

namespace stave::executor {

/// Runs an ad-hoc SELECT to completion over one snapshot: materialized views are read as
/// their rows at the snapshot's epoch, so every view a query touches is seen at the same
/// point. Filters and projections share the streaming operators' code; aggregation, sort
/// and limit are batch-only. Throws SqlError for runtime errors, 57014 once `cancellation`
/// (may be null) asks the query to stop, and 53200 once the intermediate results and the
/// result would hold more than `memory_limit_bytes` (0: no limit; see QueryMemory).
QueryResult ExecuteBatchQuery(const planner::BoundQuery& query, const storage::Snapshot& snapshot,
                              const Cancellation* cancellation = nullptr,
                              size_t memory_limit_bytes = 0);

}  // namespace stave::executor
