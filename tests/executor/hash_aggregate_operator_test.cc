#include "executor/operators/hash_aggregate_operator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <optional>

#include "storage/key_codec.h"
#include "storage/row_codec.h"
#include "tests/test_directory.h"

namespace stave::executor {
namespace {

using planner::AggregateCall;
using planner::AggregateKind;
using planner::BoundExpr;

// Collects what an operator emits.
class CaptureOperator : public StreamOperator {
 public:
  void OnChunk(Chunk chunk) override {
    for (size_t r = 0; r < chunk.size(); ++r) rows.emplace_back(chunk.ops[r], chunk.GetRow(r));
  }
  std::vector<std::pair<RowOp, std::vector<Value>>> rows;
};

// `kind` over input column `column` of `type`, whose result is of `result` type; count(*)
// without a column.
AggregateCall Call(AggregateKind kind, DataType result, std::optional<size_t> column = {},
                   DataType type = TypeId::kInt64) {
  AggregateCall call;
  call.kind = kind;
  if (column) call.arg = BoundExpr::MakeColumn(*column, type);
  call.result_type = result;
  return call;
}

std::shared_ptr<planner::AggregateNode> SumByKey() {
  auto node = std::make_shared<planner::AggregateNode>();
  node->group_keys = {BoundExpr::MakeColumn(0, TypeId::kVarchar)};
  node->aggregates = {Call(AggregateKind::kCountStar, TypeId::kInt64),
                      Call(AggregateKind::kSum, TypeId::kInt64, 1)};
  node->output = {{"k", TypeId::kVarchar}, {"count", TypeId::kInt64}, {"sum", TypeId::kInt64}};
  return node;
}

Chunk Rows(const std::vector<std::tuple<RowOp, std::string, int64_t>>& rows) {
  Chunk chunk = Chunk::WithTypes({TypeId::kVarchar, TypeId::kInt64});
  for (const auto& [op, key, value] : rows)
    chunk.AppendRow({Value::String(key), Value::Int(value)}, op);
  return chunk;
}

TEST(HashAggregateOperatorTest, EmitsEachEpochsChangesAtItsBarrierAndRetracts) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator aggregate(SumByKey(), storage::StateTable(store.get(), 1));
  CaptureOperator capture;
  aggregate.set_downstream(&capture);
  aggregate.Start();

  aggregate.OnChunk(Rows({{RowOp::kInsert, "a", 1}, {RowOp::kInsert, "b", 2}}));
  aggregate.OnChunk(Rows({{RowOp::kInsert, "a", 3}}));
  EXPECT_TRUE(capture.rows.empty());  // Nothing before the epoch ends.
  storage::EpochBatch batch1(1);
  aggregate.OnBarrier(&batch1);
  ASSERT_TRUE(store->Commit(&batch1).ok());
  // One row per group for the whole epoch, in the order the groups first changed.
  ASSERT_EQ(capture.rows.size(), 2u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kInsert);
  EXPECT_EQ(capture.rows[0].second,
            (std::vector<Value>{Value::String("a"), Value::Int(2), Value::Int(4)}));
  EXPECT_EQ(capture.rows[1].second,
            (std::vector<Value>{Value::String("b"), Value::Int(1), Value::Int(2)}));
  capture.rows.clear();

  aggregate.OnChunk(Rows({{RowOp::kDelete, "a", 1}, {RowOp::kDelete, "b", 2}}));
  // c comes and goes within the epoch, and d changes and changes back: neither shows.
  aggregate.OnChunk(Rows({{RowOp::kInsert, "c", 7}, {RowOp::kInsert, "d", 1}}));
  aggregate.OnChunk(Rows({{RowOp::kDelete, "c", 7}, {RowOp::kInsert, "d", 1}}));
  aggregate.OnChunk(Rows({{RowOp::kDelete, "d", 1}}));
  storage::EpochBatch batch2(2);
  aggregate.OnBarrier(&batch2);
  ASSERT_TRUE(store->Commit(&batch2).ok());
  ASSERT_EQ(capture.rows.size(), 4u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kUpdateDelete);
  EXPECT_EQ(capture.rows[0].second,
            (std::vector<Value>{Value::String("a"), Value::Int(2), Value::Int(4)}));
  EXPECT_EQ(capture.rows[1].first, RowOp::kUpdateInsert);
  EXPECT_EQ(capture.rows[1].second,
            (std::vector<Value>{Value::String("a"), Value::Int(1), Value::Int(3)}));
  EXPECT_EQ(capture.rows[2].first, RowOp::kDelete);  // b has no rows left.
  EXPECT_EQ(capture.rows[2].second[0], Value::String("b"));
  EXPECT_EQ(capture.rows[3].first, RowOp::kInsert);  // d, one row as at the epoch's start.
  EXPECT_EQ(capture.rows[3].second,
            (std::vector<Value>{Value::String("d"), Value::Int(1), Value::Int(1)}));

