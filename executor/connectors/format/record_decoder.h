#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"
#include "executor/chunk.h"

namespace stave::executor {

/// A column a record's payload fills (as opposed to the metadata columns a source fills
/// itself, such as `_partition` or `_offset`).
struct PayloadColumn {
  size_t index = 0;  ///< The column's position in the chunk.
  std::string name;  ///< Matched exactly (case-sensitively) against JSON field names.
  DataType type;     ///< Any type of common/data_type.h except kUnknown.
};

/// Turns one record's payload (a Kafka message value) into one value per payload column.
///
/// Not thread-safe: a decoder keeps reusable buffers, so each source reader owns its own.
class RecordDecoder {
 public:
  virtual ~RecordDecoder() = default;

  /// Appends exactly one value to each payload column of `chunk`, and touches nothing else:
  /// the caller appends the metadata columns and the row's op.
  ///
  /// If the record cannot be decoded, returns false, leaves every column of `chunk` exactly
  /// as it was and sets `*error` to one line (at most about 200 bytes, safe to log: control
  /// characters and bytes that are not UTF-8 are escaped) that names the field and what was
  /// wrong, e.g. `field "id": expected a bigint, got the string "x"`. Never throws on bad
  /// input, whatever its bytes.
  ///
  /// REQUIRES: `chunk` has a column of the right type at every payload column's index.
  virtual bool Decode(std::string_view payload, Chunk* chunk, std::string* error) = 0;
};

/// A decoder for `format` ("json", "csv" or "bytes", any case) filling `columns`.
///
/// `format_options` holds the format's own options, keys with the format's prefix
/// (`csv.delimiter`); JSON has none. Throws SqlError(22023) for an unknown format, an
/// unknown option or a bad option value, and SqlError(XX000) for a column without a type.
/// REQUIRES: column names are distinct.
std::unique_ptr<RecordDecoder> MakeRecordDecoder(
    std::string_view format, std::vector<PayloadColumn> columns,
    const std::map<std::string, std::string>& format_options);

}  // namespace stave::executor
