#include "executor/operators/hash_join_operator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <random>

#include "common/sql_error.h"
#include "storage/key_codec.h"
#include "tests/test_directory.h"

namespace stave::executor {
namespace {

using planner::BoundExpr;
using Row = std::vector<Value>;

// Keeps what an operator emits as a multiset of rows (count per row).
class MultisetOperator : public StreamOperator {
 public:
  void OnChunk(Chunk chunk) override {
    for (size_t r = 0; r < chunk.size(); ++r) {
      std::string key;
      Row row = chunk.GetRow(r);
      for (size_t c = 0; c < row.size(); ++c) {
        // Columns alternate: k BIGINT, v VARCHAR.
        if (row[c].is_null()) {
          key += "NULL|";
        } else {
          key += (c % 2 == 0 ? std::to_string(row[c].int_value()) : row[c].string_value()) + "|";
        }
      }
      counts[key] += RowSign(chunk.ops[r]);
      if (counts[key] == 0) counts.erase(key);
    }
  }
  std::map<std::string, int64_t> counts;
};

// Sides of (k BIGINT, v VARCHAR, or v of `value` type), joined on k.
std::shared_ptr<planner::JoinNode> JoinOnK(planner::JoinType type,
                                           DataType value = TypeId::kVarchar) {
  auto side = std::make_shared<planner::ValuesNode>();
  side->output = {{"k", TypeId::kInt64}, {"v", value}};
  auto node = std::make_shared<planner::JoinNode>();
  node->join_type = type;
  node->input = side;
  node->right = side;
  node->left_keys = {BoundExpr::MakeColumn(0, TypeId::kInt64)};
  node->right_keys = {BoundExpr::MakeColumn(0, TypeId::kInt64)};
  node->output = {{"k", TypeId::kInt64}, {"v", value}, {"k", TypeId::kInt64}, {"v", value}};
  return node;
}

Chunk Rows(const std::vector<std::tuple<RowOp, std::optional<int64_t>, std::string>>& rows) {
  Chunk chunk = Chunk::WithTypes({TypeId::kInt64, TypeId::kVarchar});
  for (const auto& [op, key, value] : rows) {
    chunk.AppendRow({key ? Value::Int(*key) : Value(), Value::String(value)}, op);
  }
  return chunk;
}

std::string Key(std::optional<int64_t> lk, std::string lv, std::optional<int64_t> rk,
                std::string rv) {
  auto number = [](std::optional<int64_t> k) { return k ? std::to_string(*k) : "NULL"; };
  auto text = [](const std::string& v) { return v.empty() ? std::string("NULL") : v; };
  return number(lk) + "|" + text(lv) + "|" + number(rk) + "|" + text(rv) + "|";
}

class HashJoinOperatorTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = storage::Store::Open(directory_.path()).ValueOrThrow(); }
  std::unique_ptr<HashJoinOperator> Make(planner::JoinType type) { return Make(JoinOnK(type)); }
  /// A started join of `node` over state tables `left_table` and `right_table`, with a cache
  /// of `cache_bytes`, its output counted in out_.
  std::unique_ptr<HashJoinOperator> Make(std::shared_ptr<const planner::JoinNode> node,
                                         size_t cache_bytes = size_t{64} << 20,
                                         uint32_t left_table = 1, uint32_t right_table = 2) {
    auto join = std::make_unique<HashJoinOperator>(
        std::move(node), storage::StateTable(store_.get(), left_table),
        storage::StateTable(store_.get(), right_table), 0, 1, cache_bytes);
    join->set_downstream(&out_);
    join->Start();
    return join;
  }

  testing::TestDirectory directory_;
  std::unique_ptr<storage::Store> store_;
  MultisetOperator out_;
};

TEST_F(HashJoinOperatorTest, InnerJoinInsertsAndDeletesOnBothSides) {
  auto join = Make(planner::JoinType::kInner);
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}, {RowOp::kInsert, 2, "b"}}));
  EXPECT_TRUE(out_.counts.empty());
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "x"}, {RowOp::kInsert, 1, "y"}}));
  EXPECT_EQ(out_.counts.size(), 2u);
  EXPECT_EQ(out_.counts[Key(1, "a", 1, "x")], 1);
  join->OnInputChunk(0, Rows({{RowOp::kDelete, 1, "a"}}));
  EXPECT_TRUE(out_.counts.empty());
  join->OnInputChunk(0, Rows({{RowOp::kUpdateDelete, 2, "b"}, {RowOp::kUpdateInsert, 1, "b"}}));
  EXPECT_EQ(out_.counts.size(), 2u);
  join->OnInputChunk(1, Rows({{RowOp::kDelete, 1, "x"}}));
  EXPECT_EQ(out_.counts.size(), 1u);
  EXPECT_EQ(out_.counts[Key(1, "b", 1, "y")], 1);
}

TEST_F(HashJoinOperatorTest, DuplicatesAreCounted) {
  auto join = Make(planner::JoinType::kInner);
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}, {RowOp::kInsert, 1, "a"}}));
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "x"}, {RowOp::kInsert, 1, "x"}}));
  EXPECT_EQ(out_.counts[Key(1, "a", 1, "x")], 4);
  join->OnInputChunk(0, Rows({{RowOp::kDelete, 1, "a"}}));
  EXPECT_EQ(out_.counts[Key(1, "a", 1, "x")], 2);
  join->OnInputChunk(1, Rows({{RowOp::kDelete, 1, "x"}}));
  EXPECT_EQ(out_.counts[Key(1, "a", 1, "x")], 1);
}