  // A new operator over the same state continues from it.
  HashAggregateOperator recovered(SumByKey(), storage::StateTable(store.get(), 1));
  CaptureOperator capture2;
  recovered.set_downstream(&capture2);
  recovered.Start();
  recovered.OnChunk(Rows({{RowOp::kInsert, "a", 10}}));
  storage::EpochBatch batch3(3);
  recovered.OnBarrier(&batch3);
  ASSERT_EQ(capture2.rows.size(), 2u);
  EXPECT_EQ(capture2.rows[0].second,
            (std::vector<Value>{Value::String("a"), Value::Int(1), Value::Int(3)}));
  EXPECT_EQ(capture2.rows[1].second,
            (std::vector<Value>{Value::String("a"), Value::Int(2), Value::Int(13)}));
}

TEST(HashAggregateOperatorTest, GlobalAggregateStartsWithARow) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  auto node = std::make_shared<planner::AggregateNode>();
  node->aggregates = {Call(AggregateKind::kCountStar, TypeId::kInt64)};
  node->output = {{"count", TypeId::kInt64}};
  HashAggregateOperator aggregate(node, storage::StateTable(store.get(), 1));
  CaptureOperator capture;
  aggregate.set_downstream(&capture);
  aggregate.Start();
  ASSERT_EQ(capture.rows.size(), 1u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kInsert);
  EXPECT_EQ(capture.rows[0].second[0], Value::Int(0));
}

// count(*) grouped by a window's start (column 0) and a key (column 1); windows are 10 wide.
std::shared_ptr<planner::AggregateNode> CountPerWindow(bool emit_on_close) {
  auto node = std::make_shared<planner::AggregateNode>();
  node->group_keys = {BoundExpr::MakeColumn(0, TypeId::kInt64),
                      BoundExpr::MakeColumn(1, TypeId::kVarchar)};
  node->aggregates = {Call(AggregateKind::kCountStar, TypeId::kInt64)};
  node->output = {
      {"window_start", TypeId::kInt64}, {"k", TypeId::kVarchar}, {"count", TypeId::kInt64}};
  node->window_close = planner::AggregateNode::WindowClose{0, 10};
  node->emit_on_window_close = emit_on_close;
  return node;
}

Chunk WindowRows(const std::vector<std::pair<int64_t, std::string>>& rows) {
  Chunk chunk = Chunk::WithTypes({TypeId::kInt64, TypeId::kVarchar});
  for (const auto& [start, key] : rows)
    chunk.AppendRow({Value::Int(start), Value::String(key)}, RowOp::kInsert);
  return chunk;
}

std::vector<Value> WindowRow(int64_t start, const std::string& key, int64_t count) {
  return {Value::Int(start), Value::String(key), Value::Int(count)};
}

