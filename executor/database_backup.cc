#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "common/sql_error.h"
#include "executor/database.h"
#include "storage/store.h"

namespace stave::executor {

uint64_t Database::Backup(const std::string& directory) {
  namespace fs = std::filesystem;
  // As COPY TO a file in PostgreSQL: a relative path would depend on where the server was
  // started, which its clients cannot know.
  fs::path target(directory);
  if (directory.empty() || !target.is_absolute()) {
    throw SqlError("42602", "relative path not allowed for BACKUP TO: \"" + directory + "\"")
        .WithHint("Give an absolute path on the server's machine.");
  }
  target = target.lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "/backups/x/" is "/backups/x".
  std::error_code error;
  fs::path data = fs::weakly_canonical(options_.data_directory, error);
  fs::path resolved = fs::weakly_canonical(target, error);
  if (!error) {
    auto common = std::mismatch(data.begin(), data.end(), resolved.begin(), resolved.end());
    if (common.first == data.end()) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "cannot back up into the data directory itself: \"" + directory + "\"");
    }
  }
  fs::file_status status = fs::status(target, error);
  if (fs::exists(status)) {
    if (!fs::is_directory(status) || !fs::is_empty(target, error)) {
      throw SqlError("58P02", "backup target \"" + directory + "\" exists and is not empty")
          .WithHint("Back up into a new or empty directory; a backup never overwrites.");
    }
  } else if (!fs::is_directory(target.parent_path(), error)) {
    throw SqlError("58P01", "could not create backup directory \"" + directory +
                                "\": its parent directory does not exist");
  }
  // The copy then holds every write acknowledged before the statement as a committed epoch:
  // a restore has no table log left to replay into the views.
  CheckpointCoveringWrites();
  uint64_t epoch = store_->Backup(target.string()).ValueOrThrow();
  spdlog::info("backup of epoch {} written to \"{}\"", epoch, target.string());
  return epoch;
}

}  // namespace stave::executor
