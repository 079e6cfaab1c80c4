#include "storage/data_directory.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "storage/store.h"
#include "tests/test_directory.h"

namespace stave::storage {
namespace {

namespace fs = std::filesystem;
using TempDirectory = stave::testing::TestDirectory;

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
}

std::string ReadText(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

TEST(DataDirectoryTest, ANewDirectoryGetsTheCurrentFormat) {
  TempDirectory parent;
  std::string directory = parent.path() + "/data";
  { auto store = Store::Open(directory).ValueOrThrow(); }
  EXPECT_EQ(ReadText(fs::path(directory) / kFormatFileName),
            "stave data directory format " + std::to_string(kDataFormatVersion) + "\n");
  EXPECT_TRUE(Store::Open(directory).ok());
}

TEST(DataDirectoryTest, ANewerOrUnknownFormatIsRefusedUntouched) {
  TempDirectory directory;
  { auto store = Store::Open(directory.path()).ValueOrThrow(); }
  fs::path marker = fs::path(directory.path()) / kFormatFileName;
  WriteText(marker, "stave data directory format 999\n");
  auto newer = Store::Open(directory.path());
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("format version 999, newer than this server reads"),
            std::string::npos)
      << newer.status().ToString();
  EXPECT_EQ(ReadText(marker), "stave data directory format 999\n");  // Not rewritten.

  for (const char* garbage :
       {"", "stave data directory format x\n", "format 1\n", "stave data directory format 0\n"}) {
    WriteText(marker, garbage);
    auto unreadable = Store::Open(directory.path());
    ASSERT_FALSE(unreadable.ok()) << garbage;
    EXPECT_NE(unreadable.status().message().find("unreadable format marker"), std::string::npos)
        << unreadable.status().ToString();
  }
}

TEST(DataDirectoryTest, ADirectoryFromBeforeTheMarkerIsVersionOne) {
  TempDirectory directory;
  {
    auto store = Store::Open(directory.path()).ValueOrThrow();
    EpochBatch batch(1);
    batch.PutCatalogEntry(5, "entry");
    ASSERT_TRUE(store->Commit(&batch).ok());
  }
  fs::remove(fs::path(directory.path()) / kFormatFileName);
  auto store = Store::Open(directory.path()).ValueOrThrow();
  EXPECT_EQ(store->committed_epoch(), 1u);
  EXPECT_EQ(store->LoadCatalogEntries().ValueOrThrow().size(), 1u);
  EXPECT_TRUE(fs::exists(fs::path(directory.path()) / kFormatFileName));
}

TEST(DataDirectoryTest, AForeignNonEmptyDirectoryIsRefused) {
  TempDirectory directory;
  WriteText(fs::path(directory.path()) / "notes.txt", "mine");
  auto store = Store::Open(directory.path());
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("is not a Stave data directory"), std::string::npos);
  EXPECT_FALSE(fs::exists(fs::path(directory.path()) / kFormatFileName));
}

TEST(BackupTest, TheCopyHoldsTheBackedUpEpochAndDurableWritesOnly) {
  TempDirectory directory;
  TempDirectory backups;
  std::string target = backups.path() + "/copy";
  {
    auto store = Store::Open(directory.path()).ValueOrThrow();
    EpochBatch first(1);
    first.PutCatalogEntry(1, "one");
    ASSERT_TRUE(store->Commit(&first).ok());
    WriteBatch table_write;
    table_write.PutTableLogRecord(9, 0, "acknowledged");
    ASSERT_TRUE(store->WriteDurably(&table_write).ok());

    EXPECT_EQ(store->Backup(target).ValueOrThrow(), 1u);

    EpochBatch second(2);
    second.PutCatalogEntry(2, "two");
    ASSERT_TRUE(store->Commit(&second).ok());
    WriteBatch later;
    later.PutTableLogRecord(9, 1, "after the backup");
    ASSERT_TRUE(store->WriteDurably(&later).ok());

    // A backup never overwrites: the target must be new.
    EXPECT_FALSE(store->Backup(target).ok());
  }
  EXPECT_FALSE(fs::exists(target + ".partial"));
  auto restored = Store::Open(target).ValueOrThrow();
  EXPECT_EQ(restored->committed_epoch(), 1u);
  auto entries = restored->LoadCatalogEntries().ValueOrThrow();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].second, "one");
  std::vector<std::string> log;
  ASSERT_TRUE(restored
                  ->ReadTableLog(9, 0,
                                 [&](uint64_t, std::string_view record) {
                                   log.emplace_back(record);
                                   return true;
                                 })
                  .ok());
  EXPECT_EQ(log, std::vector<std::string>{"acknowledged"});
  // The original is untouched by the copy's use.
  restored.reset();
  auto original = Store::Open(directory.path()).ValueOrThrow();
  EXPECT_EQ(original->committed_epoch(), 2u);
}

}  // namespace
}  // namespace stave::storage
