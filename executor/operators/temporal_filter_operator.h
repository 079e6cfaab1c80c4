#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "executor/operators/stream_operator.h"
#include "planner/logical_plan.h"
#include "storage/state_table.h"

namespace stave::executor {

/// A temporal filter (`WHERE ts > now() - INTERVAL '1' HOUR` in a view): passes a row while
/// the epoch's processing time is below the row's expiry (`node->time + offset`), and
/// retracts it when an epoch's time passes it. now() is the time of the last barrier this
/// operator passed (storage::EpochBatch::time): rows between two barriers are judged by the
/// first one's, and at each barrier the rows the new time passed are retracted before the
/// barrier goes on, so a committed epoch holds exactly the rows whose expiry is above its
/// time. That time is committed in the state with the epoch, so a replay after a crash
/// judges the replayed rows by the same time the first run did.
///
/// State: the rows in the result, keyed by the whole row (each instance is fed by an
/// exchange on every column, so its rows are those of its virtual nodes), each with its
/// expiry and count; and the current time under the empty key. The rows are indexed in
/// memory by expiry; Start rebuilds the index from the state this instance owns. An expired
/// row is deleted from state, so state holds only the rows in the result.
class TemporalFilterOperator : public StreamOperator {
 public:
  TemporalFilterOperator(std::shared_ptr<const planner::TemporalFilterNode> node,
                         storage::StateTable state, size_t instance = 0, size_t parallelism = 1);

  void Start() override;
  void OnChunk(Chunk chunk) override;
  void OnBarrier(storage::EpochBatch* batch) override;
  size_t BufferedBytes() const override { return state_.buffered_bytes(); }

  /// Rows (distinct) held for retraction (for tests).
  size_t held_rows() const;

 private:
  struct Held {
    int64_t expiry = 0;
    int64_t count = 0;
  };
  std::optional<Held> Load(const std::string& key) const;
  void Store(const std::string& key, const Held& held);
  std::vector<Value> DecodeKeyRow(std::string_view key) const;
  /// Retracts the rows whose expiry the current time reached.
  void RetractExpired();

  std::shared_ptr<const planner::TemporalFilterNode> node_;
  storage::StateTable state_;
  size_t instance_;
  size_t parallelism_;
  std::vector<DataType> types_;
  int64_t now_ = INT64_MIN;  // No barrier yet: every row with a time is in.
  std::map<int64_t, std::set<std::string>> expiry_index_;
};

}  // namespace stave::executor
