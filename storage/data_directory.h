#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace stave::storage {

/// The on-disk format this build reads and writes. A new number means a data directory of
/// the old one cannot be read as it is (a changed key layout, value encoding or RocksDB
/// setting that older files do not satisfy); such a change must come with a migration.
inline constexpr int kDataFormatVersion = 1;

/// The file in the data directory (next to RocksDB's) that records its format version, as
/// one line: "stave data directory format <version>".
inline constexpr std::string_view kFormatFileName = "STAVE_FORMAT";

/// Checks that `directory` is a Stave data directory of this format, or makes it one: a
/// missing or empty directory is created with the current version's marker. Refuses (with a
/// message that says why and what to do) a directory whose version is unknown or newer
/// than this build's, a malformed marker, and a non-empty directory that is not a data
/// directory. A data directory written before the marker existed (RocksDB files, no marker)
/// is version 1: the marker is added.
Status PrepareDataDirectory(const std::string& directory);

/// Writes the current version's marker into `directory`, synced: a crash leaves either no
/// marker or a complete one.
Status WriteFormatFile(const std::string& directory);

/// Syncs a directory's entries (a new or renamed file in it) to disk.
Status SyncDirectory(const std::string& directory);

}  // namespace stave::storage
