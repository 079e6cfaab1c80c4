#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "storage/key_codec.h"
#include "storage/row_codec.h"
#include "storage/state_table.h"
#include "storage/store.h"
#include "tests/test_directory.h"

namespace stave::storage {
namespace {

using TempDirectory = stave::testing::TestDirectory;

std::string Key(const Value& value, DataType type) {
  std::string key;
  EncodeKeyValue(value, type, &key);
  return key;
}

TEST(KeyCodecTest, ByteOrderIsValueOrder) {
  std::vector<int64_t> ints = {INT64_MIN, -1000, -1, 0, 1, 7, 1000, INT64_MAX};
  for (size_t i = 0; i + 1 < ints.size(); ++i) {
    EXPECT_LT(Key(Value::Int(ints[i]), TypeId::kInt64),
              Key(Value::Int(ints[i + 1]), TypeId::kInt64));
  }
  std::vector<double> doubles = {-1e300, -2.5, -0.5, 0, 1e-300, 0.5, 2.5, 1e300};
  for (size_t i = 0; i + 1 < doubles.size(); ++i) {
    EXPECT_LT(Key(Value::Double(doubles[i]), TypeId::kFloat64),
              Key(Value::Double(doubles[i + 1]), TypeId::kFloat64));
  }
  std::vector<std::string> strings = {"", std::string("a\0", 2), "a", "ab", "b"};
  std::sort(strings.begin(), strings.end());
  for (size_t i = 0; i + 1 < strings.size(); ++i) {
    EXPECT_LT(Key(Value::String(strings[i]), TypeId::kVarchar),
              Key(Value::String(strings[i + 1]), TypeId::kVarchar));
  }
  // NULLS LAST.
  EXPECT_LT(Key(Value::Int(INT64_MAX), TypeId::kInt64), Key(Value::Null(), TypeId::kInt64));
}

TEST(KeyCodecTest, RoundTrips) {
  std::string key;
  EncodeKeyValue(Value::Int(-5), TypeId::kInt64, &key);
  EncodeKeyValue(Value::String(std::string("x\0y", 3)), TypeId::kVarchar, &key);
  EncodeKeyValue(Value::Null(), TypeId::kFloat64, &key);
  std::string_view rest = key;
  Value a, b, c;
  ASSERT_TRUE(DecodeKeyValue(&rest, TypeId::kInt64, &a));
  ASSERT_TRUE(DecodeKeyValue(&rest, TypeId::kVarchar, &b));
  ASSERT_TRUE(DecodeKeyValue(&rest, TypeId::kFloat64, &c));
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(a.int_value(), -5);
  EXPECT_EQ(b.string_value(), std::string("x\0y", 3));
  EXPECT_TRUE(c.is_null());
  std::string_view truncated = std::string_view(key).substr(0, 3);
  EXPECT_FALSE(DecodeKeyValue(&truncated, TypeId::kInt64, &a));
}

Value Numeric(const char* text) { return Value::Numeric(decimal::Parse(text)); }

TEST(KeyCodecTest, NumericByteOrderIsValueOrder) {
  // Wide values (38 digits or more, held on the heap) sort among narrow ones by value,
  // however many groups of 38 digits their keys take.
  const std::string wide_one = "1." + std::string(60, '0') + "1";
  const std::string wide_two = "1." + std::string(60, '0') + "11";
  const std::string minus_wide_one = "-" + wide_one;
  const std::string minus_wide_two = "-" + wide_two;
  std::vector<const char*> values = {"-Infinity",
                                     "-1e131071",
                                     "-1e60",
                                     "-123456789012345678901234567890123456789.5",
                                     "-99999999999999999999999999999999999999",
                                     "-1000",
                                     "-999.99",
                                     "-1.5",
                                     minus_wide_two.c_str(),
                                     minus_wide_one.c_str(),
                                     "-1",
                                     "-0.001",
                                     "-0.0000000000000000000000000000000000000000001",
                                     "0",
                                     "0.0000000000000000000000000000000000000000001",
                                     "0.001",
                                     "0.0011",
                                     "1",
                                     wide_one.c_str(),
                                     wide_two.c_str(),
                                     "1.0000001",
                                     "1.5",
                                     "9",
                                     "10",
                                     "999.99",
                                     "1000",
                                     "99999999999999999999999999999999999999",
                                     "100000000000000000000000000000000000000",
                                     "123456789012345678901234567890123456789.5",
                                     "1e60",
                                     "1e131071",
                                     "Infinity",
                                     "NaN"};
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    EXPECT_LT(Key(Numeric(values[i]), TypeId::kNumeric),
              Key(Numeric(values[i + 1]), TypeId::kNumeric))
        << values[i] << " < " << values[i + 1];
  }
  // Equal values with other scales have one key, so they group and join together.
  EXPECT_EQ(Key(Numeric("1.10"), TypeId::kNumeric), Key(Numeric("1.1"), TypeId::kNumeric));
  EXPECT_EQ(Key(Numeric("-2.500"), TypeId::kNumeric), Key(Numeric("-2.5"), TypeId::kNumeric));
  EXPECT_EQ(Key(Numeric("0.00"), TypeId::kNumeric), Key(Numeric("0"), TypeId::kNumeric));
  EXPECT_EQ(Key(Numeric("100"), TypeId::kNumeric), Key(Numeric("100.000"), TypeId::kNumeric));
  // A wide value equal to a narrow one (its scale keeps 50 zeros) has the narrow one's key.
  const std::string one_with_zeros = "1." + std::string(50, '0');
  EXPECT_TRUE(decimal::Parse(one_with_zeros).is_wide());
  EXPECT_EQ(Key(Numeric(one_with_zeros.c_str()), TypeId::kNumeric),
            Key(Numeric("1"), TypeId::kNumeric));
}

TEST(KeyCodecTest, NumericRoundTripsWithTheTypesScale) {
  const std::string long_fraction = "-0." + std::string(100, '7');
  for (const char* text : {"-1000", "0.001", "123.45", "-0.5", "1e30", "NaN", "-Infinity", "0",
                           "1e37", "1e38", "1e60", "-1e131071", "1e-16383",
                           "123456789012345678901234567890123456789.5", long_fraction.c_str()}) {
    std::string key;
    EncodeKeyValue(Numeric(text), TypeId::kNumeric, &key);
    std::string_view rest = key;
    Value decoded;
    ASSERT_TRUE(DecodeKeyValue(&rest, TypeId::kNumeric, &decoded)) << text;
    EXPECT_TRUE(rest.empty());
    EXPECT_EQ(decoded.decimal_value(), decimal::Normalize(decimal::Parse(text))) << text;
  }
  // numeric(10,2) keys come back with two digits after the point.
  std::string key;
  EncodeKeyValue(Numeric("1.50"), DataType::Numeric(10, 2), &key);
  std::string_view rest = key;
  Value decoded;
  ASSERT_TRUE(DecodeKeyValue(&rest, DataType::Numeric(10, 2), &decoded));
  EXPECT_EQ(decoded.ToText(TypeId::kNumeric), "1.50");
  std::string_view truncated = std::string_view(key).substr(0, 5);
  EXPECT_FALSE(DecodeKeyValue(&truncated, TypeId::kNumeric, &decoded));
}

TEST(RowCodecTest, NumericsKeepTheirScale) {
  RowTypes types = {TypeId::kNumeric, TypeId::kNumeric, TypeId::kNumeric, TypeId::kNumeric};
  std::vector<Value> row = {
      Numeric("1.50"),  Numeric("-99999999999999999999999999999999999999"),
      Numeric("NaN"),   Value::Null(),
      Numeric("-1e60"), Numeric("123456789012345678901234567890123456789.500")};
  types.insert(types.end(), 2, TypeId::kNumeric);
  std::string bytes;
  EncodeRow(row, types, &bytes);
  auto decoded = DecodeRow(bytes, types);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, row);
  EXPECT_EQ((*decoded)[0].ToText(TypeId::kNumeric), "1.50");
  EXPECT_EQ((*decoded)[5].ToText(TypeId::kNumeric), "123456789012345678901234567890123456789.500");
  EXPECT_FALSE(DecodeRow(std::string_view(bytes).substr(0, bytes.size() - 3), types));
}

