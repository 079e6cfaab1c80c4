#include "executor/connectors/watermark_reader.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <thread>

namespace stave::executor {
namespace {

// Hands out scripted chunks of (event time) rows; its position is the chunks handed out.
class ScriptedReader : public SourceReader {
 public:
  explicit ScriptedReader(std::vector<std::vector<int64_t>> chunks) : chunks_(std::move(chunks)) {}

  PollStatus Poll(size_t, Chunk* chunk, std::chrono::steady_clock::time_point*) override {
    if (next_ == chunks_.size()) return PollStatus::kFinished;
    *chunk = Chunk::WithTypes({TypeId::kInt64});
    for (int64_t time : chunks_[next_]) chunk->AppendRow({Value::Int(time)}, RowOp::kInsert);
    ++next_;
    return PollStatus::kData;
  }
  std::string Position() const override { return std::to_string(next_); }
  Status Seek(std::string_view position) override {
    next_ = std::stoul(std::string(position));
    return Status::Ok();
  }

 private:
  std::vector<std::vector<int64_t>> chunks_;
  size_t next_ = 0;
};

// The watermark trails the highest event time by 10.
planner::BoundExprPtr TenBehind() {
  return planner::BoundExpr::MakeFunction(
      planner::ScalarFunction::kSubtract, TypeId::kInt64,
      {planner::BoundExpr::MakeColumn(0, TypeId::kInt64),
       planner::BoundExpr::MakeConstant(Value::Int(10), TypeId::kInt64)});
}

const std::vector<std::vector<int64_t>> kScript = {{100, 95, 120}, {105, 111, 109}, {130, 119}};

std::vector<int64_t> Times(const Chunk& chunk) {
  std::vector<int64_t> times;
  for (size_t row = 0; row < chunk.size(); ++row) times.push_back(chunk.columns[0].ints[row]);
  return times;
}

TEST(WatermarkReaderTest, DropsRowsBelowTheWatermarkAndCountsThem) {
  WatermarkReader reader(std::make_unique<ScriptedReader>(kScript), 0, TenBehind());
  Chunk chunk;
  auto never = std::chrono::steady_clock::time_point::max();
  EXPECT_EQ(reader.TakeWatermark(), std::nullopt);  // Nothing read yet.
  ASSERT_EQ(reader.Poll(1024, &chunk, &never), SourceReader::PollStatus::kData);
  // 95 is not late: the watermark is 90 when it arrives (100 - 10).
  EXPECT_EQ(Times(chunk), (std::vector<int64_t>{100, 95, 120}));
  EXPECT_EQ(reader.TakeWatermark(), 110);
  EXPECT_EQ(reader.TakeWatermark(), std::nullopt);  // Told once.
  ASSERT_EQ(reader.Poll(1024, &chunk, &never), SourceReader::PollStatus::kData);
  EXPECT_EQ(Times(chunk), (std::vector<int64_t>{111}));  // 105 and 109 are below 110.
  EXPECT_EQ(reader.late_rows(), 2u);
  EXPECT_EQ(reader.TakeWatermark(), std::nullopt);  // 111 - 10 does not raise it.
  ASSERT_EQ(reader.Poll(1024, &chunk, &never), SourceReader::PollStatus::kData);
  EXPECT_EQ(Times(chunk), (std::vector<int64_t>{130}));  // 119 is below 120 by then.
  EXPECT_EQ(reader.TakeWatermark(), 120);
  EXPECT_EQ(reader.late_rows(), 3u);
}

TEST(WatermarkReaderTest, APositionRestoresTheWatermarkSoAReplayDropsTheSameRows) {
  WatermarkReader first(std::make_unique<ScriptedReader>(kScript), 0, TenBehind());
  Chunk chunk;
  auto never = std::chrono::steady_clock::time_point::max();
  ASSERT_EQ(first.Poll(1024, &chunk, &never), SourceReader::PollStatus::kData);
  std::string position = first.Position();  // A checkpoint after the first chunk.

  WatermarkReader second(std::make_unique<ScriptedReader>(kScript), 0, TenBehind());
  ASSERT_TRUE(second.Seek(position).ok());
  EXPECT_EQ(second.TakeWatermark(), 110);  // Told again downstream after recovery.
  ASSERT_EQ(second.Poll(1024, &chunk, &never), SourceReader::PollStatus::kData);
  EXPECT_EQ(Times(chunk), (std::vector<int64_t>{111}));
  EXPECT_EQ(second.late_rows(), 2u);

  std::string recorded = second.Position();  // The decoded view points into it.
  std::optional<WatermarkReader::DecodedPosition> decoded =
      WatermarkReader::DecodePosition(recorded);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->watermark, 110);
  EXPECT_EQ(decoded->late_rows, 2u);
  EXPECT_EQ(decoded->inner, "2");
  EXPECT_EQ(decoded->splits, (std::map<int32_t, int64_t>{{0, 110}}));
  EXPECT_FALSE(second.Seek("short").ok());
}

TEST(WatermarkReaderTest, NullEventTimesAreNeitherLateNorMoveTheWatermark) {
  class NullReader : public ScriptedReader {
   public:
    NullReader() : ScriptedReader({}) {}
    PollStatus Poll(size_t, Chunk* chunk, std::chrono::steady_clock::time_point*) override {
      if (done_) return PollStatus::kFinished;
      done_ = true;
      *chunk = Chunk::WithTypes({TypeId::kInt64});
      chunk->AppendRow({Value::Int(50)}, RowOp::kInsert);
      chunk->AppendRow({Value::Null()}, RowOp::kInsert);
      chunk->AppendRow({Value::Int(20)}, RowOp::kInsert);
      return PollStatus::kData;
    }

   private:
    bool done_ = false;
  };
  WatermarkReader reader(std::make_unique<NullReader>(), 0, TenBehind());
  Chunk chunk;
  auto never = std::chrono::steady_clock::time_point::max();
  ASSERT_EQ(reader.Poll(1024, &chunk, &never), SourceReader::PollStatus::kData);
  EXPECT_EQ(chunk.size(), 2u);  // 50 and the NULL; 20 is below 40.
  EXPECT_TRUE(chunk.columns[0].IsNull(1));
  EXPECT_EQ(reader.TakeWatermark(), 40);
}

// Two splits (partitions) whose rows come in chunks of one split each, as a Kafka reader
// gives them: (split, event time) pairs per chunk.
class SplitReader : public SourceReader {
 public:
  explicit SplitReader(std::vector<std::vector<std::pair<int32_t, int64_t>>> chunks)
      : chunks_(std::move(chunks)) {}