TEST(HashAggregateOperatorTest, EmitOnWindowCloseEmitsFinalRowsOnceAndForgetsThem) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator aggregate(CountPerWindow(true), storage::StateTable(store.get(), 1));
  CaptureOperator capture;
  aggregate.set_downstream(&capture);
  aggregate.Start();
  aggregate.OnChunk(WindowRows({{0, "a"}, {0, "a"}, {10, "a"}, {0, "b"}, {20, "b"}}));
  EXPECT_TRUE(capture.rows.empty());  // Nothing before its window closes.
  EXPECT_EQ(aggregate.open_windows(), 3u);
  aggregate.OnWatermark(9);  // [0, 10) closes at 10.
  EXPECT_TRUE(capture.rows.empty());
  aggregate.OnWatermark(15);
  ASSERT_EQ(capture.rows.size(), 2u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kInsert);
  EXPECT_EQ(capture.rows[0].second, WindowRow(0, "a", 2));
  EXPECT_EQ(capture.rows[1].second, WindowRow(0, "b", 1));
  EXPECT_EQ(aggregate.open_windows(), 2u);
  capture.rows.clear();

  // The closed window's state is gone after the epoch commits; the open ones survive a
  // restart and close from a watermark the new operator sees.
  storage::EpochBatch batch(1);
  aggregate.OnBarrier(&batch);
  ASSERT_TRUE(store->Commit(&batch).ok());
  HashAggregateOperator recovered(CountPerWindow(true), storage::StateTable(store.get(), 1));
  CaptureOperator capture2;
  recovered.set_downstream(&capture2);
  recovered.Start();
  EXPECT_EQ(recovered.open_windows(), 2u);
  recovered.OnChunk(WindowRows({{10, "a"}}));
  recovered.OnWatermark(100);
  ASSERT_EQ(capture2.rows.size(), 2u);
  EXPECT_EQ(capture2.rows[0].second, WindowRow(10, "a", 2));
  EXPECT_EQ(capture2.rows[1].second, WindowRow(20, "b", 1));
  storage::EpochBatch batch2(2);
  recovered.OnBarrier(&batch2);
  ASSERT_TRUE(store->Commit(&batch2).ok());
  size_t keys = 0;
  ASSERT_TRUE(store->NewSnapshot()
                  .ValueOrThrow()
                  ->ScanStateTable(1, [&](std::string_view, std::string_view) { return ++keys; })
                  .ok());
  EXPECT_EQ(keys, 0u);  // Every window closed: no state left.
}

TEST(HashAggregateOperatorTest, UpdatingWindowResultsAreEmittedByTheirCloseAtTheLatest) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator aggregate(CountPerWindow(false), storage::StateTable(store.get(), 1));
  CaptureOperator capture;
  aggregate.set_downstream(&capture);
  aggregate.Start();
  aggregate.OnChunk(WindowRows({{0, "a"}, {0, "a"}, {10, "b"}}));
  storage::EpochBatch batch1(1);
  aggregate.OnBarrier(&batch1);
  ASSERT_TRUE(store->Commit(&batch1).ok());
  ASSERT_EQ(capture.rows.size(), 2u);
  EXPECT_EQ(capture.rows[0].second, WindowRow(0, "a", 2));
  EXPECT_EQ(capture.rows[1].second, WindowRow(10, "b", 1));
  capture.rows.clear();

  // A window that closes before the barrier emits its change as it closes, since its
  // state goes at once; the row stays in the output.
  aggregate.OnChunk(WindowRows({{0, "a"}, {10, "b"}}));
  aggregate.OnWatermark(10);
  ASSERT_EQ(capture.rows.size(), 2u);
  EXPECT_EQ(capture.rows[0].first, RowOp::kUpdateDelete);
  EXPECT_EQ(capture.rows[1].first, RowOp::kUpdateInsert);
  EXPECT_EQ(capture.rows[1].second, WindowRow(0, "a", 3));
  EXPECT_EQ(aggregate.open_windows(), 1u);
  capture.rows.clear();
  storage::EpochBatch batch2(2);
  aggregate.OnBarrier(&batch2);
  ASSERT_EQ(capture.rows.size(), 2u);  // b's window is open: its change waits for the barrier.
  EXPECT_EQ(capture.rows[1].second, WindowRow(10, "b", 2));
}

// Windows opened and closed within one epoch (a backfill's rows and the watermark past them):
// what the operator says it buffers counts their deletes, and never wraps below zero, which
// would throttle every source of the engine.
TEST(HashAggregateOperatorTest, WindowsClosedInTheirEpochLeaveTheBufferCountSane) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator aggregate(CountPerWindow(true), storage::StateTable(store.get(), 1));
  CaptureOperator capture;
  aggregate.set_downstream(&capture);
  aggregate.Start();
  aggregate.OnChunk(WindowRows({{0, "a"}, {10, "b"}, {20, "c"}}));
  EXPECT_GT(aggregate.BufferedBytes(), 0u);
  aggregate.OnWatermark(100);
  EXPECT_EQ(capture.rows.size(), 3u);
  EXPECT_LT(aggregate.BufferedBytes(), size_t{1} << 20);
  storage::EpochBatch batch(1);
  aggregate.OnBarrier(&batch);
  EXPECT_EQ(aggregate.BufferedBytes(), 0u);
}

