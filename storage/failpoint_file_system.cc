#include "storage/failpoint_file_system.h"

#include <string>
#include <utility>

#include "common/failpoint.h"

namespace stave::storage {
namespace {

constexpr std::string_view kNoSpace = "storage_write_no_space";
constexpr std::string_view kSyncError = "storage_sync_error";

rocksdb::IOStatus NoSpace() {
  return rocksdb::IOStatus::NoSpace("No space left on device (failpoint storage_write_no_space)");
}

rocksdb::IOStatus SyncError() {
  return rocksdb::IOStatus::IOError("Input/output error (failpoint storage_sync_error)");
}

class FailpointWritableFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  using FSWritableFileOwnerWrapper::FSWritableFileOwnerWrapper;

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* debug) override {
    if (failpoint::Fails(kNoSpace)) return NoSpace();
    return target()->Append(data, options, debug);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& verification,
                           rocksdb::IODebugContext* debug) override {
    if (failpoint::Fails(kNoSpace)) return NoSpace();
    return target()->Append(data, options, verification, debug);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     rocksdb::IODebugContext* debug) override {
    if (failpoint::Fails(kNoSpace)) return NoSpace();
    return target()->PositionedAppend(data, offset, options, debug);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     const rocksdb::DataVerificationInfo& verification,
                                     rocksdb::IODebugContext* debug) override {
    if (failpoint::Fails(kNoSpace)) return NoSpace();
    return target()->PositionedAppend(data, offset, options, verification, debug);
  }
  rocksdb::IOStatus Allocate(uint64_t offset, uint64_t length, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* debug) override {
    if (failpoint::Fails(kNoSpace)) return NoSpace();
    return target()->Allocate(offset, length, options, debug);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options,
                         rocksdb::IODebugContext* debug) override {
    if (failpoint::Fails(kSyncError)) return SyncError();
    return target()->Sync(options, debug);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* debug) override {
    if (failpoint::Fails(kSyncError)) return SyncError();
    return target()->Fsync(options, debug);
  }
  rocksdb::IOStatus RangeSync(uint64_t offset, uint64_t bytes, const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* debug) override {
    if (failpoint::Fails(kSyncError)) return SyncError();
    return target()->RangeSync(offset, bytes, options, debug);
  }
};

class FailpointFileSystem : public rocksdb::FileSystemWrapper {
 public:
  using FileSystemWrapper::FileSystemWrapper;

  const char* Name() const override { return "StaveFailpointFileSystem"; }

  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* debug) override {
    if (failpoint::Fails(kNoSpace)) return NoSpace();
    return Wrap(target()->NewWritableFile(name, options, result, debug), result);
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* debug) override {
    return Wrap(target()->ReopenWritableFile(name, options, result, debug), result);
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string& name, const std::string& old_name,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSWritableFile>* result,
                                      rocksdb::IODebugContext* debug) override {
    return Wrap(target()->ReuseWritableFile(name, old_name, options, result, debug), result);
  }

 private:
  static rocksdb::IOStatus Wrap(rocksdb::IOStatus status,
                                std::unique_ptr<rocksdb::FSWritableFile>* result) {
    if (status.ok()) *result = std::make_unique<FailpointWritableFile>(std::move(*result));
    return status;
  }
};

}  // namespace

std::shared_ptr<rocksdb::FileSystem> NewFailpointFileSystem(
    std::shared_ptr<rocksdb::FileSystem> target) {
  return std::make_shared<FailpointFileSystem>(std::move(target));
}

}  // namespace stave::storage
