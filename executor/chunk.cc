#include "executor/chunk.h"

#include <algorithm>

#include "storage/key_codec.h"

namespace stave::executor {

void Column::Reserve(size_t rows) {
  nulls.reserve(rows);
  switch (type.physical()) {
    case PhysicalType::kInt64:
      ints.reserve(rows);
      break;
    case PhysicalType::kFloat64:
      doubles.reserve(rows);
      break;
    case PhysicalType::kString:
      strings.reserve(rows);
      break;
    case PhysicalType::kDecimal:
      decimals.reserve(rows);
      break;
  }
}

void Column::AppendNull() {
  nulls.push_back(1);
  switch (type.physical()) {
    case PhysicalType::kInt64:
      ints.push_back(0);
      break;
    case PhysicalType::kFloat64:
      doubles.push_back(0);
      break;
    case PhysicalType::kString:
      strings.emplace_back();
      break;
    case PhysicalType::kDecimal:
      decimals.emplace_back();
      break;
  }
}

void Column::AppendInt(int64_t value) {
  nulls.push_back(0);
  ints.push_back(value);
}

void Column::AppendDouble(double value) {
  nulls.push_back(0);
  doubles.push_back(value);
}

void Column::AppendString(std::string value) {
  nulls.push_back(0);
  strings.push_back(std::move(value));
}

void Column::AppendDecimal(const Decimal& value) {
  nulls.push_back(0);
  decimals.push_back(value);
}

void Column::AppendValue(const Value& value) {
  if (value.is_null()) {
    AppendNull();
    return;
  }
  switch (type.physical()) {
    case PhysicalType::kInt64:
      AppendInt(value.int_value());
      break;
    case PhysicalType::kFloat64:
      AppendDouble(value.double_value());
      break;
    case PhysicalType::kString:
      AppendString(value.string_value());
      break;
    case PhysicalType::kDecimal:
      AppendDecimal(value.decimal_value());
      break;
  }
}

void Column::AppendFrom(const Column& other, size_t row) {
  nulls.push_back(other.nulls[row]);
  switch (type.physical()) {
    case PhysicalType::kInt64:
      ints.push_back(other.ints[row]);
      break;
    case PhysicalType::kFloat64:
      doubles.push_back(other.doubles[row]);
      break;
    case PhysicalType::kString:
      strings.push_back(other.strings[row]);
      break;
    case PhysicalType::kDecimal:
      decimals.push_back(other.decimals[row]);
      break;
  }
}

void Column::AppendRange(const Column& other, size_t begin, size_t end) {
  nulls.insert(nulls.end(), other.nulls.begin() + begin, other.nulls.begin() + end);
  switch (type.physical()) {
    case PhysicalType::kInt64:
      ints.insert(ints.end(), other.ints.begin() + begin, other.ints.begin() + end);
      break;
    case PhysicalType::kFloat64:
      doubles.insert(doubles.end(), other.doubles.begin() + begin, other.doubles.begin() + end);
      break;
    case PhysicalType::kString:
      strings.insert(strings.end(), other.strings.begin() + begin, other.strings.begin() + end);
      break;
    case PhysicalType::kDecimal:
      decimals.insert(decimals.end(), other.decimals.begin() + begin, other.decimals.begin() + end);
      break;
  }
}

namespace {

template <typename T>
void AppendAt(const std::vector<T>& from, const uint32_t* rows, size_t count, std::vector<T>* to) {
  size_t at = to->size();
  to->resize(at + count);
  T* out = to->data() + at;
  for (size_t i = 0; i < count; ++i) out[i] = from[rows[i]];
}

}  // namespace

void Column::AppendRows(const Column& other, const uint32_t* rows, size_t count) {
  AppendAt(other.nulls, rows, count, &nulls);
  switch (type.physical()) {
    case PhysicalType::kInt64:
      AppendAt(other.ints, rows, count, &ints);
      break;
    case PhysicalType::kFloat64:
      AppendAt(other.doubles, rows, count, &doubles);
      break;
    case PhysicalType::kString:
      AppendAt(other.strings, rows, count, &strings);
      break;
    case PhysicalType::kDecimal:
      AppendAt(other.decimals, rows, count, &decimals);
      break;
  }
}

bool Column::SameValue(size_t row, const Column& other, size_t other_row) const {
  if (nulls[row] || other.nulls[other_row]) return nulls[row] == other.nulls[other_row];
  switch (type.physical()) {
    case PhysicalType::kInt64:
      return ints[row] == other.ints[other_row];
    case PhysicalType::kFloat64:
      return doubles[row] == other.doubles[other_row];
    case PhysicalType::kString:
      return strings[row] == other.strings[other_row];
    case PhysicalType::kDecimal:
      return decimals[row] == other.decimals[other_row];
  }
  return false;
}

void Column::Truncate(size_t rows) {
  nulls.resize(std::min(rows, nulls.size()));
  switch (type.physical()) {
    case PhysicalType::kInt64:
      ints.resize(nulls.size());
      break;
    case PhysicalType::kFloat64:
      doubles.resize(nulls.size());
      break;
    case PhysicalType::kString:
      strings.resize(nulls.size());
      break;
    case PhysicalType::kDecimal:
      decimals.resize(nulls.size());
      break;
  }
}

size_t Column::MemoryBytes() const {
  size_t bytes = nulls.capacity() + ints.capacity() * sizeof(int64_t) +
                 doubles.capacity() * sizeof(double) + strings.capacity() * sizeof(std::string) +
                 decimals.capacity() * sizeof(Decimal);
  for (const std::string& string : strings) {
    if (string.capacity() > 15) bytes += string.capacity();  // Beyond the inline buffer.
  }
  return bytes;
}

Value Column::GetValue(size_t row) const {
  if (nulls[row]) return Value::Null();
  switch (type.physical()) {
    case PhysicalType::kInt64:
      return Value::Int(ints[row]);
    case PhysicalType::kFloat64:
      return Value::Double(doubles[row]);
    case PhysicalType::kString:
      return Value::String(strings[row]);
    case PhysicalType::kDecimal:
      return Value::Numeric(decimals[row]);
  }
  return Value::Null();
}

void Column::AppendKey(size_t row, std::string* out) const {
  if (nulls[row]) return storage::AppendKeyNull(out);
  switch (type.physical()) {
    case PhysicalType::kInt64:
      return storage::AppendKeyInt(ints[row], out);
    case PhysicalType::kFloat64:
      return storage::AppendKeyDouble(doubles[row], out);
    case PhysicalType::kString:
      return storage::AppendKeyString(strings[row], out);
    case PhysicalType::kDecimal:
      return storage::AppendKeyNumeric(decimals[row], out);
  }
}

Chunk Chunk::WithTypes(const std::vector<DataType>& types) {
  Chunk chunk;
  for (DataType type : types) chunk.columns.emplace_back(type);
  return chunk;
}

void Chunk::AppendRow(const std::vector<Value>& row, RowOp op) {
  for (size_t i = 0; i < columns.size(); ++i) columns[i].AppendValue(row[i]);
  ops.push_back(op);
}

std::vector<Value> Chunk::GetRow(size_t row) const {
  std::vector<Value> values;
  values.reserve(columns.size());
  for (const Column& column : columns) values.push_back(column.GetValue(row));
  return values;
}

Chunk Chunk::Select(const std::vector<uint8_t>& keep) const {
  // Positions first, then one gather per column: a branch per row and column on a flag
  // that is set at random (a hash exchange's split) would be mispredicted half the time.
  std::vector<uint32_t> rows(keep.size());
  size_t kept = 0;
  for (size_t row = 0; row < keep.size(); ++row) {
    rows[kept] = static_cast<uint32_t>(row);
    kept += keep[row] != 0;
  }
  return Gather(rows.data(), kept);
}

Chunk Chunk::Gather(const uint32_t* rows, size_t count) const {
  Chunk out;
  out.columns.reserve(columns.size());
  for (const Column& column : columns) {
    Column& gathered = out.columns.emplace_back(column.type);
    gathered.AppendRows(column, rows, count);
  }
  out.ops.resize(count);
  for (size_t i = 0; i < count; ++i) out.ops[i] = ops[rows[i]];
  return out;
}

void Chunk::AppendRange(const Chunk& other, size_t begin, size_t end) {
  for (size_t c = 0; c < columns.size(); ++c) columns[c].AppendRange(other.columns[c], begin, end);
  ops.insert(ops.end(), other.ops.begin() + begin, other.ops.begin() + end);
}

bool Chunk::SameValues(size_t a, size_t b) const {
  for (const Column& column : columns) {
    if (!column.SameValue(a, column, b)) return false;
  }
  return true;
}

void Chunk::Truncate(size_t rows) {
  for (Column& column : columns) column.Truncate(rows);
  ops.resize(std::min(rows, ops.size()));
}

size_t Chunk::MemoryBytes() const {
  size_t bytes = ops.capacity();
  for (const Column& column : columns) bytes += column.MemoryBytes();
  return bytes;
}

size_t Chunk::EstimatedBytes() const {
  size_t bytes = ops.size();
  for (const Column& column : columns) {
    bytes += (column.ints.size() + column.doubles.size()) * 8 + column.decimals.size() * 16;
    for (const std::string& text : column.strings) bytes += text.size();
  }
  return bytes;
}

}  // namespace stave::executor
