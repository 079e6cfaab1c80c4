#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>

#include <rocksdb/sst_file_reader.h>

#include "storage/epoch_file.h"
#include "storage/state_table.h"
#include "storage/store.h"
#include "tests/test_directory.h"

namespace stave::storage {
namespace {

using TempDirectory = stave::testing::TestDirectory;

// Rows of state table `table` in a snapshot of the last commit: key → value.
std::map<std::string, std::string> Rows(Store* store, uint32_t table) {
  std::map<std::string, std::string> rows;
  Status status = store->NewSnapshot().ValueOrThrow()->ScanStateTable(
      table, [&](std::string_view key, std::string_view value) {
        rows.emplace(std::string(key.substr(2)), std::string(value));  // Past the virtual node.
        return true;
      });
  EXPECT_TRUE(status.ok()) << status.message();
  return rows;
}

// An epoch large enough to commit as an ingested file has the effect a write of its batch
// would: the last write of a key wins, deletes delete, and a range deletion drops what the
// database held and what the batch wrote before it, but not what the batch wrote after it.
TEST(EpochFileTest, ALargeEpochCommitsAsTheWriteOfItsBatchWould) {
  TempDirectory directory;
  const std::string padding(200, 'p');
  {
    auto store = Store::Open(directory.path()).ValueOrThrow();
    StateTable kept(store.get(), 1);
    StateTable dropped(store.get(), 2);
    StateTable refilled(store.get(), 3);
    EpochBatch first(1);  // A small epoch: a write.
    kept.Put("deleted", "old");
    kept.Put("overwritten", "old");
    dropped.Put("gone", "old");
    refilled.Put("gone", "old");
    kept.FlushTo(&first);
    dropped.FlushTo(&first);
    refilled.FlushTo(&first);
    ASSERT_TRUE(store->Commit(&first).ok());

    EpochBatch second(2);  // Past 8 MB: an ingested file.
    for (int i = 0; i < 80000; ++i) kept.Put("bulk" + std::to_string(i), padding);
    kept.Put("overwritten", "first");
    kept.Delete("deleted");
    kept.FlushTo(&second);
    dropped.Put("written before the drop", "x");
    dropped.FlushTo(&second);
    second.DeleteStateTables(2, 4);               // Drops tables 2 and 3 ...
    refilled.Put("written after the drop", "y");  // ... and then table 3 is written again.
    refilled.FlushTo(&second);
    EpochBatch overwrite(2);
    kept.Put("overwritten", "last");  // A later share of the same epoch.
    kept.FlushTo(&overwrite);
    second.Append({&overwrite});
    ASSERT_GT(second.ByteSize(), size_t{8} << 20);
    ASSERT_TRUE(store->Commit(&second).ok());
    EXPECT_EQ(store->committed_epoch(), 2u);
  }
  // As committed, also after a restart; no file of the epoch is left beside the database.
  auto store = Store::Open(directory.path()).ValueOrThrow();
  EXPECT_EQ(store->committed_epoch(), 2u);
  std::map<std::string, std::string> kept = Rows(store.get(), 1);
  EXPECT_EQ(kept.size(), 80001u);
  EXPECT_EQ(kept["overwritten"], "last");
  EXPECT_EQ(kept.count("deleted"), 0u);
  EXPECT_EQ(kept["bulk79999"], padding);
  EXPECT_TRUE(Rows(store.get(), 2).empty());
  EXPECT_EQ(Rows(store.get(), 3),
            (std::map<std::string, std::string>{{"written after the drop", "y"}}));
  for (const auto& entry : std::filesystem::directory_iterator(directory.path())) {
    EXPECT_FALSE(entry.path().string().ends_with(".epoch-sst")) << entry.path();
  }
}

// A state table's flush hands its writes to the batch as a run that stays in the table's
// memory; whether the epoch commits as a write or as a file (past 8 MB, or past 16,384
// entries), each run takes effect at its place among the batch's records: a record written
// after a run overrides it, a range deletion drops the runs before it and not those after
// it, also across appended parts.
TEST(EpochFileTest, StateRunsTakeEffectAtTheirPlaceAmongTheRecords) {
  // Rows written, and their size: a write; a file of many small entries; a file of 16 MB.
  for (auto [rows_written, row_bytes] : {std::pair{10, 1}, {20000, 1}, {80000, 200}}) {
    TempDirectory directory;
    auto store = Store::Open(directory.path()).ValueOrThrow();
    StateTable first(store.get(), 1);
    StateTable dropped(store.get(), 2);
    StateTable refilled(store.get(), 3);
    const std::string padding(row_bytes, 'p');
    EpochBatch batch(1);
    for (int i = 0; i < rows_written; ++i) first.Put("bulk" + std::to_string(i), padding);
    first.Put("overridden", "by the run");
    first.FlushTo(&batch);
    batch.PutState(first.FullKey("overridden"), "by a record after the run");
    dropped.Put("before the drop", "x");
    dropped.FlushTo(&batch);
    EpochBatch part(1);  // Another task's share: its run comes after the batch's records.
    part.DeleteStateTables(2, 4);
    refilled.Put("after the drop", "y");
    refilled.FlushTo(&part);
    batch.Append({&part});
    EXPECT_EQ(batch.ByteSize() > (size_t{8} << 20), row_bytes > 1);
    ASSERT_TRUE(store->Commit(&batch).ok());
    std::map<std::string, std::string> rows = Rows(store.get(), 1);
    EXPECT_EQ(rows.size(), rows_written + 1u);
    EXPECT_EQ(rows["overridden"], "by a record after the run");
    EXPECT_EQ(rows["bulk9"], padding);
    EXPECT_TRUE(Rows(store.get(), 2).empty());
    EXPECT_EQ(Rows(store.get(), 3), (std::map<std::string, std::string>{{"after the drop", "y"}}));
  }
}

// A crash between writing an epoch's file and ingesting it leaves the file behind, not part
// of the database: the next start removes it and is at the epoch committed before.
TEST(EpochFileTest, AFileLeftByACrashIsRemovedAtStart) {
  TempDirectory directory;
  {
    auto store = Store::Open(directory.path()).ValueOrThrow();
    EpochBatch first(1);
    ASSERT_TRUE(store->Commit(&first).ok());
  }
  std::string left = directory.path() + "/2.epoch-sst";
  { std::ofstream(left) << "a file half written"; }
  auto store = Store::Open(directory.path()).ValueOrThrow();
  EXPECT_EQ(store->committed_epoch(), 1u);
  EXPECT_FALSE(std::filesystem::exists(left));
}

// An epoch's file is written uncompressed: it is on the commit's path, and compactions
// compress it later if it lives on. SstFileWriter would otherwise take the compression of the
// last level (LZ4 where, as in the database, levels have their own).
TEST(EpochFileTest, TheFileIsNotCompressed) {
  TempDirectory directory;
  rocksdb::Options options;
  options.OptimizeLevelStyleCompaction();
  ASSERT_FALSE(options.compression_per_level.empty());
  WriteBatch batch;
  for (int i = 0; i < 10000; ++i) batch.PutState("key" + std::to_string(i), std::string(100, 'x'));
  std::string path = directory.path() + "/1.epoch-sst";
  ASSERT_TRUE(WriteEpochFile(batch, options, path).ok());
  rocksdb::SstFileReader reader(options);
  ASSERT_TRUE(reader.Open(path).ok());
  EXPECT_EQ(reader.GetTableProperties()->compression_name, "NoCompression");
  EXPECT_GT(std::filesystem::file_size(path), size_t{10000} * 100);
}

}  // namespace
// Random epochs of every kind of change -- runs of several tables, several runs of a table
// (the shares of several tasks, a table flushed twice), records before, between and after
// them, deleted keys, dropped tables -- committed as a file have the effect the same batch
// has written into the database, on top of the same rows.
TEST(EpochFileTest, AFileOfRunsAndRecordsEqualsTheWriteOfItsBatch) {
  auto contents = [](rocksdb::DB* db) {
    std::map<std::string, std::string> rows;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next())
      rows[it->key().ToString()] = it->value().ToString();
    EXPECT_TRUE(it->status().ok());
    return rows;
  };
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    TempDirectory directory;
    auto store = Store::Open(directory.path() + "/store").ValueOrThrow();
    std::mt19937 random(seed);
    auto key = [&random] { return "k" + std::to_string(random() % 300); };
    // Tables 1-4, each written by two tasks (instances of the same table id).
    std::vector<std::unique_ptr<StateTable>> tables;
    for (uint32_t id = 1; id <= 4; ++id) {
      for (int task = 0; task < 2; ++task)
        tables.push_back(std::make_unique<StateTable>(store.get(), id));
    }
    EpochBatch batch(1);
    std::vector<std::unique_ptr<EpochBatch>> parts;
    int steps = 5 + static_cast<int>(random() % 30);
    for (int step = 0; step < steps; ++step) {
      EpochBatch* into = &batch;
      if (!parts.empty() && random() % 2 == 0) into = parts.back().get();
      switch (random() % 6) {
        case 0:
          parts.push_back(std::make_unique<EpochBatch>(1));
          break;
        case 1: {  // A run.
          StateTable& table = *tables[random() % tables.size()];
          for (int n = static_cast<int>(random() % 200); n > 0; --n) {
            if (random() % 4 == 0) {
              table.Delete(key());
            } else {
              table.Put(key(), "run" + std::to_string(step));
            }
          }
          table.FlushTo(into);
          break;
        }
        case 2: {  // A run of writes made once.
          StateTable& table = *tables[random() % tables.size()];
          std::set<std::string> keys;
          for (int n = static_cast<int>(random() % 200); n > 0; --n) keys.insert(key());
          for (const std::string& k : keys) {
            std::string value = "once" + std::to_string(step);
            table.WriteOnce(
                k, random() % 4 == 0 ? std::nullopt : std::optional<std::string_view>(value));
          }
          table.FlushTo(into);
          break;
        }
        case 3:
        case 4: {  // Records.
          StateTable& table = *tables[random() % tables.size()];
          for (int n = static_cast<int>(random() % 20); n > 0; --n) {
            if (random() % 3 == 0) {
              into->DeleteState(table.FullKey(key()));
            } else {
              into->PutState(table.FullKey(key()), "record" + std::to_string(step));
            }
          }
          break;
        }
        default: {
          uint32_t first = 1 + random() % 4;
          into->DeleteStateTables(first, first + 1 + random() % 2);
        }
      }
    }
    std::vector<const WriteBatch*> shares;
    for (const auto& part : parts) shares.push_back(part.get());
    batch.Append(shares);