TEST_F(HashJoinOperatorTest, NullKeysNeverMatch) {
  auto join = Make(planner::JoinType::kInner);
  join->OnInputChunk(0, Rows({{RowOp::kInsert, std::nullopt, "a"}}));
  join->OnInputChunk(1, Rows({{RowOp::kInsert, std::nullopt, "x"}}));
  EXPECT_TRUE(out_.counts.empty());
  auto left = Make(planner::JoinType::kLeft);
  left->OnInputChunk(0, Rows({{RowOp::kInsert, std::nullopt, "a"}}));
  left->OnInputChunk(1, Rows({{RowOp::kInsert, std::nullopt, "x"}}));
  EXPECT_EQ(out_.counts.size(), 1u);
  EXPECT_EQ(out_.counts[Key(std::nullopt, "a", std::nullopt, "")], 1);
  left->OnInputChunk(0, Rows({{RowOp::kDelete, std::nullopt, "a"}}));
  EXPECT_TRUE(out_.counts.empty());
}

TEST_F(HashJoinOperatorTest, OuterJoinPadsAndRetractsThePadding) {
  auto join = Make(planner::JoinType::kFull);
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}}));
  EXPECT_EQ(out_.counts[Key(1, "a", std::nullopt, "")], 1);
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "x"}, {RowOp::kInsert, 2, "y"}}));
  EXPECT_EQ(out_.counts.size(), 2u);  // The padded left row went at the first match.
  EXPECT_EQ(out_.counts[Key(1, "a", 1, "x")], 1);
  EXPECT_EQ(out_.counts[Key(std::nullopt, "", 2, "y")], 1);
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "z"}}));
  EXPECT_EQ(out_.counts.size(), 3u);
  join->OnInputChunk(1, Rows({{RowOp::kDelete, 1, "x"}, {RowOp::kDelete, 1, "z"}}));
  // The last match left: the padded row is back.
  EXPECT_EQ(out_.counts.size(), 2u);
  EXPECT_EQ(out_.counts[Key(1, "a", std::nullopt, "")], 1);
  join->OnInputChunk(0, Rows({{RowOp::kDelete, 1, "a"}}));
  EXPECT_EQ(out_.counts.size(), 1u);
}

TEST_F(HashJoinOperatorTest, StateSurvivesACheckpoint) {
  auto join = Make(planner::JoinType::kLeft);
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}, {RowOp::kInsert, 2, "b"}}));
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "x"}}));
  storage::EpochBatch batch(1);
  join->OnBarrier(&batch);
  ASSERT_TRUE(store_->Commit(&batch).ok());
  // Changes after the checkpoint are lost with the operator.
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 2, "y"}}));
  out_.counts.clear();
  auto recovered = Make(planner::JoinType::kLeft);
  recovered->OnInputChunk(1, Rows({{RowOp::kInsert, 2, "y"}}));
  EXPECT_EQ(out_.counts[Key(2, "b", 2, "y")], 1);
  EXPECT_EQ(out_.counts[Key(2, "b", std::nullopt, "")], -1);  // Retracts the padding.
  recovered->OnInputChunk(1, Rows({{RowOp::kDelete, 1, "x"}}));
  EXPECT_EQ(out_.counts[Key(1, "a", std::nullopt, "")], 1);
}

// A semi (anti) join emits a left row alone while it has at least one (no) match, as right
// rows come and go, and survives NULL keys and duplicates.
TEST_F(HashJoinOperatorTest, SemiJoinFollowsMatchCounts) {
  auto node = JoinOnK(planner::JoinType::kSemi);
  node->output.resize(2);
  auto join = std::make_unique<HashJoinOperator>(node, storage::StateTable(store_.get(), 1),
                                                 storage::StateTable(store_.get(), 2));
  join->set_downstream(&out_);
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"},
                              {RowOp::kInsert, 1, "a"},
                              {RowOp::kInsert, 2, "b"},
                              {RowOp::kInsert, std::nullopt, "n"}}));
  EXPECT_TRUE(out_.counts.empty());
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "x"}, {RowOp::kInsert, 1, "y"}}));
  EXPECT_EQ(out_.counts.size(), 1u);
  EXPECT_EQ(out_.counts["1|a|"], 2);  // Two copies, once each: not once per match.
  join->OnInputChunk(1, Rows({{RowOp::kDelete, 1, "x"}}));
  EXPECT_EQ(out_.counts["1|a|"], 2);
  join->OnInputChunk(1, Rows({{RowOp::kDelete, 1, "y"}, {RowOp::kInsert, 2, "z"}}));
  EXPECT_EQ(out_.counts.size(), 1u);
  EXPECT_EQ(out_.counts["2|b|"], 1);
  join->OnInputChunk(0, Rows({{RowOp::kDelete, 2, "b"}, {RowOp::kInsert, 2, "c"}}));
  EXPECT_EQ(out_.counts.size(), 1u);
  EXPECT_EQ(out_.counts["2|c|"], 1);
}

