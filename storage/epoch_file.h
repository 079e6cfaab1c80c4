#pragma once

#include <string>

#include <rocksdb/options.h>
#include <rocksdb/status.h>

#include "storage/store.h"

namespace stave::storage {

/// Writes the records of `batch`, its state runs' included, into a synced SST file at `path`,
/// with the effect the batch would have if written: for a key written several times only its last
/// write, and range deletions that drop what the batch wrote before them in the range and, once the
/// file is ingested, what the database held there. `options` are the database's.
///
/// Why: a large epoch commits as one ingested file instead of one write (docs/decisions.md,
/// "Large epochs commit as files"). Inserting a write into RocksDB's memtable is a search of
/// a skip list, a cache miss at each level; building a file from sorted records costs a
/// fraction of that, and the file is in place at once, with no write-ahead log and no flush.
rocksdb::Status WriteEpochFile(const WriteBatch& batch, const rocksdb::Options& options,
                               const std::string& path);

}  // namespace stave::storage
