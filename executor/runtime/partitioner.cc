#include "executor/runtime/partitioner.h"

#include "executor/expression_evaluator.h"
#include "storage/key_codec.h"
#include "storage/state_table.h"

namespace stave::executor {

size_t InstanceOfVirtualNode(uint16_t virtual_node, size_t parallelism) {
  return static_cast<size_t>(virtual_node) * parallelism / storage::kVirtualNodeCount;
}

size_t InstanceOfKey(std::string_view key, size_t parallelism) {
  return InstanceOfVirtualNode(storage::VirtualNodeOf(key), parallelism);
}

Partitioner Partitioner::RoundRobin(size_t outputs) { return Partitioner(outputs, {}, true); }

Partitioner Partitioner::ByKey(size_t outputs, std::vector<planner::BoundExprPtr> keys) {
  return Partitioner(outputs, std::move(keys), false);
}

std::vector<Chunk> Partitioner::Split(Chunk chunk) {
  std::vector<Chunk> parts(outputs_);
  if (outputs_ == 1) {
    parts[0] = std::move(chunk);
    return parts;
  }
  if (round_robin_) {
    parts[next_] = std::move(chunk);
    next_ = (next_ + 1) % outputs_;
    return parts;
  }
  std::vector<Column> keys;
  keys.reserve(keys_.size());
  for (const auto& key : keys_) keys.push_back(Evaluate(*key, chunk));
  std::vector<uint32_t> owner(chunk.size());
  std::vector<size_t> counts(outputs_);
  std::string encoded;
  for (size_t row = 0; row < chunk.size(); ++row) {
    encoded.clear();
    for (const Column& key : keys) key.AppendKey(row, &encoded);
    owner[row] = static_cast<uint32_t>(InstanceOfKey(encoded, outputs_));
    ++counts[owner[row]];
  }
  for (size_t output = 0; output < outputs_; ++output) {
    if (counts[output] == chunk.size()) {
      parts[output] = std::move(chunk);  // All rows go one way: no copy.
      return parts;
    }
  }
  // Each output's row positions, in order and side by side (a counting sort), then one
  // gather per output.
  std::vector<size_t> next(outputs_);
  for (size_t output = 1; output < outputs_; ++output) {
    next[output] = next[output - 1] + counts[output - 1];
  }
  std::vector<uint32_t> rows(chunk.size());
  for (size_t row = 0; row < chunk.size(); ++row) {
    rows[next[owner[row]]++] = static_cast<uint32_t>(row);
  }
  for (size_t output = 0, begin = 0; output < outputs_; begin += counts[output], ++output) {
    if (counts[output] > 0) parts[output] = chunk.Gather(rows.data() + begin, counts[output]);
  }
  return parts;
}

}  // namespace stave::executor