  PollStatus Poll(size_t, Chunk* chunk, std::chrono::steady_clock::time_point*) override {
    row_splits_.clear();
    if (next_ == chunks_.size()) return PollStatus::kIdle;
    *chunk = Chunk::WithTypes({TypeId::kInt64});
    for (auto [split, time] : chunks_[next_]) {
      chunk->AppendRow({Value::Int(time)}, RowOp::kInsert);
      row_splits_.push_back(split);
    }
    ++next_;
    return PollStatus::kData;
  }
  std::string Position() const override { return std::to_string(next_); }
  Status Seek(std::string_view position) override {
    next_ = std::stoul(std::string(position));
    return Status::Ok();
  }
  std::vector<int32_t> Splits() const override { return {0, 1}; }
  const std::vector<int32_t>& RowSplits() const override { return row_splits_; }

 private:
  std::vector<std::vector<std::pair<int32_t, int64_t>>> chunks_;
  std::vector<int32_t> row_splits_;
  size_t next_ = 0;
};

using SplitChunks = std::vector<std::vector<std::pair<int32_t, int64_t>>>;

TEST(WatermarkReaderTest, EachSplitJudgesItsOwnRowsAndTheStreamTakesTheSlowest) {
  // Split 0 runs far ahead before split 1's first rows, which are judged against split 1's
  // own watermark: not late. The stream's watermark waits for split 1.
  WatermarkReader reader(
      std::make_unique<SplitReader>(
          SplitChunks{{{0, 100}, {0, 200}, {0, 300}}, {{1, 50}, {1, 39}, {1, 65}}, {{0, 250}}}),
      0, TenBehind());
  Chunk chunk;
  auto wake = std::chrono::steady_clock::time_point::max();
  ASSERT_EQ(reader.Poll(1024, &chunk, &wake), SourceReader::PollStatus::kData);
  EXPECT_EQ(chunk.size(), 3u);
  EXPECT_EQ(reader.TakeWatermark(), std::nullopt);  // Split 1 has no rows yet.
  ASSERT_EQ(reader.Poll(1024, &chunk, &wake), SourceReader::PollStatus::kData);
  EXPECT_EQ(Times(chunk), (std::vector<int64_t>{50, 65}));  // 39 is below split 1's 40.
  EXPECT_EQ(reader.late_rows(), 1u);
  EXPECT_EQ(reader.TakeWatermark(), 55);  // The slower split's: min(290, 55).
  ASSERT_EQ(reader.Poll(1024, &chunk, &wake), SourceReader::PollStatus::kData);
  EXPECT_TRUE(chunk.empty());  // 250 is below split 0's 290.
  EXPECT_EQ(reader.late_rows(), 2u);
  std::string recorded = reader.Position();
  std::optional<WatermarkReader::DecodedPosition> decoded =
      WatermarkReader::DecodePosition(recorded);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->splits, (std::map<int32_t, int64_t>{{0, 290}, {1, 55}}));
}

