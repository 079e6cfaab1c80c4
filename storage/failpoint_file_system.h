#pragma once

#include <memory>

#include <rocksdb/file_system.h>

namespace stave::storage {

/// The file system RocksDB writes the data directory through: the default one, except that
/// the failpoints `storage_write_no_space` and `storage_sync_error`, armed with `error`,
/// make every write fail as a full disk does (ENOSPC, before any byte is written) and every
/// sync fail as a failing disk does (EIO). Unarmed it only forwards, at the cost of one
/// relaxed atomic load per call. How the tests reach disk faults without a small disk.
std::shared_ptr<rocksdb::FileSystem> NewFailpointFileSystem(
    std::shared_ptr<rocksdb::FileSystem> target);

}  // namespace stave::storage
