#include "storage/data_directory.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace stave::storage {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFormatPrefix = "stave data directory format ";

std::string Quoted(const std::string& path) { return "\"" + path + "\""; }

Status Errno(std::string_view what, const std::string& path) {
  return Status::IoError(std::string(what) + " " + Quoted(path) + ": " + std::strerror(errno));
}

// Writes all of `contents` to the open descriptor `fd`.
bool WriteAll(int fd, std::string_view contents) {
  while (!contents.empty()) {
    ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    contents.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

// Reads the version a marker file records; an error status if it does not parse.
Result<int> ReadFormatVersion(const std::string& directory) {
  std::string path = (fs::path(directory) / kFormatFileName).string();
  std::ifstream file(path, std::ios::binary);
  if (!file) return Errno("cannot read", path);
  std::stringstream buffer;
  buffer << file.rdbuf();
  std::string text = buffer.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  int version = 0;
  if (text.compare(0, kFormatPrefix.size(), kFormatPrefix) == 0) {
    const char* begin = text.data() + kFormatPrefix.size();
    const char* end = text.data() + text.size();
    auto [next, error] = std::from_chars(begin, end, version);
    if (error == std::errc() && next == end && begin != end && version > 0) return version;
  }
  return Status::InvalidArgument(
      "the data directory " + Quoted(directory) + " has an unreadable format marker (" +
      std::string(kFormatFileName) + "): refusing to read it rather than misread it");
}

}  // namespace

Status SyncDirectory(const std::string& directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", directory);
  int result = ::fsync(fd);
  ::close(fd);
  if (result != 0) return Errno("cannot sync", directory);
  return Status::Ok();
}

Status WriteFormatFile(const std::string& directory) {
  fs::path final_path = fs::path(directory) / kFormatFileName;
  std::string temporary = final_path.string() + ".tmp";
  std::string contents = std::string(kFormatPrefix) + std::to_string(kDataFormatVersion) + "\n";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", temporary);
  bool written = WriteAll(fd, contents) && ::fsync(fd) == 0;
  Status failure = written ? Status::Ok() : Errno("cannot write", temporary);
  ::close(fd);
  if (!failure.ok()) return failure;
  if (::rename(temporary.c_str(), final_path.c_str()) != 0) {
    return Errno("cannot rename", temporary);
  }
  return SyncDirectory(directory);
}

Status PrepareDataDirectory(const std::string& directory) {
  std::error_code error;
  fs::file_status status = fs::status(directory, error);
  if (error && error != std::errc::no_such_file_or_directory) {
    return Status::IoError("cannot inspect the data directory " + Quoted(directory) + ": " +
                           error.message());
  }
  if (fs::exists(status) && !fs::is_directory(status)) {
    return Status::InvalidArgument("the data directory " + Quoted(directory) +
                                   " is not a directory");
  }
  bool empty = !fs::exists(status) || fs::is_empty(directory, error);
  if (empty) {
    fs::create_directories(directory, error);
    if (error) {
      return Status::IoError("cannot create the data directory " + Quoted(directory) + ": " +
                             error.message());
    }
    return WriteFormatFile(directory);
  }
  if (fs::exists(fs::path(directory) / kFormatFileName)) {
    Result<int> version = ReadFormatVersion(directory);
    if (!version.ok()) return version.status();
    if (version.value() == kDataFormatVersion) return Status::Ok();
    if (version.value() > kDataFormatVersion) {
      return Status::InvalidArgument(
          "the data directory " + Quoted(directory) + " has format version " +
          std::to_string(version.value()) + ", newer than this server reads (version " +
          std::to_string(kDataFormatVersion) +
          "): it was written by a newer Stave; start that version on it, or restore a backup "
          "made by this one");
    }
    return Status::InvalidArgument("the data directory " + Quoted(directory) +
                                   " has format version " + std::to_string(version.value()) +
                                   ", which this server does not know");
  }
  // RocksDB's CURRENT names the live manifest: a database is here, written before the
  // marker existed. Its layout is version 1's.
  if (fs::exists(fs::path(directory) / "CURRENT")) return WriteFormatFile(directory);
  return Status::InvalidArgument("the directory " + Quoted(directory) +
                                 " is not empty and is not a Stave data directory (it has no " +
                                 std::string(kFormatFileName) +
                                 " and no database): choose an empty or new directory");
}

}  // namespace stave::storage