TEST(RowCodecTest, RoundTripsAndRejectsGarbage) {
  RowTypes types = {TypeId::kInt64, TypeId::kVarchar, TypeId::kFloat64, TypeId::kBoolean};
  std::vector<Value> row = {Value::Int(1), Value::String("hello"), Value::Null(),
                            Value::Boolean(true)};
  std::string bytes;
  EncodeRow(row, types, &bytes);
  auto decoded = DecodeRow(bytes, types);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, row);
  EXPECT_FALSE(DecodeRow(bytes.substr(0, bytes.size() - 1), types));
  EXPECT_FALSE(DecodeRow(bytes + "x", types));
}

// A packed row keeps every value, NULLs and signs included, across a bitmap of more than
// one byte; small integers take a byte, NULLs nothing past their bit; and it refuses bytes
// that are cut short or set bits past its last column.
TEST(RowCodecTest, PackedRowsRoundTripSmallerAndRejectGarbage) {
  RowTypes types = {TypeId::kInt64,   TypeId::kInt64,   TypeId::kInt64,   TypeId::kInt64,
                    TypeId::kInt64,   TypeId::kFloat64, TypeId::kFloat64, TypeId::kVarchar,
                    TypeId::kNumeric, TypeId::kInt64};
  std::vector<Value> row = {Value::Int(0),
                            Value::Int(-1),
                            Value::Int(std::numeric_limits<int64_t>::min()),
                            Value::Int(std::numeric_limits<int64_t>::max()),
                            Value::Null(),
                            Value::Double(-0.0),
                            Value::Double(2.5),
                            Value::String("hello"),
                            Numeric("-1.50"),
                            Value::Int(63)};
  struct ToValues {
    std::vector<Value> row;
    void Null(size_t) { row.push_back(Value::Null()); }
    void Int(size_t, int64_t v) { row.push_back(Value::Int(v)); }
    void Double(size_t, double v) { row.push_back(Value::Double(v)); }
    void String(size_t, std::string_view v) { row.push_back(Value::String(std::string(v))); }
    void Numeric(size_t, const Decimal& v) { row.push_back(Value::Numeric(v)); }
  };
  std::string bytes = "prefix";
  EncodePackedRowFrom(RowValues{row}, types, &bytes);
  std::string_view in = bytes;
  in.remove_prefix(6);
  ToValues decoded;
  ASSERT_TRUE(VisitPackedRowPrefix(&in, types, decoded));
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(decoded.row, row);
  EXPECT_TRUE(std::signbit(decoded.row[5].double_value()));
  // Bitmap 2, then 1 + 1 + 10 + 10 (the extremes), two doubles, 1 + 5, the numeric 5, 1.
  EXPECT_EQ(bytes.size() - 6, 2u + 22 + 16 + 6 + 5 + 1);

  std::string small;
  std::vector<Value> counts = {Value::Int(3), Value::Null(), Value::Int(-64)};
  EncodePackedRowFrom(RowValues{counts}, {TypeId::kInt64, TypeId::kInt64, TypeId::kInt64}, &small);
  EXPECT_EQ(small, std::string("\x05\x06\x7f", 3));

  for (size_t cut = 0; cut < bytes.size() - 6; ++cut) {
    std::string_view truncated = std::string_view(bytes).substr(6, cut);
    ToValues ignored;
    EXPECT_FALSE(VisitPackedRowPrefix(&truncated, types, ignored)) << cut;
  }
  std::string stray = bytes.substr(6);
  stray[1] = static_cast<char>(stray[1] | 0x04);  // Column 10 of 10.
  std::string_view stray_in = stray;
  ToValues ignored;
  EXPECT_FALSE(VisitPackedRowPrefix(&stray_in, types, ignored));
}

