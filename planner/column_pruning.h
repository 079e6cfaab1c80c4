#pragma once

#include "planner/logical_plan.h"

namespace stave::planner {

/// Which narrowings PruneColumns makes: the state a view keeps follows its plan's shape, so
/// a view is planned again with the rules of the planner revision that created it
/// (kPlanVersion).
struct PruningRules {
  /// Revision 3: a time window's input carries only the columns read above the window (and
  /// its time column). HOP copies each row into every window it falls in, and the copies
  /// cross an exchange: Nexmark's q5 counted bids per auction and window, and copied each
  /// bid's three strings five times to do so.
  bool time_window_inputs = true;
};

/// Narrows the inputs of a materialized view's joins to the columns something reads: the
/// join's keys, its condition, its state cleaning, and the nodes above it. Each side that
/// carries other columns gets a projection of the read ones below the join, so that the
/// join's state (every row of each side, in RocksDB) and the exchanges into it hold only
/// those. Nexmark's q4, for one, joins whole auctions and bids, strings included, to read
/// five of their seventeen columns. Time windows' inputs likewise (PruningRules).
///
/// The root's output is unchanged. Projections, filters, aggregates and top-N pass on what
/// they read (a top-N keeps whole rows in state too, and is narrowed likewise), and so do
/// time windows under `rules`; any other node reads all of its input.
PlanNodePtr PruneColumns(const PlanNodePtr& root, const PruningRules& rules);

}  // namespace stave::planner
