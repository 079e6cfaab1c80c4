#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"
#include "common/value.h"

namespace stave::executor {

/// The kind of change a changelog row carries. An update travels as a pair: the old row
/// (kUpdateDelete) directly followed by the new one (kUpdateInsert).
enum class RowOp : uint8_t { kInsert, kDelete, kUpdateDelete, kUpdateInsert };

/// +1 for rows that add (insert, update-after), -1 for rows that remove.
inline int RowSign(RowOp op) { return op == RowOp::kInsert || op == RowOp::kUpdateInsert ? 1 : -1; }

/// One column of a chunk: values of one physical type plus a null flag per row. Only the
/// vector matching the type's physical representation is used.
struct Column {
  DataType type;
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<std::string> strings;
  std::vector<Decimal> decimals;
  std::vector<uint8_t> nulls;  ///< 1 = NULL.

  Column() = default;
  explicit Column(DataType column_type) : type(column_type) {}

  size_t size() const { return nulls.size(); }
  bool IsNull(size_t row) const { return nulls[row] != 0; }
  void Reserve(size_t rows);

  void AppendNull();
  void AppendInt(int64_t value);
  void AppendDouble(double value);
  void AppendString(std::string value);
  void AppendDecimal(const Decimal& value);
  void AppendValue(const Value& value);
  /// Appends row `row` of `other` (same physical type).
  void AppendFrom(const Column& other, size_t row);
  /// Appends rows [begin, end) of `other` (same physical type).
  void AppendRange(const Column& other, size_t begin, size_t end);
  /// Appends the rows of `other` at positions `rows[0..count)`, in that order (same physical
  /// type): one pass per vector, with no branch per row.
  void AppendRows(const Column& other, const uint32_t* rows, size_t count);
  /// Whether row `row` holds the same value as row `other_row` of `other` (same physical
  /// type), as Value's == has it: NULLs alike, doubles by ==, numerics digit for digit.
  bool SameValue(size_t row, const Column& other, size_t other_row) const;
  /// Keeps the first `rows` rows.
  void Truncate(size_t rows);
  /// The memory the column's values take, roughly.
  size_t MemoryBytes() const;

  Value GetValue(size_t row) const;
  /// Appends row `row` as storage::EncodeKeyValue would encode GetValue(row), without
  /// building the Value (a string is not copied).
  void AppendKey(size_t row, std::string* out) const;
};

/// A batch of changelog rows in columns: the unit data moves in between operators, so that
/// per-row costs (virtual calls, allocations) are paid once per chunk instead.
struct Chunk {
  std::vector<Column> columns;
  std::vector<RowOp> ops;

  size_t size() const { return ops.size(); }
  bool empty() const { return ops.empty(); }

  /// An empty chunk with columns of these types.
  static Chunk WithTypes(const std::vector<DataType>& types);
  /// Appends one row; `row` has one Value per column.
  void AppendRow(const std::vector<Value>& row, RowOp op);
  std::vector<Value> GetRow(size_t row) const;
  /// An estimate of the rows' size as they travel, for the byte counters of metrics: 8 bytes
  /// per integer, float, date or timestamp value, 16 per numeric, a string's length, and one
  /// byte per row for its kind of change. Not the memory the chunk takes.
  size_t EstimatedBytes() const;
  /// Appends rows [begin, end) of `other` (same column types).
  void AppendRange(const Chunk& other, size_t begin, size_t end);
  /// Whether rows `a` and `b` hold the same values (Column::SameValue), whatever their ops.
  bool SameValues(size_t a, size_t b) const;
  /// Keeps the first `rows` rows. Truncate(0) empties the chunk and keeps its memory.
  void Truncate(size_t rows);
  /// The memory the chunk's rows take, roughly (unlike EstimatedBytes).
  size_t MemoryBytes() const;
  /// The rows whose `keep` flag is set, in order.
  Chunk Select(const std::vector<uint8_t>& keep) const;
  /// The rows at positions `rows[0..count)`, in that order.
  Chunk Gather(const uint32_t* rows, size_t count) const;
};

/// One row of a chunk's columns, as storage::EncodeRowFrom reads a row's fields: straight
/// from the columns, with no Value per field.
struct ChunkRow {
  const Chunk& chunk;
  size_t row;
  bool IsNull(size_t i) const { return chunk.columns[i].IsNull(row); }
  int64_t Int(size_t i) const { return chunk.columns[i].ints[row]; }
  double Double(size_t i) const { return chunk.columns[i].doubles[row]; }
  std::string_view String(size_t i) const { return chunk.columns[i].strings[row]; }
  const Decimal& Numeric(size_t i) const { return chunk.columns[i].decimals[row]; }
};

/// Rows per chunk produced by sources and batch scans.
inline constexpr size_t kChunkRows = 1024;

}  // namespace stave::executor