TEST_F(HashJoinOperatorTest, AntiJoinFollowsMatchCounts) {
  auto node = JoinOnK(planner::JoinType::kAnti);
  node->output.resize(2);
  auto join = std::make_unique<HashJoinOperator>(node, storage::StateTable(store_.get(), 1),
                                                 storage::StateTable(store_.get(), 2));
  join->set_downstream(&out_);
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"},
                              {RowOp::kInsert, 2, "b"},
                              {RowOp::kInsert, std::nullopt, "n"}}));
  EXPECT_EQ(out_.counts.size(), 3u);  // A NULL key never matches: always shown.
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "x"}, {RowOp::kInsert, 1, "y"}}));
  EXPECT_EQ(out_.counts.size(), 2u);
  EXPECT_EQ(out_.counts.count("1|a|"), 0u);
  join->OnInputChunk(1, Rows({{RowOp::kDelete, 1, "x"}}));
  EXPECT_EQ(out_.counts.count("1|a|"), 0u);
  join->OnInputChunk(1, Rows({{RowOp::kDelete, 1, "y"}}));
  EXPECT_EQ(out_.counts["1|a|"], 1);
  join->OnInputChunk(0, Rows({{RowOp::kDelete, std::nullopt, "n"}, {RowOp::kDelete, 2, "b"}}));
  EXPECT_EQ(out_.counts.size(), 1u);
}

// The full outer join of two multisets of (k, v) rows, as the multiset of output rows.
std::map<std::string, int64_t> FullJoinOracle(
    const std::map<std::pair<int64_t, std::string>, int64_t>& left,
    const std::map<std::pair<int64_t, std::string>, int64_t>& right) {
  std::map<std::string, int64_t> result;
  auto has_key = [](const auto& side, int64_t k) {
    return std::any_of(side.begin(), side.end(),
                       [&](const auto& row) { return row.first.first == k; });
  };
  for (const auto& [l, lc] : left) {
    for (const auto& [r, rc] : right) {
      if (l.first == r.first) result[Key(l.first, l.second, r.first, r.second)] += lc * rc;
    }
    if (!has_key(right, l.first)) result[Key(l.first, l.second, std::nullopt, "")] += lc;
  }
  for (const auto& [r, rc] : right) {
    if (!has_key(left, r.first)) result[Key(std::nullopt, "", r.first, r.second)] += rc;
  }
  return result;
}

// Takes one copy of a random row out of a side's rows (row -> copies) and returns the row.
std::pair<int64_t, std::string> TakeRandomRow(
    std::map<std::pair<int64_t, std::string>, int64_t>* side, std::mt19937& random) {
  auto it = side->begin();
  std::advance(it, random() % side->size());
  std::pair<int64_t, std::string> row = it->first;
  if (--it->second == 0) side->erase(it);
  return row;
}

// Deletes every copy of `rows` (row -> copies) from side `side` of `join`.
void DeleteEveryRow(HashJoinOperator* join, size_t side,
                    const std::map<std::pair<int64_t, std::string>, int64_t>& rows) {
  for (const auto& [row, count] : rows) {
    for (int64_t i = 0; i < count; ++i) {
      join->OnInputChunk(side, Rows({{RowOp::kDelete, row.first, row.second}}));
    }
  }
}

// Both sides' rows as an oracle keeps them, changed one row at a time in a join, across
// barriers whose commits lag `lag` barriers behind (as the engine's may), and set back to
// the last commit by a crash, with the join's output.
class EpochsInFlight {
 public:
  using Sides = std::map<std::pair<int64_t, std::string>, int64_t>;
  EpochsInFlight(storage::Store* store, MultisetOperator* out, size_t lag)
      : store_(store), out_(out), lag_(lag) {}

  /// Inserts (k, v) on `side`, or deletes a copy of a random row of the side (`remove`).
  void Change(HashJoinOperator& join, size_t side, int64_t k, std::string v, bool remove,
              std::mt19937& random) {
    auto row = std::make_pair(k, std::move(v));
    if (remove) {
      row = TakeRandomRow(&sides[side], random);
    } else {
      ++sides[side][row];
    }
    join.OnInputChunk(side,
                      Rows({{remove ? RowOp::kDelete : RowOp::kInsert, row.first, row.second}}));
  }
  /// Commits the oldest epoch in flight if `lag` are, then flushes the join into `epoch`.
  void Barrier(HashJoinOperator& join, uint64_t epoch) {
    if (in_flight_.size() == lag_) {
      ASSERT_TRUE(store_->Commit(in_flight_.front().first.get()).ok());
      committed_ = std::move(in_flight_.front().second);
      in_flight_.pop_front();
    }
    auto batch = std::make_unique<storage::EpochBatch>(epoch);
    join.OnBarrier(batch.get());
    in_flight_.emplace_back(std::move(batch), State{{sides[0], sides[1]}, out_->counts});
  }
  /// A crash while epochs are in flight: back to the last commit (the caller makes a new
  /// operator).
  void Crash() {
    in_flight_.clear();
    sides[0] = committed_.sides[0];
    sides[1] = committed_.sides[1];
    out_->counts = committed_.output;
  }
  void CommitAll() {
    for (auto& [batch, state] : in_flight_) ASSERT_TRUE(store_->Commit(batch.get()).ok());
    in_flight_.clear();
  }
  /// Runs epochs `first` to `first` + 23 through `*join`: `changes` makes each epoch's
  /// changes, after which the output must equal `oracle()`; the thirteenth crashes before
  /// its barrier, and `make` builds the operator that goes on.
  void Run(uint64_t first, std::unique_ptr<HashJoinOperator>* join,
           const std::function<std::unique_ptr<HashJoinOperator>()>& make,
           const std::function<void(HashJoinOperator&)>& changes,
           const std::function<std::map<std::string, int64_t>()>& oracle) {
    for (uint64_t epoch = first; epoch < first + 24; ++epoch) {
      changes(**join);
      ASSERT_EQ(out_->counts, oracle()) << "epoch " << epoch;
      if (epoch == first + 12) {
        // A crash while the last epoch commits: back to the one before, with a new operator.
        Crash();
        *join = make();
        continue;
      }
      ASSERT_NO_FATAL_FAILURE(Barrier(**join, epoch));
    }
  }