TEST(StoreTest, StateIsVisibleOnlyAfterCommitAndSurvivesReopen) {
  TempDirectory directory;
  {
    auto store = Store::Open(directory.path()).ValueOrThrow();
    EXPECT_EQ(store->committed_epoch(), 0u);
    StateTable table(store.get(), 7);
    table.Put("k1", "v1");
    // Read-your-writes before commit; RocksDB has nothing yet.
    EXPECT_EQ(table.Get("k1").ValueOrThrow(), std::optional<std::string>("v1"));
    EXPECT_EQ(store->GetState(table.FullKey("k1")).ValueOrThrow(), std::nullopt);

    EpochBatch batch(1);
    table.FlushTo(&batch);
    batch.PutSourcePosition(3, "source", "pos-1");
    batch.PutCatalogEntry(3, "entry");
    ASSERT_TRUE(store->Commit(&batch).ok());
    EXPECT_EQ(store->committed_epoch(), 1u);

    // Uncommitted writes of the next epoch are lost with the process.
    table.Put("k2", "v2");
    table.Delete("k1");
    EXPECT_EQ(table.Get("k1").ValueOrThrow(), std::nullopt);
  }
  auto store = Store::Open(directory.path()).ValueOrThrow();
  EXPECT_EQ(store->committed_epoch(), 1u);
  StateTable table(store.get(), 7);
  EXPECT_EQ(table.Get("k1").ValueOrThrow(), std::optional<std::string>("v1"));
  EXPECT_EQ(table.Get("k2").ValueOrThrow(), std::nullopt);
  EXPECT_EQ(store->GetSourcePosition(3, "source").ValueOrThrow(),
            std::optional<std::string>("pos-1"));
  auto entries = store->LoadCatalogEntries().ValueOrThrow();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].first, 3u);
}

