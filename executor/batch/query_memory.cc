#include "executor/batch/query_memory.h"

#include <fmt/format.h>

#include "common/sql_error.h"

namespace stave::executor {
namespace {

// A std::string keeps up to 15 characters in place; longer ones take a heap block.
constexpr size_t kInlineStringCapacity = 15;

size_t StringBytes(const std::string& text) {
  return sizeof(std::string) + (text.size() > kInlineStringCapacity ? text.size() + 1 : 0);
}

}  // namespace

void QueryMemory::Charge(size_t bytes) {
  if (limit_ != 0 && (bytes > limit_ || used_ > limit_ - bytes)) {
    throw SqlError("53200", "out of memory")
        .WithDetail(fmt::format("The query needs more than its memory limit of {}.",
                                FormatByteSize(limit_)))
        .WithHint(
            "Read fewer rows or columns (a WHERE clause, a LIMIT on a view with fewer rows), or "
            "raise the limit with SET query_memory_limit.");
  }
  used_ += bytes;
  if (used_ > peak_) peak_ = used_;
}

void QueryMemory::Release(size_t bytes) { used_ -= bytes; }

size_t RowBytes(const std::vector<Value>& row, const std::vector<DataType>& types) {
  size_t bytes = sizeof(row) + row.size() * sizeof(Value);
  for (size_t i = 0; i < row.size() && i < types.size(); ++i) {
    if (types[i].physical() == PhysicalType::kString && !row[i].is_null()) {
      // The Value holds the std::string in place; only a long one's characters are extra.
      bytes += StringBytes(row[i].string_value()) - sizeof(std::string);
    }
  }
  return bytes;
}

size_t ChunkBytes(const Chunk& chunk) {
  size_t bytes = sizeof(Chunk) + chunk.ops.size();
  for (const Column& column : chunk.columns) {
    bytes += sizeof(Column) + column.nulls.size() + column.ints.size() * sizeof(int64_t) +
             column.doubles.size() * sizeof(double) + column.decimals.size() * sizeof(Decimal);
    for (const std::string& text : column.strings) bytes += StringBytes(text);
  }
  return bytes;
}

size_t ChunksBytes(const std::vector<Chunk>& chunks) {
  size_t bytes = 0;
  for (const Chunk& chunk : chunks) bytes += ChunkBytes(chunk);
  return bytes;
}

std::string FormatByteSize(size_t bytes) {
  constexpr const char* kUnits[] = {"kB", "MB", "GB", "TB"};
  if (bytes == 0 || bytes % 1024 != 0) return std::to_string(bytes) + (bytes == 0 ? "" : "B");
  size_t unit = 0;
  bytes /= 1024;
  while (unit + 1 < std::size(kUnits) && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", bytes, kUnits[unit]);
}

}  // namespace stave::executor
