#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/failpoint.h"
#include "storage/store.h"
#include "tests/test_directory.h"

namespace stave::storage {
namespace {

using TempDirectory = stave::testing::TestDirectory;

// Disarms every failpoint when a test ends, whatever it asserted.
struct DisarmFailpoints {
  ~DisarmFailpoints() { failpoint::DisarmAll(); }
};

Status CommitEntry(Store* store, uint64_t epoch, uint32_t object_id) {
  EpochBatch batch(epoch);
  batch.PutCatalogEntry(object_id, "entry " + std::to_string(object_id));
  return store->Commit(&batch);
}

Status WriteLogRecord(Store* store, uint64_t sequence) {
  WriteBatch batch;
  batch.PutTableLogRecord(1, sequence, "record " + std::to_string(sequence));
  return store->WriteDurably(&batch);
}

void ExpectState(Store* store, uint64_t epoch, size_t entries, uint64_t log_records) {
  EXPECT_EQ(store->committed_epoch(), epoch);
  EXPECT_EQ(store->LoadCatalogEntries().ValueOrThrow().size(), entries);
  EXPECT_EQ(store->NextTableLogSequence(1).ValueOrThrow(), log_records);
}

TEST(DiskFaultTest, AFullDiskFailsWritesWithAClearErrorAndWritingResumesWhenSpaceReturns) {
  DisarmFailpoints disarm;
  TempDirectory directory;
  {
    auto store = Store::Open(directory.path()).ValueOrThrow();
    ASSERT_TRUE(CommitEntry(store.get(), 1, 1).ok());
    ASSERT_TRUE(WriteLogRecord(store.get(), 0).ok());

    std::string error;
    ASSERT_TRUE(failpoint::ArmFromSpec("storage_write_no_space=error", &error)) << error;
    Status failed = CommitEntry(store.get(), 2, 2);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.message().find("no space left"), std::string::npos) << failed.ToString();
    EXPECT_EQ(failed.code(), Status::Code::kDiskFull);
    EXPECT_EQ(failed.sqlstate(), "53100");    // disk_full, not the 58030 of other I/O errors.
    EXPECT_EQ(store->committed_epoch(), 1u);  // Not published: the epoch did not commit.
    EXPECT_FALSE(WriteLogRecord(store.get(), 1).ok());

    failpoint::DisarmAll();
    // The same epoch commits once the disk has room again, without a restart: at once, or
    // when RocksDB's own recovery from a full disk has run (it retries every few seconds).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    Status retried = CommitEntry(store.get(), 2, 2);
    while (!retried.ok() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      retried = CommitEntry(store.get(), 2, 2);
    }
    ASSERT_TRUE(retried.ok()) << retried.ToString();
    ASSERT_TRUE(WriteLogRecord(store.get(), 1).ok());
    ExpectState(store.get(), 2, 2, 2);
  }
  auto store = Store::Open(directory.path()).ValueOrThrow();
  ExpectState(store.get(), 2, 2, 2);
}

TEST(DiskFaultTest, AFailedSyncNeverLeavesAHalfWrittenEpoch) {
  DisarmFailpoints disarm;
  TempDirectory directory;
  {
    auto store = Store::Open(directory.path()).ValueOrThrow();
    ASSERT_TRUE(CommitEntry(store.get(), 1, 1).ok());
    std::string error;
    ASSERT_TRUE(failpoint::ArmFromSpec("storage_sync_error=error", &error)) << error;
    Status failed = CommitEntry(store.get(), 2, 2);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.ToString().find("Input/output error"), std::string::npos) << failed.ToString();
    EXPECT_EQ(failed.sqlstate(), "58030");
    EXPECT_EQ(store->committed_epoch(), 1u);
    failpoint::DisarmAll();
  }
  // The failed epoch's record reached the file, only its sync failed: after a restart it is
  // there whole or not at all, never in part.
  auto store = Store::Open(directory.path()).ValueOrThrow();
  uint64_t epoch = store->committed_epoch();
  ASSERT_TRUE(epoch == 1 || epoch == 2) << epoch;
  EXPECT_EQ(store->LoadCatalogEntries().ValueOrThrow().size(), epoch);
  ASSERT_TRUE(CommitEntry(store.get(), epoch + 1, 3).ok());
}

TEST(DiskFaultTest, AFailedSyncRecoversInProcessByReopeningTheDatabase) {
  DisarmFailpoints disarm;
  TempDirectory directory;
  {
    auto store = Store::Open(directory.path()).ValueOrThrow();
    ASSERT_TRUE(CommitEntry(store.get(), 1, 1).ok());
    ASSERT_TRUE(WriteLogRecord(store.get(), 0).ok());
    std::string error;
    ASSERT_TRUE(failpoint::ArmFromSpec("storage_sync_error=error", &error)) << error;
    ASSERT_FALSE(CommitEntry(store.get(), 2, 2).ok());
    // While the fault lasts, writes fail and reads go on.
    EXPECT_FALSE(store->CheckWritable().ok());
    EXPECT_FALSE(WriteLogRecord(store.get(), 1).ok());
    EXPECT_EQ(store->LoadCatalogEntries().ValueOrThrow().size(), store->committed_epoch());
    failpoint::DisarmAll();

    // A query's snapshot holds the database: the reopen waits for it, then reads the
    // failed epoch's record from the log whole or not at all, as a start would.
    auto snapshot = store->NewSnapshot().ValueOrThrow();
    std::thread release([&snapshot] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      snapshot.reset();
    });
    Status writable = store->CheckWritable();
    release.join();
    ASSERT_TRUE(writable.ok()) << writable.ToString();
    uint64_t epoch = store->committed_epoch();
    ASSERT_TRUE(epoch == 1 || epoch == 2) << epoch;
    EXPECT_EQ(store->LoadCatalogEntries().ValueOrThrow().size(), epoch);
    ASSERT_TRUE(CommitEntry(store.get(), epoch + 1, 3).ok());
    uint64_t next_record = store->NextTableLogSequence(1).ValueOrThrow();
    ASSERT_TRUE(WriteLogRecord(store.get(), next_record).ok());
    ExpectState(store.get(), epoch + 1, epoch + 1, next_record + 1);
    epoch += 1;
    // After a restart, the same.
    store.reset();
    store = Store::Open(directory.path()).ValueOrThrow();
    ExpectState(store.get(), epoch, epoch, next_record + 1);
  }
}

}  // namespace
}  // namespace stave::storage