  Sides sides[2];

 private:
  struct State {
    Sides sides[2];
    std::map<std::string, int64_t> output;
  };
  storage::Store* store_;
  MultisetOperator* out_;
  size_t lag_;
  State committed_;
  // Epochs flushed, not committed yet, the oldest first, with what they leave when they are.
  std::deque<std::pair<std::unique_ptr<storage::EpochBatch>, State>> in_flight_;
};

// Many rows on a few keys, inserted and deleted on both sides across barriers whose commits
// lag one epoch behind (as the engine's do), with a crash before a commit in the middle: the
// output follows an oracle all along, with the cache of decoded keys kept past barriers and
// with it trimmed at every barrier.
TEST_F(HashJoinOperatorTest, HotKeysFollowAnOracleAcrossBarriersAndARestart) {
  uint32_t table = 1;
  uint64_t first_epoch = 1;  // Epochs go on across passes: the store has committed the last.
  for (size_t cache_bytes : {size_t{64} << 20, size_t{1}}) {
    SCOPED_TRACE(cache_bytes);
    uint32_t left_table = table++;
    uint32_t right_table = table++;
    out_.counts.clear();
    auto make = [&] {
      return Make(JoinOnK(planner::JoinType::kFull), cache_bytes, left_table, right_table);
    };
    EpochsInFlight epochs(store_.get(), &out_, 1);
    auto& sides = epochs.sides;
    std::mt19937 random(7);
    auto join = make();
    auto changes = [&](HashJoinOperator& into) {
      for (int step = 0; step < 150; ++step) {
        size_t side = random() % 2;
        int64_t k = static_cast<int64_t>(random() % 3);
        bool remove = !sides[side].empty() && random() % 3 == 0;
        epochs.Change(into, side, k, "v" + std::to_string(random() % 60), remove, random);
      }
    };
    ASSERT_NO_FATAL_FAILURE(epochs.Run(first_epoch, &join, make, changes,
                                       [&] { return FullJoinOracle(sides[0], sides[1]); }));
    // Three keys a side stay cached past the barrier, or, with no room for them, only until
    // the epochs that wrote them have committed.
    ASSERT_NO_FATAL_FAILURE(epochs.CommitAll());
    storage::EpochBatch quiet(first_epoch + 24);
    join->OnBarrier(&quiet);
    ASSERT_TRUE(store_->Commit(&quiet).ok());
    first_epoch += 25;
    EXPECT_EQ(join->cached_keys(0) + join->cached_keys(1), cache_bytes > 1 ? 6u : 0u);
    // And what they held is what the store reads back.
    out_.counts.clear();
    auto recovered = make();
    DeleteEveryRow(recovered.get(), 0, sides[0]);
    DeleteEveryRow(recovered.get(), 1, sides[1]);
    // Deleting every row retracts the whole result.
    std::map<std::string, int64_t> retracted;
    for (const auto& [key, count] : FullJoinOracle(sides[0], sides[1])) retracted[key] = -count;
    EXPECT_EQ(out_.counts, retracted);
  }
}

// A left join on k with a residual condition, left.v < right.v, over keys that grow past the
// rows a key keeps decoded (the condition is then read from the rows' encodings), with NULL
// values, deletes on both sides, several rows a chunk and barriers: the output follows an
// oracle all along.
TEST_F(HashJoinOperatorTest, AResidualConditionOverHotKeysFollowsAnOracle) {
  uint32_t table = 1;
  uint64_t epoch = 1;
  for (size_t cache_bytes : {size_t{64} << 20, size_t{1}}) {
    SCOPED_TRACE(cache_bytes);
    auto node = JoinOnK(planner::JoinType::kLeft);
    node->residual = BoundExpr::MakeFunction(
        planner::ScalarFunction::kLess, TypeId::kBoolean,
        {BoundExpr::MakeColumn(1, TypeId::kVarchar), BoundExpr::MakeColumn(3, TypeId::kVarchar)});
    out_.counts.clear();
    HashJoinOperator join(node, storage::StateTable(store_.get(), table),
                          storage::StateTable(store_.get(), table + 1), 0, 1, cache_bytes);
    table += 2;
    join.set_downstream(&out_);
    join.Start();
    // (k, v) → copies; v "" stands for NULL.
    using Side = std::map<std::pair<int64_t, std::string>, int64_t>;
    Side sides[2];
    auto oracle = [&] {
      std::map<std::string, int64_t> result;
      for (const auto& [l, lc] : sides[0]) {
        bool matched = false;
        for (const auto& [r, rc] : sides[1]) {
          if (l.first != r.first || l.second.empty() || r.second.empty() ||
              !(l.second < r.second)) {
            continue;
          }
          result[Key(l.first, l.second, r.first, r.second)] += lc * rc;
          matched = true;
        }
        if (!matched) result[Key(l.first, l.second, std::nullopt, "")] += lc;
      }
      return result;
    };
    std::mt19937 random(11);
    // Rows go in chunks of up to 8 of one side: a chunk's rows are probed before any is
    // applied.
    Chunk chunk = Chunk::WithTypes({TypeId::kInt64, TypeId::kVarchar});
    size_t chunk_side = 0;
    auto send = [&] {
      if (!chunk.empty()) join.OnInputChunk(chunk_side, std::move(chunk));
      chunk = Chunk::WithTypes({TypeId::kInt64, TypeId::kVarchar});
    };
    for (int round = 0; round < 20; ++round, ++epoch) {
      for (int step = 0; step < 120; ++step) {
        size_t side = random() % 4 == 0 ? 1 - chunk_side : chunk_side;
        if (side != chunk_side || chunk.size() == 8) send();
        chunk_side = side;
        bool remove = !sides[side].empty() && random() % 4 == 0;
        std::pair<int64_t, std::string> row{
            static_cast<int64_t>(random() % 3),
            random() % 10 == 0 ? "" : "v" + std::to_string(random() % 50)};
        if (remove) {
          row = TakeRandomRow(&sides[side], random);
        } else {
          ++sides[side][row];
        }
        chunk.AppendRow(
            {Value::Int(row.first), row.second.empty() ? Value() : Value::String(row.second)},
            remove ? RowOp::kDelete : RowOp::kInsert);
      }
      send();
      ASSERT_EQ(out_.counts, oracle()) << "round " << round;
      storage::EpochBatch batch(epoch);
      join.OnBarrier(&batch);
      ASSERT_TRUE(store_->Commit(&batch).ok());
    }
  }
}