TEST(StoreTest, SnapshotIsStableAcrossLaterCommitsAndDropsDeleteRanges) {
  TempDirectory directory;
  auto store = Store::Open(directory.path()).ValueOrThrow();
  StateTable table(store.get(), 9);
  for (int i = 0; i < 100; ++i) table.Put("key" + std::to_string(i), "v");
  EpochBatch first(1);
  table.FlushTo(&first);
  ASSERT_TRUE(store->Commit(&first).ok());
  auto snapshot = store->NewSnapshot().ValueOrThrow();

  EpochBatch second(2);
  second.DeleteStateTables(9, 10);
  ASSERT_TRUE(store->Commit(&second).ok());

  size_t rows = 0;
  ASSERT_TRUE(snapshot
                  ->ScanStateTable(9,
                                   [&](std::string_view, std::string_view) {
                                     ++rows;
                                     return true;
                                   })
                  .ok());
  EXPECT_EQ(rows, 100u);
  rows = 0;
  ASSERT_TRUE(store->NewSnapshot()
                  .ValueOrThrow()
                  ->ScanStateTable(9,
                                   [&](std::string_view, std::string_view) {
                                     ++rows;
                                     return true;
                                   })
                  .ok());
  EXPECT_EQ(rows, 0u);
}

TEST(StoreTest, SnapshotScansTheRowsOfAPrefix) {
  TempDirectory directory;
  auto store = Store::Open(directory.path()).ValueOrThrow();
  StateTable table(store.get(), 9);
  for (int i = 0; i < 50; ++i) table.Put("other" + std::to_string(i), "v");
  for (uint32_t i = 0; i < 3; ++i) {
    std::string suffix;
    AppendBigEndian32(i, &suffix);
    table.PutInGroup("group", suffix, std::to_string(i));
  }
  EpochBatch batch(1);
  table.FlushTo(&batch);
  ASSERT_TRUE(store->Commit(&batch).ok());
  std::string prefix;
  AppendBigEndian16(VirtualNodeOf("group"), &prefix);
  prefix.append("group");
  std::vector<std::string> values;
  ASSERT_TRUE(store->NewSnapshot()
                  .ValueOrThrow()
                  ->ScanStateTable(9, prefix,
                                   [&](std::string_view key, std::string_view value) {
                                     EXPECT_EQ(key.substr(0, prefix.size()), prefix);
                                     values.emplace_back(value);
                                     return true;
                                   })
                  .ok());
  EXPECT_EQ(values, (std::vector<std::string>{"0", "1", "2"}));
}

TEST(StoreTest, StateSizeIsCountedWhereItDecidesALimit) {
  TempDirectory directory;
  auto store = Store::Open(directory.path()).ValueOrThrow();
  // Large rows in table 11, a few small ones in 12, and many small rows around them: all in
  // the memtables, whose share of a range RocksDB only estimates (6.5 MB in 15,503 entries:
  // below the sizes at which an epoch commits as a file instead).
  StateTable big(store.get(), 11);
  StateTable small(store.get(), 12);
  StateTable filler(store.get(), 13);
  for (int i = 0; i < 500; ++i) big.Put("row" + std::to_string(i), std::string(10000, 'x'));
  for (int i = 0; i < 3; ++i) small.Put("row" + std::to_string(i), "tiny");
  for (int i = 0; i < 15000; ++i) filler.Put("row" + std::to_string(i), std::string(100, 'y'));
  EpochBatch batch(1);
  big.FlushTo(&batch);
  small.FlushTo(&batch);
  filler.FlushTo(&batch);
  ASSERT_TRUE(store->Commit(&batch).ok());

  constexpr uint64_t kLimit = 1 << 20;
  EXPECT_GE(store->ApproximateStateTablesSize(11, 12, kLimit), 500u * 10000u);
  EXPECT_LT(store->ApproximateStateTablesSize(12, 13, kLimit), 100u);
  // Without a limit to decide, an estimate, at most what the memtables hold.
  EXPECT_LT(store->ApproximateStateTablesSize(12, 13), 64u << 20);
}

