#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "executor/chunk.h"
#include "planner/bound_expression.h"

namespace stave::executor {

/// The parallel instance that owns a virtual node: instances own equal, contiguous ranges
/// of the virtual nodes, so changing the parallelism (between restarts) moves whole ranges.
size_t InstanceOfVirtualNode(uint16_t virtual_node, size_t parallelism);

/// The instance that owns a memcomparable state key (StateTable's virtual node of it).
size_t InstanceOfKey(std::string_view key, size_t parallelism);

/// The routing of a hash exchange: splits each chunk into one chunk per downstream
/// instance. By key, every row goes to the instance owning its key's virtual node, the
/// same virtual node its state is stored under, so all changes of one key meet in one
/// instance, in order. Append-only input needs no key: whole chunks go round-robin.
class Partitioner {
 public:
  /// Whole chunks to each output in turn.
  static Partitioner RoundRobin(size_t outputs);
  /// Rows by the memcomparable encoding of `keys` (evaluated over the chunk).
  static Partitioner ByKey(size_t outputs, std::vector<planner::BoundExprPtr> keys);

  size_t outputs() const { return outputs_; }

  /// One chunk per output, in output order (empty ones included).
  std::vector<Chunk> Split(Chunk chunk);

 private:
  Partitioner(size_t outputs, std::vector<planner::BoundExprPtr> keys, bool round_robin)
      : outputs_(outputs), keys_(std::move(keys)), round_robin_(round_robin) {}

  size_t outputs_;
  std::vector<planner::BoundExprPtr> keys_;
  bool round_robin_;
  size_t next_ = 0;
};

}  // namespace stave::executor