// A trim of the cache evicts first the keys of the side probed less per row it stores: the
// right side's many rows, each key probed once, go before the left keys every right row
// probes, which stay cached and are not read back.
TEST_F(HashJoinOperatorTest, ATrimEvictsTheSideProbedLessFirst) {
  auto join = Make(JoinOnK(planner::JoinType::kInner), size_t{64} << 10);
  for (int64_t k = 0; k < 100; ++k) join->OnInputChunk(0, Rows({{RowOp::kInsert, k, "a"}}));
  for (int64_t r = 0; r < 2000; ++r) {
    join->OnInputChunk(1, Rows({{RowOp::kInsert, r % 100, "b" + std::to_string(r)}}));
  }
  for (uint64_t epoch = 1; epoch <= 2; ++epoch) {
    storage::EpochBatch batch(epoch);
    join->OnBarrier(&batch);
    ASSERT_TRUE(store_->Commit(&batch).ok());
  }
  EXPECT_EQ(join->cached_keys(0), 100u);
  EXPECT_LT(join->cached_keys(1), 50u);
  size_t reads = join->store_reads();
  for (int64_t k = 0; k < 100; ++k) join->OnInputChunk(1, Rows({{RowOp::kInsert, k, "c"}}));
  EXPECT_EQ(join->store_reads(), reads);
  EXPECT_EQ(out_.counts[Key(7, "a", 7, "c")], 1);
}

// A join over empty state knows every key it holds, so a probe of a key the other side lacks
// reads nothing from the store, until a key with rows leaves the cache; a join that starts
// over committed state reads what it has not cached.
TEST_F(HashJoinOperatorTest, ProbesOfMissingKeysReadTheStoreOnlyWhenTheCacheMayLackThem) {
  auto join = Make(planner::JoinType::kInner);
  for (int64_t k = 0; k < 100; ++k) join->OnInputChunk(0, Rows({{RowOp::kInsert, k, "a"}}));
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 5, "b"}, {RowOp::kInsert, 500, "c"}}));
  EXPECT_EQ(out_.counts[Key(5, "a", 5, "b")], 1);
  EXPECT_EQ(join->store_reads(), 0u);
  storage::EpochBatch batch(1);
  join->OnBarrier(&batch);
  ASSERT_TRUE(store_->Commit(&batch).ok());

  out_.counts.clear();
  auto recovered = Make(planner::JoinType::kInner);
  recovered->OnInputChunk(1, Rows({{RowOp::kInsert, 7, "d"}, {RowOp::kInsert, 700, "e"}}));
  EXPECT_EQ(out_.counts[Key(7, "a", 7, "d")], 1);
  EXPECT_EQ(out_.counts.size(), 1u);
  // A state this small has its keys listed at the start: key 7 of the left side is read, to
  // probe; key 700 is known to hold nothing, and so are the right side's 7 and 700.
  EXPECT_EQ(recovered->store_reads(), 1u);

  // With no room in the cache, every key leaves it once its epoch committed.
  auto tiny = Make(JoinOnK(planner::JoinType::kInner), 1, 3, 4);
  tiny->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "x"}}));
  storage::EpochBatch first(2);
  tiny->OnBarrier(&first);
  ASSERT_TRUE(store_->Commit(&first).ok());
  storage::EpochBatch second(3);
  tiny->OnBarrier(&second);  // Evicts key 1, committed now.
  ASSERT_TRUE(store_->Commit(&second).ok());
  EXPECT_EQ(tiny->store_reads(), 0u);
  out_.counts.clear();
  tiny->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "y"}}));
  EXPECT_EQ(out_.counts[Key(1, "x", 1, "y")], 1);
  EXPECT_EQ(tiny->store_reads(), 1u);
  tiny->OnInputChunk(1, Rows({{RowOp::kInsert, 2, "y"}}));  // Never stored: nothing to read.
  EXPECT_EQ(tiny->store_reads(), 1u);

  // Past kListedKeys keys evicted, a probe of any key not cached reads the store.
  std::vector<std::tuple<RowOp, std::optional<int64_t>, std::string>> many;
  for (int64_t k = 0; k < 70000; ++k) many.emplace_back(RowOp::kInsert, 1000 + k, "m");
  tiny->OnInputChunk(0, Rows(many));
  for (uint64_t epoch = 4; epoch <= 5; ++epoch) {
    storage::EpochBatch batch(epoch);
    tiny->OnBarrier(&batch);
    ASSERT_TRUE(store_->Commit(&batch).ok());
  }
  ASSERT_EQ(tiny->cached_keys(0), 0u);
  tiny->OnInputChunk(1, Rows({{RowOp::kInsert, 3, "y"}}));
  EXPECT_EQ(tiny->store_reads(), 2u);
}