// Each parallel instance rebuilds the windows of its own virtual nodes only.
TEST(HashAggregateOperatorTest, RecoveredInstancesIndexOnlyTheirOwnWindows) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator aggregate(CountPerWindow(true), storage::StateTable(store.get(), 1));
  aggregate.Start();
  std::vector<std::pair<int64_t, std::string>> rows;
  for (int i = 0; i < 50; ++i) rows.emplace_back(i * 10, "k" + std::to_string(i));
  aggregate.OnChunk(WindowRows(rows));
  storage::EpochBatch batch(1);
  aggregate.OnBarrier(&batch);
  ASSERT_TRUE(store->Commit(&batch).ok());
  size_t total = 0;
  for (size_t instance = 0; instance < 4; ++instance) {
    HashAggregateOperator part(CountPerWindow(true), storage::StateTable(store.get(), 1), false,
                               1024, instance, 4);
    part.Start();
    EXPECT_LT(part.open_windows(), 50u);
    total += part.open_windows();
  }
  EXPECT_EQ(total, 50u);
}

// A cache smaller than the groups: trims take groups out after each barrier, and every group
// the cache lacks is found again in the state table: where the trims list them (few enough
// for the list), and where they are too many to list. An evicted group taken for new would
// insert a second row for its key, or restart its sum; the view kept from the changes must
// match an oracle after every epoch.
// With ViewRows, each group's stored value is also the view's row (sum, k): read back as a
// state past the row, and as the row by a view's reader.
TEST(HashAggregateOperatorTest, GroupsTrimmedFromTheCacheAreReadBack) {
  for (auto [keys, view_rows] : {std::pair{90, false}, {600, false}, {90, true}, {600, true}}) {
    // The list of trimmed groups holds 90's, not 600's.
    SCOPED_TRACE(keys);
    SCOPED_TRACE(view_rows);
    testing::TestDirectory directory;
    auto store = storage::Store::Open(directory.path()).ValueOrThrow();
    std::optional<HashAggregateOperator::ViewRows> rows_of_view;
    if (view_rows) {
      rows_of_view.emplace();
      rows_of_view->columns = {2, 0};
      rows_of_view->types = {TypeId::kInt64, TypeId::kVarchar};
    }
    HashAggregateOperator aggregate(SumByKey(), storage::StateTable(store.get(), 1), true,
                                    /*cached_groups=*/64, 0, 1, rows_of_view);
    CaptureOperator capture;
    aggregate.set_downstream(&capture);
    aggregate.Start();
    std::map<std::string, std::vector<Value>> view;
    std::map<std::string, std::pair<int64_t, int64_t>> oracle;  // key → count, sum
    std::vector<std::pair<std::string, int64_t>> live;          // rows inserted, not deleted
    uint64_t random = 12345;
    auto next = [&random](uint64_t bound) {
      random = random * 6364136223846793005ULL + 1442695040888963407ULL;
      return (random >> 33) % bound;
    };
    for (int epoch = 1; epoch <= 12; ++epoch) {
      std::vector<std::tuple<RowOp, std::string, int64_t>> rows;
      for (int i = 0; i < 150; ++i) {
        if (!live.empty() && next(4) == 0) {
          size_t at = next(live.size());
          auto [key, value] = live[at];
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
          rows.emplace_back(RowOp::kDelete, key, value);
          auto& [count, sum] = oracle[key];
          --count;
          sum -= value;
        } else {
          std::string key = "k" + std::to_string(next(static_cast<uint64_t>(keys)));
          auto value = static_cast<int64_t>(next(100));
          live.emplace_back(key, value);
          rows.emplace_back(RowOp::kInsert, key, value);
          auto& [count, sum] = oracle[key];
          ++count;
          sum += value;
        }
      }
      aggregate.OnChunk(Rows(rows));
      storage::EpochBatch batch(static_cast<uint64_t>(epoch));
      aggregate.OnBarrier(&batch);
      ASSERT_TRUE(store->Commit(&batch).ok());
      for (const auto& [op, row] : capture.rows) {
        const std::string& key = row[0].string_value();
        if (op == RowOp::kInsert || op == RowOp::kUpdateInsert) {
          ASSERT_TRUE(view.emplace(key, row).second) << "a second row for " << key;
        } else {
          ASSERT_EQ(view[key], row) << key;
          view.erase(key);
        }
      }
      capture.rows.clear();
      for (const auto& [key, state] : oracle) {
        if (state.first == 0) {
          EXPECT_EQ(view.count(key), 0u) << key;
        } else {
          EXPECT_EQ(view[key], (std::vector<Value>{Value::String(key), Value::Int(state.first),
                                                   Value::Int(state.second)}))
              << key << " after epoch " << epoch;
        }
      }
      if (!view_rows) continue;
      std::map<std::string, std::vector<Value>> stored;
      ASSERT_TRUE(store->NewSnapshot()
                      .ValueOrThrow()
                      ->ScanStateTable(1,
                                       [&](std::string_view, std::string_view value) {
                                         auto row =
                                             storage::DecodeRowPrefix(&value, rows_of_view->types);
                                         EXPECT_TRUE(row && !value.empty());  // A state follows.
                                         if (row) stored[(*row)[1].string_value()] = *row;
                                         return true;
                                       })
                      .ok());
      std::map<std::string, std::vector<Value>> expected;
      for (const auto& [key, row] : view) expected[key] = {row[2], row[0]};
      EXPECT_EQ(stored, expected) << "after epoch " << epoch;
    }
  }
}

