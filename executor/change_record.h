#pragma once

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

}  // namespace stave::executor