// A row inserted under a key the cache lost reads only its own stored copy, so a side of
// many keys takes inserts without a scan of each key; the key's other rows are read, once,
// when the other side probes it, and the counts add up as if it had been read whole.
TEST_F(HashJoinOperatorTest, InsertsUnderAKeyNotCachedReadOnlyTheirOwnRow) {
  auto make = [&] { return Make(JoinOnK(planner::JoinType::kInner), 1); };
  auto join = make();
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}, {RowOp::kInsert, 1, "a"}}));
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "b"}}));
  uint64_t epoch = 1;
  for (; epoch <= 2; ++epoch) {  // The second barrier evicts key 1, committed by then.
    storage::EpochBatch batch(epoch);
    join->OnBarrier(&batch);
    ASSERT_TRUE(store_->Commit(&batch).ok());
  }
  ASSERT_EQ(join->cached_keys(0), 0u);
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}}));
  EXPECT_EQ(join->store_reads(), 0u);
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "x"}}));
  EXPECT_EQ(join->store_reads(), 1u);
  // The next insert under the key, whole now, reads nothing.
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "c"}}));
  EXPECT_EQ(join->store_reads(), 1u);
  EXPECT_EQ(out_.counts,
            (std::map<std::string, int64_t>{
                {Key(1, "a", 1, "x"), 3}, {Key(1, "b", 1, "x"), 1}, {Key(1, "c", 1, "x"), 1}}));
  // Partial again after an eviction, then a retraction reads the key whole.
  for (; epoch <= 4; ++epoch) {
    storage::EpochBatch batch(epoch);
    join->OnBarrier(&batch);
    ASSERT_TRUE(store_->Commit(&batch).ok());
  }
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "b"}, {RowOp::kDelete, 1, "a"}}));
  EXPECT_EQ(out_.counts[Key(1, "a", 1, "x")], 2);
  EXPECT_EQ(out_.counts[Key(1, "b", 1, "x")], 2);
  storage::EpochBatch last(epoch);
  join->OnBarrier(&last);
  ASSERT_TRUE(store_->Commit(&last).ok());
  // What was written is what a new operator reads back.
  out_.counts.clear();
  auto recovered = make();
  recovered->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "y"}}));
  EXPECT_EQ(out_.counts,
            (std::map<std::string, int64_t>{
                {Key(1, "a", 1, "y"), 2}, {Key(1, "b", 1, "y"), 2}, {Key(1, "c", 1, "y"), 1}}));
}

// A side that only grows stores each row apart, under a suffix of its own: copies of a row
// inserted in other epochs and other runs all count, and an insert under a key the cache
// lost reads nothing. What a new operator reads back is every copy.
TEST_F(HashJoinOperatorTest, ASideThatOnlyGrowsStoresEachRowApart) {
  auto node = JoinOnK(planner::JoinType::kInner);
  node->appends[0] = true;
  auto make = [&] { return Make(node, 1); };
  uint64_t epoch = 1;
  auto commit = [&](HashJoinOperator& join) {
    storage::EpochBatch batch(epoch++);
    join.OnBarrier(&batch);
    ASSERT_TRUE(store_->Commit(&batch).ok());
  };
  auto join = make();
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}, {RowOp::kInsert, 1, "a"}}));
  commit(*join);
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}, {RowOp::kInsert, 1, "b"}}));
  commit(*join);
  commit(*join);  // Evicts key 1, committed by now.
  ASSERT_EQ(join->cached_keys(0), 0u);
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}, {RowOp::kInsert, 2, "a"}}));
  EXPECT_EQ(join->store_reads(), 0u);
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "x"}}));
  EXPECT_EQ(join->store_reads(), 1u);
  EXPECT_EQ(out_.counts,
            (std::map<std::string, int64_t>{{Key(1, "a", 1, "x"), 4}, {Key(1, "b", 1, "x"), 1}}));
  commit(*join);

  // Another run adds copies of the same rows; one not committed is lost with its run.
  auto second = make();
  second->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}, {RowOp::kInsert, 1, "b"}}));
  commit(*second);
  auto lost = make();
  lost->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}}));
  storage::EpochBatch never(epoch);
  lost->OnBarrier(&never);
  // Two runs that started at the same committed epoch, both committed (an operator
  // replaced while its last epoch was still being written).
  auto old_run = make();
  auto new_run = make();
  old_run->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}}));
  new_run->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}}));
  storage::EpochBatch old_batch(epoch++);
  old_run->OnBarrier(&old_batch);
  ASSERT_TRUE(store_->Commit(&old_batch).ok());
  commit(*new_run);
  // A delete, which such a side is never sent, still removes one copy.
  out_.counts.clear();
  auto third = make();
  third->OnInputChunk(0, Rows({{RowOp::kInsert, 1, "a"}, {RowOp::kDelete, 1, "b"}}));
  commit(*third);
  out_.counts.clear();
  auto recovered = make();
  recovered->OnInputChunk(1, Rows({{RowOp::kInsert, 1, "y"}, {RowOp::kInsert, 2, "y"}}));
  EXPECT_EQ(out_.counts,
            (std::map<std::string, int64_t>{
                {Key(1, "a", 1, "y"), 8}, {Key(1, "b", 1, "y"), 1}, {Key(2, "a", 2, "y"), 1}}));
  EXPECT_THROW(recovered->OnInputChunk(0, Rows({{RowOp::kDelete, 3, "a"}})), SqlError);
}

