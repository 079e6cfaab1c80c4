#pragma once

#include "executor/operators/stream_operator.h"

namespace stave::executor {

/// UNION ALL: the rows of both inputs, as they come. Its stage is fed by one exchange per
/// input, both by every column, so all changes of equal rows meet in one instance, in order.
class UnionOperator : public StreamOperator {
 public:
  void OnChunk(Chunk chunk) override { Emit(std::move(chunk)); }
};

}  // namespace stave::executor