TEST(StoreTest, OpenReportsAnUnusableDirectory) {
  auto result = Store::Open("/proc/stave-cannot-be-here");
  EXPECT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("the data directory \"/proc/stave-cannot-be-here\""),
            std::string::npos)
      << result.status().ToString();
}

TEST(StoreTest, FlushedStateStaysReadableUntilItsEpochCommits) {
  TempDirectory directory;
  auto store = Store::Open(directory.path()).ValueOrThrow();
  StateTable table(store.get(), 7);
  table.Put("a", "1");
  table.Put("b", "1");
  EpochBatch first(1);
  table.FlushTo(&first);
  EXPECT_EQ(table.buffered_bytes(), 0u);
  // Epoch 1 is being written; the operator goes on with epoch 2 and still reads epoch 1.
  EXPECT_EQ(table.Get("a").ValueOrThrow(), std::optional<std::string>("1"));
  table.Put("a", "2");
  table.Delete("b");
  EpochBatch second(2);
  table.FlushTo(&second);  // Epoch 1 has not committed: both are sealed, the newer wins.
  EXPECT_EQ(table.Get("a").ValueOrThrow(), std::optional<std::string>("2"));
  EXPECT_EQ(table.Get("b").ValueOrThrow(), std::nullopt);
  ASSERT_TRUE(store->Commit(&first).ok());
  EXPECT_EQ(table.Get("a").ValueOrThrow(), std::optional<std::string>("2"));
  ASSERT_TRUE(store->Commit(&second).ok());
  EXPECT_EQ(table.Get("a").ValueOrThrow(), std::optional<std::string>("2"));
  EXPECT_EQ(table.Get("b").ValueOrThrow(), std::nullopt);
  EXPECT_EQ(store->GetState(table.FullKey("a")).ValueOrThrow(), std::optional<std::string>("2"));
}

TEST(StoreTest, BufferedBytesCountWhatTheBufferHolds) {
  TempDirectory directory;
  auto store = Store::Open(directory.path()).ValueOrThrow();
  StateTable table(store.get(), 7);
  table.Put("k", "0123456789");
  size_t one = table.buffered_bytes();
  EXPECT_EQ(one, table.FullKey("k").size() + 10);
  for (int i = 0; i < 1000; ++i) table.Put("k", "0123456789");
  EXPECT_EQ(table.buffered_bytes(), one);  // Rewrites of one key are one entry.
  table.Delete("k");
  EXPECT_EQ(table.buffered_bytes(), table.FullKey("k").size());
  table.Put("k", "01234");
  EXPECT_EQ(table.buffered_bytes(), table.FullKey("k").size() + 5);
}

