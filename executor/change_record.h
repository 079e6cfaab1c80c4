#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

/// The watermark one parallel instance of a view's materialization had at the end of an
/// epoch (the one that flowed out of the view's plan into it), and how many instances its
/// run has: a reader of the view's changes takes the minimum over the instances of a run.
struct InstanceWatermark {
  uint32_t parallelism = 0;
  int64_t watermark = INT64_MIN;

  /// The parallelism, then the watermark, big-endian.
  static constexpr size_t kEncodedBytes = 12;
  std::string Encode() const;
  /// Nullopt if `bytes` is not an encoded InstanceWatermark.
  static std::optional<InstanceWatermark> Decode(std::string_view bytes);
};

/// A change log record: the row changes of one table commit or of one view epoch, as the
/// readers of the object's changelog receive them, and for a view that carries event time
/// the watermark of the instance that wrote it (a record may hold that alone).
std::string EncodeChangeRecord(const std::vector<RowChange>& changes,
                               const storage::RowTypes& types,
                               std::optional<InstanceWatermark> watermark = std::nullopt);
/// The same for the rows of `changes` (its first types.size() columns), each of the kind its
/// op says, with no watermark.
std::string EncodeChangeRecord(const Chunk& changes, const storage::RowTypes& types);
/// Appends the record's rows to `chunk`, and sets `*watermark` to its watermark if it has
/// one (and `watermark` is not null). Returns false if it is malformed.
bool DecodeChangeRecord(std::string_view record, const storage::RowTypes& types, Chunk* chunk,
                        std::optional<InstanceWatermark>* watermark = nullptr);

/// The sequence of a record in a view's change log: each parallel instance of the view's
/// materialization writes one record per epoch that changed its rows, ordered by epoch.
/// (A table's log numbers its commits 0, 1, 2, ...)
inline uint64_t ViewLogSequence(uint64_t epoch, uint32_t instance) {
  return (epoch << 16) | instance;
}
/// The instance that wrote the record at `sequence` of a view's change log.
inline uint32_t ViewLogInstance(uint64_t sequence) {
  return static_cast<uint32_t>(sequence & 0xFFFF);
}

}  // namespace stave::executor
