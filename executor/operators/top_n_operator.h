#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "executor/operators/stream_operator.h"
#include "planner/logical_plan.h"
#include "storage/row_codec.h"
#include "storage/state_table.h"

namespace stave::executor {

/// The rows of rank at most N in each partition (row_number, rank or dense_rank over
/// PARTITION BY … ORDER BY …), over a changelog, for streaming. Each output row is an input
/// row followed by its rank.
///
/// State: one entry per partition key, holding every row of the partition (not only the
/// top N) in window order, each with its multiplicity, so that a delete from the top N can
/// be answered exactly by promoting the next row. For each chunk, the operator ranks each
/// touched partition before and after applying the chunk's rows and emits the difference:
/// retractions of rows that left the top N or changed rank, insertions of rows that entered
/// it or took a new rank. A row's multiplicity may go below zero for a moment (a retraction
/// overtaking its insert through two upstream instances); such rows are not ranked.
///
/// Rows arrive hash-exchanged on the partition key, so an instance sees whole partitions.
/// Peers (equal ORDER BY values) are ordered by their encoded bytes: row_number gives them
/// distinct numbers in a fixed, arbitrary order, as PostgreSQL does in its own way.
/// Partitions touched in an epoch stay decoded in memory until its barrier, which writes
/// them into the epoch's batch; a restart reads the committed entries back.
///
/// Keeping a whole partition in one entry makes a change cost a read and a write of the
/// partition (StateTable serves point reads only): partitions with very many rows pay for
/// their size. Over an append-only input only the rows of rank up to N are kept, so the
/// state stays bounded by N (and the peers at rank N) per partition.
class TopNOperator : public StreamOperator {
 public:
  TopNOperator(std::shared_ptr<const planner::TopNNode> node, storage::StateTable state);

  void OnChunk(Chunk chunk) override;
  void OnBarrier(storage::EpochBatch* batch) override;
  size_t BufferedBytes() const override { return state_.buffered_bytes() + cached_bytes_; }

  /// One row of a partition: its ORDER BY values, the encoded input row, and how many
  /// copies of it there are.
  struct Entry {
    std::vector<Value> order;
    std::string row;
    int64_t count = 0;
  };

 private:
  struct Partition {
    std::vector<Entry> entries;  // In window order, peers by row bytes.
    bool dirty = false;
  };

  Partition* Load(const std::string& key);
  std::string Encode(const std::vector<Entry>& entries) const;
  std::vector<Entry> Decode(std::string_view bytes) const;
  /// The partition's top rows: (encoded row, rank), one pair per copy.
  std::vector<std::pair<std::string, int64_t>> TopRows(const std::vector<Entry>& entries) const;
  /// Over an append-only input: drops the rows ranked past the limit, which no later input
  /// can bring back (nothing above them is ever deleted).
  void DropRowsPastLimit(Partition* partition) const;
  /// Adds `sign` copies of a row to a partition, keeping the entries in order.
  void Apply(Partition* partition, std::vector<Value> order, std::string row, int sign);

  std::shared_ptr<const planner::TopNNode> node_;
  storage::StateTable state_;
  storage::RowTypes input_types_;
  storage::RowTypes order_types_;
  std::vector<DataType> output_types_;
  std::unordered_map<std::string, Partition> partitions_;
  size_t cached_bytes_ = 0;
};

}  // namespace stave::executor