TEST(WatermarkReaderTest, AnIdleSplitStopsHoldingTheWatermarkBack) {
  WatermarkReader reader(std::make_unique<SplitReader>(
                             SplitChunks{{{0, 100}, {0, 200}}, {{0, 210}}, {{1, 150}, {1, 205}}}),
                         0, TenBehind(), std::chrono::milliseconds(50));
  Chunk chunk;
  auto wake = std::chrono::steady_clock::time_point::max();
  ASSERT_EQ(reader.Poll(1024, &chunk, &wake), SourceReader::PollStatus::kData);
  EXPECT_EQ(reader.TakeWatermark(), std::nullopt);  // Split 1 is not idle yet.
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  ASSERT_EQ(reader.Poll(1024, &chunk, &wake), SourceReader::PollStatus::kData);
  EXPECT_EQ(reader.TakeWatermark(), 200);  // Split 1 is idle: split 0 alone decides.
  // Back from idleness, split 1's rows below the stream's watermark are late.
  ASSERT_EQ(reader.Poll(1024, &chunk, &wake), SourceReader::PollStatus::kData);
  EXPECT_EQ(Times(chunk), (std::vector<int64_t>{205}));
  EXPECT_EQ(reader.late_rows(), 1u);
}

// Reports something for every query a reader answers about itself, as a Kafka reader (lag,
// payload bytes) or a log reader (retained log, backfill) does.
class ReportingReader : public SplitReader {
 public:
  using SplitReader::SplitReader;
  std::optional<std::pair<uint32_t, uint64_t>> RetainedLog() const override {
    return std::make_pair(7u, uint64_t{42});
  }
  std::optional<uint64_t> payload_bytes() const override { return 1234; }
  std::optional<BackfillStatus> backfill() const override {
    BackfillStatus status;
    status.state = BackfillStatus::State::kRunning;
    status.rows_done = 5;
    return status;
  }
  std::vector<std::pair<int32_t, int64_t>> Lag() const override { return {{0, 3}, {1, 9}}; }
  uint64_t bad_records() const override { return 4; }
};

TEST(WatermarkReaderTest, ForwardsWhatTheWrappedReaderReportsOfItself) {
  WatermarkReader reader(std::make_unique<ReportingReader>(SplitChunks{
                             {{0, 100}, {1, 100}, {0, 200}}, {{1, 50}, {0, 300}, {1, 120}}}),
                         0, TenBehind());
  EXPECT_EQ(reader.RetainedLog(), std::make_optional(std::make_pair(7u, uint64_t{42})));
  EXPECT_EQ(reader.payload_bytes(), std::optional<uint64_t>(1234));
  std::optional<BackfillStatus> backfill = reader.backfill();
  ASSERT_TRUE(backfill);
  EXPECT_EQ(backfill->state, BackfillStatus::State::kRunning);
  EXPECT_EQ(backfill->rows_done, 5u);
  EXPECT_EQ(reader.Splits(), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(reader.Lag(), (std::vector<std::pair<int32_t, int64_t>>{{0, 3}, {1, 9}}));
  EXPECT_EQ(reader.bad_records(), 4u);

  // The splits of the rows that pass, in step with the chunk after late rows leave it.
  Chunk chunk;
  auto wake = std::chrono::steady_clock::time_point::max();
  ASSERT_EQ(reader.Poll(1024, &chunk, &wake), SourceReader::PollStatus::kData);
  EXPECT_EQ(reader.RowSplits(), (std::vector<int32_t>{0, 1, 0}));
  ASSERT_EQ(reader.Poll(1024, &chunk, &wake), SourceReader::PollStatus::kData);
  EXPECT_EQ(Times(chunk), (std::vector<int64_t>{300, 120}));  // 50 is below split 1's 90.
  EXPECT_EQ(reader.RowSplits(), (std::vector<int32_t>{0, 1}));
  ASSERT_EQ(reader.Poll(1024, &chunk, &wake), SourceReader::PollStatus::kIdle);
  EXPECT_TRUE(reader.RowSplits().empty());
}

}  // namespace
}  // namespace stave::executor
