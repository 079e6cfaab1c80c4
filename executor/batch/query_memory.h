#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/value.h"
#include "executor/chunk.h"

namespace stave::executor {

/// The memory budget of one ad-hoc SELECT (SET query_memory_limit). The batch executor holds
/// whole intermediate results — an operator's input and output chunks, a sort's rows, a hash
/// join's sides, an aggregate's groups — so what it holds is what it charges here, and a
/// query that would outgrow its budget fails with 53200 out_of_memory instead of taking the
/// server down. The figures are estimates of the bytes held (payload plus container
/// overhead), not allocator statistics; they err on the high side. Used by one thread.
class QueryMemory {
 public:
  /// `limit_bytes` 0: no limit.
  explicit QueryMemory(size_t limit_bytes) : limit_(limit_bytes) {}

  QueryMemory(const QueryMemory&) = delete;
  QueryMemory& operator=(const QueryMemory&) = delete;

  /// Counts `bytes` more as held. Throws SqlError 53200 if the total would pass the limit
  /// (and then counts nothing).
  void Charge(size_t bytes);
  /// Counts `bytes` fewer. REQUIRES: at most what is charged.
  void Release(size_t bytes);

  size_t used() const { return used_; }
  size_t peak() const { return peak_; }
  size_t limit() const { return limit_; }

 private:
  size_t limit_;
  size_t used_ = 0;
  size_t peak_ = 0;
};

/// Memory an operator holds while it runs (a hash table, sorted rows), given back when it
/// returns or throws.
class MemoryReservation {
 public:
  explicit MemoryReservation(QueryMemory* memory) : memory_(memory) {}
  ~MemoryReservation() { memory_->Release(bytes_); }

  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;

  /// Charges `bytes` more to the query; throws as QueryMemory::Charge.
  void Grow(size_t bytes) {
    memory_->Charge(bytes);
    bytes_ += bytes;
  }

 private:
  QueryMemory* memory_;
  size_t bytes_ = 0;
};

/// Estimated bytes held by a row of values of `types` (one per value; a value past the
/// end of `types` counts as a number).
size_t RowBytes(const std::vector<Value>& row, const std::vector<DataType>& types);
/// Estimated bytes held by a chunk's columns.
size_t ChunkBytes(const Chunk& chunk);
size_t ChunksBytes(const std::vector<Chunk>& chunks);

/// How SHOW prints a memory size: PostgreSQL's style, in the largest unit that divides it
/// ("64MB", "1GB", "1536kB", "0").
std::string FormatByteSize(size_t bytes);

}  // namespace stave::executor
