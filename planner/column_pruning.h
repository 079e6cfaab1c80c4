#pragma once

#include "planner/logical_plan.h"

namespace stave::planner {

/// Narrows the inputs of a materialized view's joins to the columns something reads: the
/// join's keys, its condition, its state cleaning, and the nodes above it. Each side that
/// carries other columns gets a projection of the read ones below the join, so that the
/// join's state (every row of each side, in RocksDB) and the exchanges into it hold only
/// those. Nexmark's q4, for one, joins whole auctions and bids, strings included, to read
/// five of their seventeen columns.
///
/// The root's output is unchanged. Projections, filters, aggregates and top-N pass on what
/// they read (a top-N keeps whole rows in state too, and is narrowed likewise); any other
/// node reads all of its input. The state a join keeps depends on this
/// pass, so a view planned without it is planned again without it (kPlanVersion).
PlanNodePtr PruneJoinInputs(const PlanNodePtr& root);

}  // namespace stave::planner