// A flushed epoch goes to RocksDB in key order, sorted by the bytes past what all keys of a
// virtual node share: here 20 bytes all keys share, tails that tell keys apart only late,
// keys that are prefixes of others, and zero bytes, which the sort's integers also pad with.
// Every key reads back from the flushed epoch (a sorted run, searched by halves) and, once
// committed, from RocksDB.
TEST(StoreTest, KeysSharingLongPrefixesReadBackFromTheirFlushedEpoch) {
  TempDirectory directory;
  auto store = Store::Open(directory.path()).ValueOrThrow();
  StateTable table(store.get(), 9);
  std::vector<std::string> keys;
  std::string prefix = "window:0000000000000";
  for (int i = 0; i < 20000; ++i) {
    std::string tail = std::to_string(i * 7919 % 20000);
    std::string key = prefix + std::string(i % 3, '\0') + tail;
    if (i % 5 == 0) key += std::string(i % 4, '\0');  // "…12", "…12\0", "…12\0\0\0"
    if (i % 11 == 0) key = prefix + std::string(16, 'x') + tail;  // Equal for 36 bytes.
    keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<std::string> shuffled = keys;
  std::reverse(shuffled.begin(), shuffled.end());
  for (const std::string& key : shuffled) table.WriteOnce(key, "v" + key);
  EpochBatch batch(1);
  table.FlushTo(&batch);
  for (const std::string& key : keys) ASSERT_EQ(table.Get(key).ValueOrThrow(), "v" + key);
  ASSERT_TRUE(store->Commit(&batch).ok());
  StateTable reader(store.get(), 9);
  for (const std::string& key : keys) ASSERT_EQ(reader.Get(key).ValueOrThrow(), "v" + key);
}

// A model of the table (a map) against the table itself through epochs that commit at
// once, late, or two at a time: keys rewritten with growing and shrinking values, values
// of every size from empty to larger than the buffer's blocks, deletes, and more bytes per
// epoch than one block holds. Every read sees the latest write, and RocksDB ends with the
// model. Some epochs write their keys once each (WriteOnce, read only once flushed), some
// after writes through the map, some only so: a sealed epoch is then a sorted run.
TEST(StoreTest, TheBufferReadsBackEveryWriteThroughEpochsInFlight) {
  TempDirectory directory;
  auto store = Store::Open(directory.path()).ValueOrThrow();
  StateTable table(store.get(), 9);
  std::map<std::string, std::optional<std::string>> model;
  std::vector<std::unique_ptr<EpochBatch>> in_flight;
  uint64_t epoch = 0;
  uint64_t random = 12345;
  auto next = [&random](uint64_t bound) {
    random = random * 6364136223846793005ULL + 1442695040888963407ULL;
    return (random >> 33) % bound;
  };
  std::set<std::string> written_once;  // This epoch's WriteOnce keys: not read until flushed.
  auto check = [&] {
    for (const auto& [key, value] : model) {
      if (written_once.count(key)) continue;
      ASSERT_EQ(table.Get(key).ValueOrThrow(), value) << key;
    }
  };
  for (int round = 0; round < 40; ++round) {
    // Rounds 0, 4, 8... write once only; rounds 1, 5, 9... both ways; the others the map's way.
    int writes = round % 4 == 0 ? 0 : 500;
    int once = round % 4 <= 1 ? 200 : 0;
    for (int write = 0; write < writes; ++write) {
      std::string key = "key" + std::to_string(next(300));
      uint64_t kind = next(20);
      if (kind == 0) {
        table.Delete(key);
        model[key] = std::nullopt;
        continue;
      }
      // Mostly small, sometimes empty, now and then past a block (64 kB).
      size_t size = kind == 1 ? 0 : kind == 2 ? 70000 + next(1000) : next(200);
      std::string value(size, static_cast<char>('a' + next(26)));
      if (!value.empty()) value[0] = static_cast<char>('A' + round % 26);
      table.Put(key, value);
      model[key] = value;
    }
    check();
    for (int write = 0; write < once; ++write) {
      std::string key = "key" + std::to_string(next(300));
      if (!written_once.insert(key).second) continue;
      if (next(10) == 0) {
        table.WriteOnce(key, std::nullopt);
        model[key] = std::nullopt;
      } else {
        std::string value(next(100), static_cast<char>('a' + next(26)));
        table.WriteOnce(key, value);
        model[key] = value;
      }
    }
    in_flight.push_back(std::make_unique<EpochBatch>(++epoch));
    table.FlushTo(in_flight.back().get());
    written_once.clear();
    check();
    // Commit none, one or every epoch in flight, in order.
    size_t commits = round % 3 == 0 ? 0 : round % 3 == 1 ? 1 : in_flight.size();
    for (size_t c = 0; c < commits && !in_flight.empty(); ++c) {
      ASSERT_TRUE(store->Commit(in_flight.front().get()).ok());
      in_flight.erase(in_flight.begin());
      check();
    }
  }
  for (auto& batch : in_flight) ASSERT_TRUE(store->Commit(batch.get()).ok());
  check();
  for (const auto& [key, value] : model) {
    EXPECT_EQ(store->GetState(table.FullKey(key)).ValueOrThrow(), value) << key;
  }
}

// Grouped keys written once (a join's rows at its barrier) keep their group's virtual node:
// GetInGroup reads them while their epoch commits and after, a scan of the group reads them
// in key order, and a delete written once removes a row.
TEST(StoreTest, GroupedKeysWrittenOnceReadBackInTheirGroup) {
  TempDirectory directory;
  auto store = Store::Open(directory.path()).ValueOrThrow();
  StateTable table(store.get(), 7);
  table.WriteOnceInGroup("grp", "b", "2");
  table.WriteOnceInGroup("grp", "a", "1");
  table.WriteOnceInGroup("other", "a", "3");
  EXPECT_EQ(table.buffered_bytes(), 3 * 7 + 4 + 4 + 6 + 3);
  EpochBatch first(1);
  table.FlushTo(&first);
  EXPECT_EQ(table.GetInGroup("grp", "a").ValueOrThrow(), std::optional<std::string>("1"));
  EXPECT_EQ(table.GetInGroup("grp", "c").ValueOrThrow(), std::nullopt);
  ASSERT_TRUE(store->Commit(&first).ok());
  table.WriteOnceInGroup("grp", "b", std::nullopt);
  table.WriteOnceInGroup("grp", "c", "4");
  EpochBatch second(2);
  table.FlushTo(&second);
  EXPECT_EQ(table.GetInGroup("grp", "b").ValueOrThrow(), std::nullopt);
  EXPECT_EQ(table.GetInGroup("grp", "c").ValueOrThrow(), std::optional<std::string>("4"));
  ASSERT_TRUE(store->Commit(&second).ok());
  std::vector<std::string> rows;
  ASSERT_TRUE(table
                  .ScanCommittedGroup("grp",
                                      [&](std::string_view suffix, std::string_view value) {
                                        rows.push_back(std::string(suffix) + "=" +
                                                       std::string(value));
                                        return true;
                                      })
                  .ok());
  EXPECT_EQ(rows, (std::vector<std::string>{"a=1", "c=4"}));
  EXPECT_EQ(store->GetState(table.FullKey("other") + "a").ValueOrThrow(),
            std::optional<std::string>("3"));
}

// Rows appended to a group reach the epoch's batch beside the buffered writes, keep their
// group's virtual node, are counted in the buffered bytes, and are gone from the table
// (not re-sent) once flushed.
TEST(StoreTest, AppendedRowsCommitInTheirGroupsVirtualNode) {
  TempDirectory directory;
  auto store = Store::Open(directory.path()).ValueOrThrow();
  StateTable table(store.get(), 7);
  table.Put("k", "v");
  table.AppendInGroup("grp", "1", "first");
  table.AppendInGroup("grp", "2", std::string(300, 'x'));
  EXPECT_EQ(table.buffered_bytes(),
            table.FullKey("k").size() + 1 + 2 * (table.FullKey("grp").size() + 1) + 5 + 300);
  EpochBatch first(1);
  table.FlushTo(&first);
  EXPECT_EQ(table.buffered_bytes(), 0u);
  EXPECT_EQ(first.Count(), 3u);
  ASSERT_TRUE(store->Commit(&first).ok());
  table.AppendInGroup("grp", "3", "third");
  EpochBatch second(2);
  table.FlushTo(&second);
  EXPECT_EQ(second.Count(), 1u);
  ASSERT_TRUE(store->Commit(&second).ok());

  std::vector<std::string> rows;
  ASSERT_TRUE(store->NewSnapshot()
                  .ValueOrThrow()
                  ->ScanStateTable(7,
                                   [&](std::string_view key, std::string_view value) {
                                     uint16_t virtual_node =
                                         static_cast<uint16_t>((static_cast<uint8_t>(key[0]) << 8) |
                                                               static_cast<uint8_t>(key[1]));
                                     rows.push_back(std::string(key.substr(2)) + "=" +
                                                    std::string(value.substr(0, 5)) + "@" +
                                                    std::to_string(virtual_node));
                                     return true;
                                   })
                  .ok());
  std::sort(rows.begin(), rows.end());
  std::string at = "@" + std::to_string(VirtualNodeOf("grp"));
  EXPECT_EQ(rows, (std::vector<std::string>{"grp1=first" + at, "grp2=xxxxx" + at, "grp3=third" + at,
                                            "k=v@" + std::to_string(VirtualNodeOf("k"))}));
}

// A batch given back comes out again empty, for its new epoch, with its memory: the one
// with enough room for the batch asked for, or the largest.
TEST(StoreTest, TheBatchPoolRecyclesEmptiedBatches) {
  EpochBatchPool pool;
  std::unique_ptr<EpochBatch> small = pool.Take(1, 10, 0);
  std::unique_ptr<EpochBatch> large = pool.Take(1, 10, 0);
  small->PutState("k", "v");
  for (int i = 0; i < 1000; ++i) large->PutState("key" + std::to_string(i), std::string(100, 'x'));
  large->PutNextObjectId(7);
  size_t large_room = large->Capacity();
  EpochBatch* small_address = small.get();
  EpochBatch* large_address = large.get();
  pool.GiveBack(std::move(small));
  pool.GiveBack(std::move(large));

  std::unique_ptr<EpochBatch> again = pool.Take(2, 20, 50000);
  EXPECT_EQ(again.get(), large_address);
  EXPECT_EQ(again->epoch(), 2u);
  EXPECT_EQ(again->time(), 20);
  EXPECT_EQ(again->Count(), 0u);
  EXPECT_EQ(again->Capacity(), large_room);
  std::unique_ptr<EpochBatch> other = pool.Take(2, 20, 0);
  EXPECT_EQ(other.get(), small_address);
  EXPECT_EQ(other->Count(), 0u);
  EXPECT_NE(pool.Take(2, 20, 0), nullptr);  // The pool is empty: a new batch.

  // A reused batch commits only what was written after its reuse.
  TempDirectory directory;
  auto store = Store::Open(directory.path()).ValueOrThrow();
  uint64_t next_object_id = store->next_object_id();
  EpochBatch epoch(store->committed_epoch() + 1);
  again->PutState("fresh", "1");
  epoch.Append({again.get()});
  ASSERT_TRUE(store->Commit(&epoch).ok());
  EXPECT_EQ(store->GetState("fresh").ValueOrThrow(), std::optional<std::string>("1"));
  EXPECT_EQ(store->GetState("key1").ValueOrThrow(), std::nullopt);
  EXPECT_EQ(store->next_object_id(), next_object_id);  // Not the 7 of its last use.

  // The combined batch serves again too, in the memory it had: its own new records, then
  // the parts appended, and nothing of its last epoch.
  size_t room = epoch.Capacity();
  epoch.Reuse(store->committed_epoch() + 1, 30);
  epoch.PutCatalogEntry(9, "entry");
  other->PutState("second", "2");
  other->DeleteState("fresh");
  epoch.Append({other.get(), again.get()});
  EXPECT_EQ(epoch.Count(), 1u + 2u + 1u);  // again still holds "fresh" = 1.
  EXPECT_GE(epoch.Capacity(), room);
  ASSERT_TRUE(store->Commit(&epoch).ok());
  EXPECT_EQ(store->GetState("second").ValueOrThrow(), std::optional<std::string>("2"));
  // The delete, then the put of `again`, appended after it: the put wins.
  EXPECT_EQ(store->GetState("fresh").ValueOrThrow(), std::optional<std::string>("1"));
  EXPECT_EQ(store->LoadCatalogEntries().ValueOrThrow().size(), 1u);
}

TEST(StoreTest, AppendedBatchesCommitAsOne) {
  TempDirectory directory;
  auto store = Store::Open(directory.path()).ValueOrThrow();
  StateTable left(store.get(), 1);
  StateTable right(store.get(), 2);
  EpochBatch epoch(1);
  epoch.PutCatalogEntry(5, "entry");
  EpochBatch left_part(1);
  EpochBatch empty_part(1);
  EpochBatch right_part(1);
  for (int i = 0; i < 1000; ++i) left.Put("l" + std::to_string(i), std::string(50, 'x'));
  right.Put("r", "v");
  right_part.PutNextObjectId(42);
  left.FlushTo(&left_part);
  right.FlushTo(&right_part);
  size_t bytes = epoch.ByteSize() + left_part.ByteSize() + right_part.ByteSize() - 2 * 12;
  epoch.Append({&left_part, &empty_part, &right_part});
  EXPECT_EQ(epoch.Count(), 1003u);  // The catalog entry, 1000 + 1 rows, the next object id.
  EXPECT_EQ(epoch.ByteSize(), bytes);
  ASSERT_TRUE(store->Commit(&epoch).ok());
  EXPECT_EQ(store->next_object_id(), 42u);
  EXPECT_EQ(store->GetState(left.FullKey("l999")).ValueOrThrow(),
            std::optional<std::string>(std::string(50, 'x')));
  EXPECT_EQ(store->GetState(right.FullKey("r")).ValueOrThrow(), std::optional<std::string>("v"));
  EXPECT_EQ(store->LoadCatalogEntries().ValueOrThrow().size(), 1u);
}

}  // namespace
}  // namespace stave::storage
