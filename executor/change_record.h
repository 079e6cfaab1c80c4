#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/value.h"
#include "executor/chunk.h"
#include "storage/row_codec.h"

namespace stave::executor {

/// One row change of a table or a materialized view: `row` holds the object's changelog
/// columns; `key` is the row's memcomparable key.
struct RowChange {
  RowOp op = RowOp::kInsert;
  std::string key;
  std::vector<Value> row;
};

/// A change log record: the row changes of one table commit or of one view epoch, as the
/// readers of the object's changelog receive them.
std::string EncodeChangeRecord(const std::vector<RowChange>& changes,
                               const storage::RowTypes& types);
/// Appends the record's rows to `chunk`. Returns false if it is malformed.
bool DecodeChangeRecord(std::string_view record, const storage::RowTypes& types, Chunk* chunk);

/// The sequence of a record in a view's change log: each parallel instance of the view's
/// materialization writes one record per epoch that changed its rows, ordered by epoch.
/// (A table's log numbers its commits 0, 1, 2, ...)
inline uint64_t ViewLogSequence(uint64_t epoch, uint32_t instance) {
  return (epoch << 16) | instance;
}

}  // namespace stave::executor