// The inner join of two multisets of (k, v) rows, as the multiset of output rows.
std::map<std::string, int64_t> InnerJoinOracle(
    const std::map<std::pair<int64_t, std::string>, int64_t>& left,
    const std::map<std::pair<int64_t, std::string>, int64_t>& right) {
  std::map<std::string, int64_t> result;
  for (const auto& [l, lc] : left) {
    for (const auto& [r, rc] : right) {
      if (l.first == r.first) result[Key(l.first, l.second, r.first, r.second)] += lc * rc;
    }
  }
  return result;
}

// A growing left side of an inner join keeps rows under keys not cached out of the cache
// until the right side probes their key: in the epoch that appended them, in one flushed
// but not committed yet, or after their commit (read from the store). Random rows on
// forty keys, the right side's inserted and deleted, across barriers whose commits lag two
// epochs behind, with a crash before a commit in the middle: the output follows an oracle
// all along, with the cache kept past barriers and with it trimmed at every barrier, and a
// new operator reads every row back.
TEST_F(HashJoinOperatorTest, RowsAppendedUnderKeysNotCachedAreTakenWhenTheirKeyIsNeeded) {
  auto node = JoinOnK(planner::JoinType::kInner);
  node->appends[0] = true;
  uint32_t table = 1;
  uint64_t first_epoch = 1;
  for (size_t cache_bytes : {size_t{64} << 20, size_t{1}}) {
    SCOPED_TRACE(cache_bytes);
    uint32_t left_table = table++;
    uint32_t right_table = table++;
    out_.counts.clear();
    auto make = [&] { return Make(node, cache_bytes, left_table, right_table); };
    // Commits lag two barriers behind: a key taken from a flushed epoch's log stays cached
    // until that epoch commits, past the next barrier's trim.
    EpochsInFlight epochs(store_.get(), &out_, 2);
    auto& sides = epochs.sides;
    std::mt19937 random(11);
    auto join = make();
    auto changes = [&](HashJoinOperator& into) {
      for (int step = 0; step < 60; ++step) {
        // Appends on the left, a key of forty (an epoch appends to one about once); the
        // right probes now and then, seldom enough for the left's new keys to stay uncached.
        size_t side = random() % 16 == 0 ? 1 : 0;
        int64_t k = static_cast<int64_t>(random() % 40);
        bool remove = side == 1 && !sides[1].empty() && random() % 3 == 0;
        epochs.Change(into, side, k, "v" + std::to_string(random() % 5), remove, random);
      }
    };
    ASSERT_NO_FATAL_FAILURE(epochs.Run(first_epoch, &join, make, changes,
                                       [&] { return InnerJoinOracle(sides[0], sides[1]); }));
    ASSERT_NO_FATAL_FAILURE(epochs.CommitAll());
    first_epoch += 24;
    // Many appends went to the logs (this operator's, since the crash), others to keys
    // cached by then.
    EXPECT_GT(join->appended_uncached(), 100u);
    out_.counts.clear();
    auto recovered = make();
    DeleteEveryRow(recovered.get(), 1, sides[1]);
    std::map<std::string, int64_t> retracted;
    for (const auto& [key, count] : InnerJoinOracle(sides[0], sides[1])) retracted[key] = -count;
    EXPECT_EQ(out_.counts, retracted);
  }
}

// A hot key's barrier writes the rows that changed, not every row of the key.
TEST_F(HashJoinOperatorTest, ABarrierWritesOnlyTheChangedRowsOfAKey) {
  auto join = Make(planner::JoinType::kInner);
  Chunk many = Chunk::WithTypes({TypeId::kInt64, TypeId::kVarchar});
  for (int i = 0; i < 1000; ++i)
    many.AppendRow({Value::Int(7), Value::String("v" + std::to_string(i))}, RowOp::kInsert);
  join->OnInputChunk(0, std::move(many));
  storage::EpochBatch first(1);
  join->OnBarrier(&first);
  EXPECT_GE(first.Count(), 1000u);
  ASSERT_TRUE(store_->Commit(&first).ok());
  join->OnInputChunk(0, Rows({{RowOp::kInsert, 7, "new"}, {RowOp::kDelete, 7, "v3"}}));
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 7, "x"}}));
  EXPECT_EQ(out_.counts.size(), 1000u);
  storage::EpochBatch second(2);
  join->OnBarrier(&second);
  EXPECT_EQ(second.Count(), 3u);  // The new row, the deleted one, the right side's row.
  ASSERT_TRUE(store_->Commit(&second).ok());
  // A new operator reads the key back whole.
  out_.counts.clear();
  auto recovered = Make(planner::JoinType::kInner);
  recovered->OnInputChunk(1, Rows({{RowOp::kInsert, 7, "y"}}));
  EXPECT_EQ(out_.counts.size(), 1000u);
  EXPECT_EQ(out_.counts[Key(7, "new", 7, "y")], 1);
  EXPECT_EQ(out_.counts.count(Key(7, "v3", 7, "y")), 0u);
}