    // The rows both databases start from: every key of every table.
    auto open = [&](const std::string& name) {
      rocksdb::Options options;
      options.create_if_missing = true;
      rocksdb::DB* db = nullptr;
      EXPECT_TRUE(rocksdb::DB::Open(options, directory.path() + "/" + name, &db).ok());
      rocksdb::WriteBatch before;
      for (const auto& table : tables) {
        for (int k = 0; k < 300; k += 7) {
          EXPECT_TRUE(before.Put(table->FullKey("k" + std::to_string(k)), "before").ok());
        }
      }
      EXPECT_TRUE(db->Write(rocksdb::WriteOptions(), &before).ok());
      return std::unique_ptr<rocksdb::DB>(db);
    };
    std::unique_ptr<rocksdb::DB> written = open("written");
    rocksdb::WriteBatch as_written = batch.WithRunsWrittenIn();
    ASSERT_TRUE(written->Write(rocksdb::WriteOptions(), &as_written).ok());
    std::unique_ptr<rocksdb::DB> ingested = open("ingested");
    std::string path = directory.path() + "/epoch.sst";
    rocksdb::Status status = WriteEpochFile(batch, rocksdb::Options(), path);
    if (status.IsInvalidArgument() && contents(written.get()) == contents(ingested.get())) {
      continue;  // Nothing to write: SstFileWriter refuses an empty file.
    }
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_TRUE(ingested->IngestExternalFile({path}, rocksdb::IngestExternalFileOptions()).ok());
    EXPECT_EQ(contents(ingested.get()), contents(written.get())) << "seed " << seed;
  }
}