// While nothing reads a view's changes, the aggregate that writes its rows emits none: it
// stores what an emitting aggregate stores, counts the changes it would have emitted into
// the view's metrics, and when a reader comes, emits each group's change from the row the
// group had at the epoch's start. Two aggregates run side by side over the same changes: one
// always emitting, one whose view gains and loses its reader between epochs.
TEST(HashAggregateOperatorTest, ChangesNobodyReadsAreCountedNotEmitted) {
  testing::TestDirectory directory;
  auto store = storage::Store::Open(directory.path()).ValueOrThrow();
  HashAggregateOperator::ViewRows always;
  always.columns = {2, 0};
  always.types = {TypeId::kInt64, TypeId::kVarchar};
  HashAggregateOperator::ViewRows toggled = always;
  auto read = std::make_shared<std::atomic<bool>>(false);
  std::atomic<uint64_t> rows_written{0};
  std::atomic<uint64_t> bytes_written{0};
  toggled.changes_read = read;
  toggled.rows_written = &rows_written;
  toggled.bytes_written = &bytes_written;
  HashAggregateOperator reference(SumByKey(), storage::StateTable(store.get(), 1), true,
                                  /*cached_groups=*/32, 0, 1, always);
  HashAggregateOperator aggregate(SumByKey(), storage::StateTable(store.get(), 2), true,
                                  /*cached_groups=*/32, 0, 1, toggled);
  CaptureOperator reference_out;
  CaptureOperator out;
  reference.set_downstream(&reference_out);
  aggregate.set_downstream(&out);
  reference.Start();
  aggregate.Start();
  auto scan = [&](uint32_t table) {
    std::map<std::string, std::string> entries;
    EXPECT_TRUE(store->NewSnapshot()
                    .ValueOrThrow()
                    ->ScanStateTable(table,
                                     [&](std::string_view key, std::string_view value) {
                                       entries.emplace(key, value);
                                       return true;
                                     })
                    .ok());
    return entries;
  };
  std::map<std::string, int64_t> counts;  // key → rows in the group
  std::vector<std::pair<std::string, int64_t>> live;
  uint64_t random = 777;
  auto next = [&random](uint64_t bound) {
    random = random * 6364136223846793005ULL + 1442695040888963407ULL;
    return (random >> 33) % bound;
  };
  bool emitted_some = false;
  bool counted_some = false;
  bool reading = false;  // As of this epoch's start.
  for (int epoch = 1; epoch <= 16; ++epoch) {
    std::vector<std::tuple<RowOp, std::string, int64_t>> rows;
    std::map<std::string, int64_t> counts_before;  // of the groups this epoch changes
    for (int i = 0; i < 120; ++i) {
      std::string key;
      if (!live.empty() && next(3) == 0) {
        size_t at = next(live.size());
        auto [victim, value] = live[at];
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
        rows.emplace_back(RowOp::kDelete, victim, value);
        key = victim;
        counts_before.emplace(key, counts[key]);
        --counts[key];
      } else {
        key = "k" + std::to_string(next(60));
        auto value = static_cast<int64_t>(next(100));
        live.emplace_back(key, value);
        rows.emplace_back(RowOp::kInsert, key, value);
        counts_before.emplace(key, counts[key]);
        ++counts[key];
      }
    }
    reference.OnChunk(Rows(rows));
    aggregate.OnChunk(Rows(rows));
    // Readers come and go between barriers, as CREATE and DROP change the flag: from the
    // next epoch on.
    read->store(epoch % 5 == 2 || epoch % 5 == 3);
    uint64_t rows_before = rows_written.load();
    storage::EpochBatch batch(static_cast<uint64_t>(epoch));
    reference.OnBarrier(&batch);
    aggregate.OnBarrier(&batch);
    ASSERT_TRUE(store->Commit(&batch).ok());
    SCOPED_TRACE(epoch);
    EXPECT_EQ(scan(2), scan(1));  // The same groups, rows and states.
    if (reading) {
      EXPECT_EQ(out.rows, reference_out.rows);
      EXPECT_EQ(rows_written.load(), rows_before);  // Counted downstream, not here.
      emitted_some |= !out.rows.empty();
    } else {
      EXPECT_TRUE(out.rows.empty());
      uint64_t changes = 0;  // An update pair of a group that changed back counts too.
      for (const auto& [key, before] : counts_before) {
        changes += (before > 0 ? 1 : 0) + (counts[key] > 0 ? 1 : 0);
      }
      EXPECT_EQ(rows_written.load() - rows_before, changes);
      counted_some |= changes > 0;
    }
    out.rows.clear();
    reference_out.rows.clear();
    reading = read->load();
  }
  EXPECT_TRUE(emitted_some);
  EXPECT_TRUE(counted_some);
  EXPECT_GT(bytes_written.load(), rows_written.load());
}