// State written when a key's rows were one entry is read, and rewritten a row each.
TEST_F(HashJoinOperatorTest, AKeyWrittenAsOneEntryIsReadAndRewrittenARowEach) {
  std::string key;
  storage::EncodeKeyValue(Value::Int(5), TypeId::kInt64, &key);
  std::vector<HashJoinOperator::Entry> entries;
  for (const char* v : {"a", "b"}) {
    std::string row;
    storage::EncodeRow({Value::Int(5), Value::String(v)}, {TypeId::kInt64, TypeId::kVarchar}, &row);
    entries.push_back({row, v[0] == 'a' ? 2 : 1, 0});
  }
  {
    storage::StateTable left(store_.get(), 1);
    left.Put(key, HashJoinOperator::EncodeEntries(entries));
    storage::EpochBatch batch(1);
    left.FlushTo(&batch);
    ASSERT_TRUE(store_->Commit(&batch).ok());
  }
  auto join = Make(planner::JoinType::kInner);
  join->OnInputChunk(1, Rows({{RowOp::kInsert, 5, "x"}}));
  EXPECT_EQ(out_.counts[Key(5, "a", 5, "x")], 2);
  EXPECT_EQ(out_.counts[Key(5, "b", 5, "x")], 1);
  storage::EpochBatch batch(2);
  join->OnBarrier(&batch);
  ASSERT_TRUE(store_->Commit(&batch).ok());
  EXPECT_FALSE(storage::StateTable(store_.get(), 1).Get(key).ValueOrThrow());  // The old entry.
  out_.counts.clear();
  auto recovered = Make(planner::JoinType::kInner);
  recovered->OnInputChunk(1, Rows({{RowOp::kInsert, 5, "y"}}));
  EXPECT_EQ(out_.counts[Key(5, "a", 5, "y")], 2);
  EXPECT_EQ(out_.counts[Key(5, "b", 5, "y")], 1);
}

// Keeps the left times of the joined rows emitted, with their counts.
class LeftTimes : public StreamOperator {
 public:
  void OnChunk(Chunk chunk) override {
    for (size_t r = 0; r < chunk.size(); ++r) {
      times[chunk.columns[1].ints[r]] += RowSign(chunk.ops[r]);
    }
  }
  std::map<int64_t, int64_t> times;
};

// Left rows of (k BIGINT, v TIMESTAMP) expire at their v, the right side's watermark passing
// it (as an interval join's do). The expiry index rounds expiry times up to 100 ms, so that a
// stream's rows, each of its own microsecond, share its entries: a row goes no earlier than
// its time and at most 100 ms of watermark later. What is left shows in what right rows of
// the keys meet (the join has no condition past its key).
TEST_F(HashJoinOperatorTest, RowsExpiringByTimestampGoWithinAGranuleOfTheirTime) {
  auto node = JoinOnK(planner::JoinType::kInner, TypeId::kTimestamp);
  node->expiry[0] = {{1, 0, "v <= v"}};
  HashJoinOperator join(node, storage::StateTable(store_.get(), 1),
                        storage::StateTable(store_.get(), 2));
  LeftTimes out;
  join.set_downstream(&out);
  join.Start();
  // A key per row: a key's cleaning looks at all its rows, which would hide a row
  // indexed under the wrong time behind another of its key.
  const std::vector<int64_t> times = {-150'000,  1'000'000, 1'050'000, 1'099'999,
                                      1'100'000, 1'100'001, 1'150'000, 1'250'000};
  auto rows = [&times](std::optional<int64_t> time) {
    Chunk chunk = Chunk::WithTypes({TypeId::kInt64, TypeId::kTimestamp});
    for (size_t k = 0; k < times.size(); ++k) {
      chunk.AppendRow({Value::Int(static_cast<int64_t>(k)), Value::Int(time.value_or(times[k]))},
                      RowOp::kInsert);
    }
    return chunk;
  };
  join.OnInputChunk(0, rows(std::nullopt));
  int64_t probe_time = 0;
  for (int64_t watermark : {-200'000, 0, 1'000'000, 1'060'000, 1'100'000, 1'199'999, 1'300'000}) {
    join.OnInputWatermark(1, watermark);
    out.times.clear();
    join.OnInputChunk(1, rows(++probe_time));
    for (int64_t time : times) {
      SCOPED_TRACE(watermark);
      SCOPED_TRACE(time);
      if (time > watermark) {
        EXPECT_EQ(out.times[time], 1) << "gone before its time";
      } else if (time <= watermark - HashJoinOperator::kTimestampExpiryGranularity) {
        EXPECT_EQ(out.times.count(time), 0u) << "kept a granule past its time";
      }
    }
  }
}

TEST(HashJoinEntriesTest, RoundTrip) {
  std::vector<HashJoinOperator::Entry> entries = {{"abc", 2, 0}, {"", -1, 5}};
  auto decoded = HashJoinOperator::DecodeEntries(HashJoinOperator::EncodeEntries(entries));
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[0].row, "abc");
  EXPECT_EQ(decoded[1].count, -1);
  EXPECT_EQ(decoded[1].matches, 5);
}

}  // namespace
}  // namespace stave::executor
