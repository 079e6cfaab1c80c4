#pragma once

#include "executor/operators/stream_operator.h"

namespace stave::executor {

/// Emits each input row as many times as its count column says (NULL or below 1: not at
/// all), without that column: INTERSECT ALL and EXCEPT ALL turn a distinct row and its count
/// back into copies. Stateless: a change of a row's count arrives as the old row (a delete
/// of its old count of copies) and the new one (an insert of its new count), so the copies
/// stay right without remembering them. Update pairs come out as plain deletes and inserts,
/// as the two sides' numbers of copies differ.
class RepeatOperator : public StreamOperator {
 public:
  explicit RepeatOperator(size_t count_column) : count_column_(count_column) {}

  void OnChunk(Chunk chunk) override { Emit(Apply(count_column_, chunk)); }

  /// The repetition itself, shared with the batch engine. The count column is the last.
  static Chunk Apply(size_t count_column, const Chunk& chunk);

 private:
  size_t count_column_;
};

}  // namespace stave::executor
