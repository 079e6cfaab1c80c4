#include "parser/parse_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "common/sql_error.h"

namespace stave::parser {
namespace {

TEST(ParseCacheTest, TheSameTextIsParsedOnce) {
  ParseCache cache(8);
  auto first = cache.Parse("SELECT 1; SELECT 2");
  auto second = cache.Parse("SELECT 1; SELECT 2");
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ(first.get(), second.get());
  EXPECT_NE(cache.Parse("SELECT 1;  SELECT 2").get(), first.get());  // Exact text only.
  EXPECT_EQ(cache.size(), 2u);
}

TEST(ParseCacheTest, StatementsWithParametersAreNotShared) {
  ParseCache cache(8);
  auto first = cache.Parse("SELECT $1");
  auto second = cache.Parse("SELECT $1");
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ(first->front()->parameters.size(), 1u);
  EXPECT_NE(first.get(), second.get());
  EXPECT_NE(first->front()->parameters[0].get(), second->front()->parameters[0].get());
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ParseCacheTest, ErrorsAreThrownEveryTimeAndNotKept) {
  ParseCache cache(8);
  EXPECT_THROW(cache.Parse("SELEC 1"), SqlError);
  EXPECT_THROW(cache.Parse("SELEC 1"), SqlError);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ParseCacheTest, LeastRecentlyUsedTextsAreDropped) {
  ParseCache cache(2);
  auto a = cache.Parse("SELECT 'a'");
  cache.Parse("SELECT 'b'");
  EXPECT_EQ(cache.Parse("SELECT 'a'").get(), a.get());  // 'a' is now the most recent.
  cache.Parse("SELECT 'c'");                            // Drops 'b'.
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Parse("SELECT 'a'").get(), a.get());
  EXPECT_NE(cache.Parse("SELECT 'c'").get(), nullptr);
}

TEST(ParseCacheTest, LongTextsAreParsedButNotKept) {
  ParseCache cache(8);
  std::string sql = "SELECT '" + std::string(ParseCache::kMaxCachedTextBytes, 'x') + "'";
  auto first = cache.Parse(sql);
  EXPECT_EQ(first->size(), 1u);
  EXPECT_NE(cache.Parse(sql).get(), first.get());
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ParseCacheTest, ConcurrentCallersShareOneTreePerText) {
  ParseCache cache(4);
  std::vector<std::thread> threads;
  std::vector<const ParseCache::Statements*> seen(8);
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&cache, &seen, t] {
      for (int i = 0; i < 200; ++i) {
        auto statements = cache.Parse("SELECT " + std::to_string(i % 6));
        ASSERT_EQ(statements->size(), 1u);
      }
      seen[t] = cache.Parse("SELECT 42").get();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(cache.size(), 4u);
  const ParseCache::Statements* kept = cache.Parse("SELECT 42").get();
  for (const ParseCache::Statements* statements : seen) EXPECT_NE(statements, nullptr);
  EXPECT_EQ(cache.Parse("SELECT 42").get(), kept);
}

}  // namespace
}  // namespace stave::parser
