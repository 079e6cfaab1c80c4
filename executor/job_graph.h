#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/connectors/backfill_progress.h"

namespace stave::executor {

/// One vertex of a running dataflow as the admin API and the system tables show it: a
/// source task reading an input, or a stage of parallel operator instances. Counters are
/// totals since the job started; rates are the reader's business (two samples).
struct JobGraphNode {
  std::string id;                      ///< "source0", "stage1": unique within the job.
  std::string kind;                    ///< "source" or "stage".
  std::string label;                   ///< "stream orders", "Stage 1".
  uint32_t input = 0;                  ///< A source: the catalog id it reads (0: VALUES).
  std::string position_name;           ///< A source: the name its position is stored under.
  std::vector<std::string> operators;  ///< A stage's operators in dataflow order.
  size_t parallelism = 1;              ///< Instances (a source has one).
  uint64_t rows_in = 0;                ///< Row changes received (a source: read).
  /// Row changes sent downstream; of the last stage, those the view or sink applied.
  uint64_t rows_out = 0;
  /// Estimated bytes of those row changes (Chunk::EstimatedBytes): in and out.
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  /// Instances whose output is blocked by a full downstream channel right now.
  size_t backpressured = 0;
  size_t buffered_bytes = 0;  ///< Uncommitted state held by the stage's operators.
  /// A source reading a log with a known end (Kafka): per partition, the records it is
  /// behind.
  std::vector<std::pair<int32_t, int64_t>> lag;
  /// A source reading a table or a view: its backfill of their existing rows.
  std::optional<BackfillStatus> backfill;
};

/// An exchange between two vertices.
struct JobGraphEdge {
  std::string from;
  std::string to;
  std::string routing;  ///< "hash" or "round-robin".
};

/// A snapshot of one job's dataflow: its shape and its counters.
struct JobGraph {
  uint32_t id = 0;
  std::string name;
  std::vector<JobGraphNode> nodes;
  std::vector<JobGraphEdge> edges;
  bool failed = false;
  std::string error;  ///< Why it failed, empty while it runs.
};

}  // namespace stave::executor
