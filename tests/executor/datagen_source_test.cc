#include "executor/connectors/datagen/datagen_source.h"

#include <gtest/gtest.h>

#include "common/sql_error.h"

namespace stave::executor {
namespace {

std::vector<planner::Column> Columns() {
  return {{"id", TypeId::kInt64}, {"v", TypeId::kInt32}, {"name", TypeId::kVarchar}};
}

std::vector<std::vector<Value>> ReadAll(DatagenSource* source, size_t max_rows) {
  std::vector<std::vector<Value>> rows;
  Chunk chunk;
  std::chrono::steady_clock::time_point wake;
  while (source->Poll(max_rows, &chunk, &wake) == SourceReader::PollStatus::kData) {
    for (size_t r = 0; r < chunk.size(); ++r) rows.push_back(chunk.GetRow(r));
  }
  return rows;
}

TEST(DatagenSourceTest, SequenceBoundsTheStreamAndRandomIsDeterministic) {
  std::map<std::string, std::string> options = {
      {"fields.id.kind", "sequence"}, {"fields.id.start", "1"}, {"fields.id.end", "1000"},
      {"fields.v.min", "-5"},         {"fields.v.max", "5"},    {"seed", "42"}};
  DatagenSource first(DatagenOptions::Parse(options, Columns()));
  auto rows = ReadAll(&first, 300);
  ASSERT_EQ(rows.size(), 1000u);
  EXPECT_EQ(rows.front()[0].int_value(), 1);
  EXPECT_EQ(rows.back()[0].int_value(), 1000);
  for (const auto& row : rows) {
    EXPECT_GE(row[1].int_value(), -5);
    EXPECT_LE(row[1].int_value(), 5);
    EXPECT_EQ(row[2].string_value().size(), 10u);
  }
  // Seeking to a position replays exactly the same rows.
  DatagenSource second(DatagenOptions::Parse(options, Columns()));
  std::string position;
  {
    DatagenSource probe(DatagenOptions::Parse(options, Columns()));
    Chunk chunk;
    std::chrono::steady_clock::time_point wake;
    ASSERT_EQ(probe.Poll(400, &chunk, &wake), SourceReader::PollStatus::kData);
    position = probe.Position();
  }
  ASSERT_TRUE(second.Seek(position).ok());
  auto rest = ReadAll(&second, 1024);
  ASSERT_EQ(rest.size(), 600u);
  EXPECT_EQ(rest[0], rows[400]);
  EXPECT_EQ(rest.back(), rows.back());
}

TEST(DatagenSourceTest, RejectsBadOptionsClearly) {
  auto error_of = [](std::map<std::string, std::string> options) -> std::string {
    try {
      DatagenOptions::Parse(options, Columns());
    } catch (const SqlError& error) {
      EXPECT_EQ(error.sqlstate(), "22023");
      return error.what();
    }
    return "";
  };
  EXPECT_NE(error_of({{"rows-per-second", "fast"}}).find("must be a number"), std::string::npos);
  EXPECT_NE(error_of({{"fields.nope.kind", "random"}}).find("names no column"), std::string::npos);
  EXPECT_NE(error_of({{"fields.id.kind", "zigzag"}}).find("'sequence' or 'random'"),
            std::string::npos);
  EXPECT_NE(error_of({{"speed", "1"}}).find("unknown datagen option 'speed'"), std::string::npos);
  EXPECT_NE(
      error_of({{"fields.id.kind", "sequence"}, {"fields.id.start", "5"}, {"fields.id.end", "1"}})
          .find("before start"),
      std::string::npos);
}

TEST(DatagenSourceTest, ThrottlesToRowsPerSecond) {
  DatagenSource source(DatagenOptions::Parse({{"rows-per-second", "1000"}}, Columns()));
  Chunk chunk;
  std::chrono::steady_clock::time_point wake;
  auto start = std::chrono::steady_clock::now();
  size_t rows = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(200)) {
    if (source.Poll(1024, &chunk, &wake) == SourceReader::PollStatus::kData) rows += chunk.size();
  }
  EXPECT_GT(rows, 100u);
  EXPECT_LT(rows, 400u);
}

}  // namespace
}  // namespace stave::executor