// The file holds, of each key, the batch's last write, whatever the order of the batch: a
// few sorted runs (as state tables flush), an odd one out, and keys written in several runs.
TEST(EpochFileTest, TheFileKeepsTheLastWriteOfEachKeyOfTheBatch) {
  TempDirectory directory;
  rocksdb::Options options;
  for (int runs : {1, 2, 3, 7, 200}) {
    WriteBatch batch;
    std::map<std::string, std::optional<std::string>> model;  // nullopt: deleted
    std::mt19937 random(static_cast<uint32_t>(runs));
    for (int run = 0; run < runs; ++run) {
      std::set<std::string> keys;
      while (keys.size() < 50) keys.insert("k" + std::to_string(random() % 400));
      for (const std::string& key : keys) {
        std::string value = std::to_string(run);
        if (random() % 5 == 0) {
          batch.DeleteState(key);
          model[key] = std::nullopt;
        } else {
          batch.PutState(key, value);
          model[key] = value;
        }
      }
    }
    std::string path = directory.path() + "/" + std::to_string(runs) + ".epoch-sst";
    ASSERT_TRUE(WriteEpochFile(batch, options, path).ok());
    rocksdb::SstFileReader reader(options);
    ASSERT_TRUE(reader.Open(path).ok());
    std::unique_ptr<rocksdb::Iterator> it(reader.NewIterator(rocksdb::ReadOptions()));
    std::map<std::string, std::string> puts;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      puts.emplace(it->key().ToString(), it->value().ToString());
    }
    ASSERT_TRUE(it->status().ok());
    std::map<std::string, std::string> expected;
    for (const auto& [key, value] : model) {
      if (value) expected.emplace(key, *value);
    }
    EXPECT_EQ(puts, expected) << runs << " runs";
    EXPECT_EQ(reader.GetTableProperties()->num_entries, model.size()) << runs << " runs";
  }
}

}  // namespace stave::storage