// Stored group states must stay readable across versions: the codec writes exactly the row
// layout that earlier versions wrote through EncodeRow (Layout::kRow, before revision 7),
// and reads it back whole.
TEST(GroupStateCodecTest, WritesTheStoredLayoutAndReadsItBack) {
  AggregateCall max = Call(AggregateKind::kMax, TypeId::kVarchar, 2, TypeId::kVarchar);
  max.keeps_values = true;
  std::vector<AggregateCall> calls = {
      Call(AggregateKind::kCountStar, TypeId::kInt64),
      Call(AggregateKind::kSum, TypeId::kNumeric, 1, TypeId::kNumeric),
      Call(AggregateKind::kMin, TypeId::kVarchar, 2, TypeId::kVarchar), max};

  GroupState state;
  state.row_count = 3;
  state.aggregates.resize(calls.size());
  state.aggregates[0].count = 3;
  state.aggregates[1].count = 2;
  state.aggregates[1].int_sum = -(Int128{1} << 70) - 5;  // Both 64-bit halves matter.
  state.aggregates[1].sum_scale = 2;
  state.aggregates[1].mutable_extras().nan_count = 1;
  state.aggregates[1].mutable_extras().wide_sum =
      decimal::Parse("12345678901234567890123456789012345678901");
  state.aggregates[2].extremum = Value::String("apple");
  state.aggregates[3].mutable_extras().distinct_values = {{"k1", 2},
                                                          {"k2", 1}};  // extremum stays NULL
  state.key_scales = {4};

  // The layout as written before the codec: one row of Values through EncodeRow.
  std::vector<Value> row = {Value::Int(3)};
  storage::RowTypes types = {TypeId::kInt64};
  for (size_t i = 0; i < calls.size(); ++i) {
    const AggregateState& each = state.aggregates[i];
    row.insert(row.end(),
               {Value::Int(each.count), Value::Int(static_cast<int64_t>(each.int_sum >> 64)),
                Value::Int(static_cast<int64_t>(static_cast<uint64_t>(each.int_sum))),
                Value::Double(each.float_sum), each.extremum});
    types.insert(types.end(), {TypeId::kInt64, TypeId::kInt64, TypeId::kInt64, TypeId::kFloat64,
                               calls[i].arg ? calls[i].arg->type : DataType(TypeId::kInt64)});
    if (i == 1) {
      row.insert(row.end(), {Value::Int(each.sum_scale), Value::Int(each.extras().nan_count),
                             Value::Int(each.extras().infinity_count),
                             Value::Int(each.extras().negative_infinity_count),
                             Value::Numeric(each.extras().wide_sum)});
      types.insert(types.end(), {TypeId::kInt64, TypeId::kInt64, TypeId::kInt64, TypeId::kInt64,
                                 TypeId::kNumeric});
    }
  }
  row.push_back(Value::Int(4));
  types.push_back(TypeId::kInt64);
  std::string fixed;
  storage::EncodeRow(row, types, &fixed);
  std::string expected;
  storage::AppendBigEndian32(static_cast<uint32_t>(fixed.size()), &expected);
  expected += fixed;
  storage::AppendBigEndian32(2, &expected);
  for (const auto& [value, times] : state.aggregates[3].extras().distinct_values) {
    storage::AppendBigEndian32(static_cast<uint32_t>(value.size()), &expected);
    expected += value;
    storage::AppendBigEndian64(static_cast<uint64_t>(times), &expected);
  }

  GroupStateCodec codec(calls, 1, GroupStateCodec::Layout::kRow);
  std::string encoded = "prefix";  // Encode appends.
  codec.Encode(state, &encoded);
  EXPECT_EQ(encoded, "prefix" + expected);

  GroupState decoded;
  ASSERT_TRUE(codec.Decode(expected, &decoded));
  EXPECT_EQ(decoded.row_count, 3);
  ASSERT_EQ(decoded.aggregates.size(), calls.size());
  EXPECT_EQ(decoded.aggregates[0].count, 3);
  EXPECT_TRUE(decoded.aggregates[1].int_sum == state.aggregates[1].int_sum);
  EXPECT_EQ(decoded.aggregates[1].sum_scale, 2);
  EXPECT_EQ(decoded.aggregates[1].extras().nan_count, 1);
  EXPECT_TRUE(decoded.aggregates[1].extras().wide_sum == state.aggregates[1].extras().wide_sum);
  EXPECT_EQ(decoded.aggregates[2].extremum, Value::String("apple"));
  EXPECT_TRUE(decoded.aggregates[3].extremum.is_null());
  EXPECT_EQ(decoded.aggregates[3].extras().distinct_values,
            state.aggregates[3].extras().distinct_values);
  EXPECT_EQ(decoded.key_scales, std::vector<int32_t>{4});

  // Bytes that do not fit: cut short, or a NULL where a count belongs.
  EXPECT_FALSE(codec.Decode(std::string_view(expected).substr(0, expected.size() - 3), &decoded));
  std::string null_count = expected;
  null_count[4 + 1 + 8] = 0;  // The first call's count: its tag byte.
  EXPECT_FALSE(codec.Decode(null_count, &decoded));
}

// The packed layout (revision 7 on) writes only the fields that differ from the state of no
// rows, and reads back every field as it was, zeros and -0.0 included; a state of a few
// thousand rows under count(*) and sum(bigint) takes 11 bytes where the row layout takes 83.
TEST(GroupStateCodecTest, PackedStatesKeepOnlyWhatIsNotZero) {
  std::vector<AggregateCall> calls = {
      Call(AggregateKind::kCountStar, TypeId::kInt64),
      Call(AggregateKind::kSum, TypeId::kNumeric, 1, TypeId::kInt64),
      Call(AggregateKind::kSum, TypeId::kFloat64, 2, TypeId::kFloat64),
      Call(AggregateKind::kMin, TypeId::kInt64, 1, TypeId::kInt64),
      Call(AggregateKind::kSum, TypeId::kNumeric, 3, TypeId::kNumeric)};
  GroupStateCodec packed(calls, 1);
  GroupStateCodec row(calls, 1, GroupStateCodec::Layout::kRow);

  auto round_trip = [&](const GroupState& state) {
    std::string bytes;
    packed.Encode(state, &bytes);
    GroupState decoded;
    decoded.row_count = 99;  // Decode sets every field, a zero one too.
    EXPECT_TRUE(packed.Decode(bytes, &decoded));
    EXPECT_EQ(decoded.row_count, state.row_count);
    for (size_t i = 0; i < calls.size(); ++i) {
      SCOPED_TRACE(i);
      const AggregateState& want = state.aggregates[i];
      const AggregateState& got = decoded.aggregates[i];
      EXPECT_EQ(got.count, want.count);
      EXPECT_TRUE(got.int_sum == want.int_sum);
      EXPECT_EQ(std::signbit(got.float_sum), std::signbit(want.float_sum));
      EXPECT_EQ(got.float_sum, want.float_sum);
      EXPECT_EQ(got.extremum, want.extremum);
      EXPECT_EQ(got.sum_scale, want.sum_scale);
      EXPECT_EQ(got.extras().nan_count, want.extras().nan_count);
      EXPECT_TRUE(got.extras().wide_sum == want.extras().wide_sum);
    }
    EXPECT_EQ(decoded.key_scales, state.key_scales);
    return bytes;
  };

  GroupState empty;
  empty.aggregates.resize(calls.size());
  empty.key_scales = {0};
  // Fields: the row count, 5 per call and 10 for the numeric sum, the key scale: 32, a
  // 4-byte bitmap, and no value.
  EXPECT_EQ(round_trip(empty), std::string(4, '\0'));

  GroupState state = empty;
  state.row_count = 4000;
  state.aggregates[0].count = 4000;
  state.aggregates[1].count = 4000;
  state.aggregates[1].int_sum = -(Int128{1} << 70) - 5;  // Both 64-bit halves.
  state.aggregates[2].count = 1;
  state.aggregates[2].float_sum = -0.0;  // Written: only +0.0 is left out.
  state.aggregates[3].count = 2;
  state.aggregates[3].extremum = Value::Int(0);  // A minimum of 0 is not NULL.
  state.aggregates[4].count = 3;
  state.aggregates[4].sum_scale = 2;
  state.aggregates[4].mutable_extras().nan_count = 1;
  state.aggregates[4].mutable_extras().wide_sum =
      decimal::Parse("12345678901234567890123456789012345678901");
  state.key_scales = {3};
  round_trip(state);

  GroupState small = empty;
  small.row_count = 4000;
  small.aggregates[0].count = 4000;
  small.aggregates[1].count = 4000;
  small.aggregates[1].int_sum = 123456;
  std::string packed_bytes = round_trip(small);
  std::string row_bytes;
  row.Encode(small, &row_bytes);
  // count(*) and sum(bigint) alone: a 2-byte bitmap, three counts of 2 bytes, the sum's low
  // half in 3; nine bytes a field, a byte a NULL minimum, in the row layout.
  std::vector<AggregateCall> two = {calls[0], calls[1]};
  GroupState two_state{4000, {small.aggregates[0], small.aggregates[1]}, {}};
  std::string two_packed, two_row;
  GroupStateCodec(two, 0).Encode(two_state, &two_packed);
  GroupStateCodec(two, 0, GroupStateCodec::Layout::kRow).Encode(two_state, &two_row);
  EXPECT_EQ(two_packed.size(), 2u + 2 + 2 + 2 + 3);
  EXPECT_EQ(two_row.size(), 83u);
  EXPECT_LT(packed_bytes.size() * 5, row_bytes.size());

  // Bytes cut short, or followed by more, do not decode.
  std::string bytes;
  packed.Encode(state, &bytes);
  GroupState ignored;
  EXPECT_FALSE(packed.Decode(std::string_view(bytes).substr(0, bytes.size() - 1), &ignored));
  EXPECT_FALSE(packed.Decode(bytes + "x", &ignored));
}

}  // namespace
}  // namespace stave::executor
