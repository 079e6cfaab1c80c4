#include "executor/connectors/nexmark/nexmark_source.h"

#include <gtest/gtest.h>

#include <set>

#include "common/sql_error.h"

namespace stave::executor {
namespace {

using nexmark::EventType;

std::vector<planner::Column> AllColumns(EventType type) {
  std::vector<planner::Column> columns;
  for (const std::string& name : NexmarkColumnNames(type)) {
    bool is_string = name == "name" || name == "email_address" || name == "credit_card" ||
                     name == "city" || name == "state" || name == "extra" || name == "item_name" ||
                     name == "description" || name == "channel" || name == "url";
    columns.push_back({name, is_string ? TypeId::kVarchar : TypeId::kInt64});
  }
  return columns;
}

std::map<std::string, std::string> Options(std::string type, std::string events,
                                           std::string seed = "0") {
  return {{"nexmark.table.type", std::move(type)},
          {"nexmark.event.num", std::move(events)},
          {"nexmark.seed", std::move(seed)}};
}

std::vector<std::vector<Value>> ReadAll(NexmarkSource* source, size_t max_rows) {
  std::vector<std::vector<Value>> rows;
  Chunk chunk;
  std::chrono::steady_clock::time_point wake;
  while (source->Poll(max_rows, &chunk, &wake) == SourceReader::PollStatus::kData) {
    EXPECT_LE(chunk.size(), max_rows);
    for (size_t r = 0; r < chunk.size(); ++r) rows.push_back(chunk.GetRow(r));
  }
  return rows;
}

std::vector<std::vector<Value>> ReadStream(const std::map<std::string, std::string>& options,
                                           const std::vector<planner::Column>& columns,
                                           size_t max_rows = kChunkRows) {
  NexmarkSource source(NexmarkOptions::Parse(options, columns));
  return ReadAll(&source, max_rows);
}

TEST(NexmarkGeneratorTest, ProportionsArePersonAuctionBidOneThreeFortySix) {
  for (uint64_t block = 0; block < 100; ++block) {
    int counts[3] = {0, 0, 0};
    for (uint64_t e = block * 50; e < block * 50 + 50; ++e) {
      ++counts[static_cast<int>(nexmark::TypeOfEvent(e))];
    }
    EXPECT_EQ(counts[0], 1);
    EXPECT_EQ(counts[1], 3);
    EXPECT_EQ(counts[2], 46);
  }
  for (EventType type : {EventType::kPerson, EventType::kAuction, EventType::kBid}) {
    uint64_t count = 0;
    for (uint64_t e = 0; e < 1237; ++e) {
      EXPECT_EQ(nexmark::CountEventsOfType(type, e), count) << e;
      if (nexmark::TypeOfEvent(e) == type) {
        ++count;
        EXPECT_EQ(nexmark::NextEventOfType(type, e), e);
      } else {
        uint64_t next = nexmark::NextEventOfType(type, e);
        EXPECT_GT(next, e);
        EXPECT_EQ(nexmark::TypeOfEvent(next), type);
        for (uint64_t between = e; between < next; ++between) {
          EXPECT_NE(nexmark::TypeOfEvent(between), type);
        }
      }
    }
  }
  // Each stream yields its type's rows among the first event.num events.
  EXPECT_EQ(ReadStream(Options("bid", "1000"), AllColumns(EventType::kBid)).size(), 920u);
  EXPECT_EQ(ReadStream(Options("auction", "1000"), AllColumns(EventType::kAuction)).size(), 60u);
  EXPECT_EQ(ReadStream(Options("person", "1000"), AllColumns(EventType::kPerson)).size(), 20u);
  EXPECT_EQ(ReadStream(Options("bid", "5"), AllColumns(EventType::kBid)).size(), 1u);
  EXPECT_EQ(ReadStream(Options("person", "0"), AllColumns(EventType::kPerson)).size(), 0u);
}

TEST(NexmarkGeneratorTest, IdsStayWithinTheActiveAndInFlightWindows) {
  nexmark::GeneratorConfig config;
  config.seed = 3;
  int64_t next_person = nexmark::kFirstPersonId;
  int64_t next_auction = nexmark::kFirstAuctionId;
  nexmark::Person person;
  nexmark::Auction auction;
  nexmark::Bid bid;
  std::set<std::string_view> hot_channels = {"Google", "Facebook", "Baidu", "Apple"};
  uint64_t hot_channel_bids = 0;
  uint64_t bids = 0;
  for (uint64_t e = 0; e < 200000; ++e) {
    // People and auctions generated so far (ids below these exist).
    int64_t people = next_person - nexmark::kFirstPersonId;
    switch (nexmark::TypeOfEvent(e)) {
      case EventType::kPerson:
        nexmark::GeneratePerson(config, e, true, &person);
        ASSERT_EQ(person.id, next_person++);
        break;
      case EventType::kAuction: {
        nexmark::GenerateAuction(config, e, true, &auction);
        ASSERT_EQ(auction.id, next_auction++);
        int64_t seller = auction.seller - nexmark::kFirstPersonId;
        EXPECT_GE(seller, std::max<int64_t>(0, people - 1000));
        EXPECT_LT(seller, people + 10);
        EXPECT_GE(auction.category, 10);
        EXPECT_LT(auction.category, 15);
        EXPECT_GT(auction.expires, auction.date_time);
        EXPECT_GE(auction.reserve, auction.initial_bid);
        break;
      }
      case EventType::kBid: {
        nexmark::GenerateBid(config, e, false, &bid);
        ++bids;
        // The last auction generated is next_auction - 1; bids choose among the 100 before
        // it, it, and the next 10 not generated yet.
        int64_t last_auction = next_auction - 1 - nexmark::kFirstAuctionId;
        int64_t auction_id = bid.auction - nexmark::kFirstAuctionId;
        EXPECT_GE(auction_id, std::max<int64_t>(0, last_auction - 100)) << e;
        EXPECT_LE(auction_id, last_auction + 10) << e;
        int64_t bidder = bid.bidder - nexmark::kFirstPersonId;
        EXPECT_GE(bidder, std::max<int64_t>(0, people - 1000)) << e;
        EXPECT_LT(bidder, people + 10) << e;
        EXPECT_GE(bid.price, 100);
        EXPECT_LE(bid.price, 100'000'000);
        EXPECT_TRUE(bid.extra.empty());
        EXPECT_EQ(bid.url.rfind("https://www.nexmark.com/", 0), 0u);
        if (hot_channels.count(bid.channel)) {
          ++hot_channel_bids;
        } else {
          EXPECT_EQ(bid.channel.rfind("channel-", 0), 0u);
        }
        break;
      }
    }
  }
  // Half the bids come through the four hot channels.
  EXPECT_NEAR(static_cast<double>(hot_channel_bids) / static_cast<double>(bids), 0.5, 0.02);
}

TEST(NexmarkGeneratorTest, HotAuctionsAndBiddersTakeMostBids) {
  nexmark::GeneratorConfig config;
  nexmark::Bid bid;
  uint64_t hot_auction = 0, hot_bidder = 0, bids = 0;
  for (uint64_t e = 0; e < 100000; ++e) {
    if (nexmark::TypeOfEvent(e) != EventType::kBid) continue;
    nexmark::GenerateBid(config, e, false, &bid);
    ++bids;
    uint64_t last_auction = nexmark::LastBase0AuctionId(e);
    uint64_t last_person = nexmark::LastBase0PersonId(e);
    if (bid.auction - nexmark::kFirstAuctionId == static_cast<int64_t>(last_auction / 100 * 100)) {
      ++hot_auction;
    }
    if (bid.bidder - nexmark::kFirstPersonId == static_cast<int64_t>(last_person / 100 * 100 + 1)) {
      ++hot_bidder;
    }
  }
  // P(hot auction) = 1 - 1/2, P(hot bidder) = 1 - 1/4, plus random picks that hit them.
  EXPECT_NEAR(static_cast<double>(hot_auction) / static_cast<double>(bids), 0.5, 0.03);
  EXPECT_NEAR(static_cast<double>(hot_bidder) / static_cast<double>(bids), 0.75, 0.03);
}

TEST(NexmarkSourceTest, DeterministicForASeedAndDifferentForAnother) {
  for (EventType type : {EventType::kPerson, EventType::kAuction, EventType::kBid}) {
    std::string name = type == EventType::kPerson    ? "person"
                       : type == EventType::kAuction ? "auction"
                                                     : "bid";
    auto first = ReadStream(Options(name, "3000", "7"), AllColumns(type));
    auto again = ReadStream(Options(name, "3000", "7"), AllColumns(type), 17);
    auto other = ReadStream(Options(name, "3000", "8"), AllColumns(type));
    ASSERT_FALSE(first.empty());
    EXPECT_EQ(first, again) << name;
    ASSERT_EQ(first.size(), other.size());
    EXPECT_NE(first, other) << name;
  }
}

TEST(NexmarkSourceTest, ReplayFromAPositionGivesIdenticalRows) {
  auto options = Options("bid", "10000", "11");
  auto columns = AllColumns(EventType::kBid);
  auto rows = ReadStream(options, columns);
  ASSERT_EQ(rows.size(), 9200u);
  for (size_t polls : {1, 3, 8}) {
    NexmarkSource probe(NexmarkOptions::Parse(options, columns));
    Chunk chunk;
    std::chrono::steady_clock::time_point wake;
    size_t read = 0;
    for (size_t i = 0; i < polls; ++i) {
      ASSERT_EQ(probe.Poll(333, &chunk, &wake), SourceReader::PollStatus::kData);
      read += chunk.size();
    }
    NexmarkSource replay(NexmarkOptions::Parse(options, columns));
    ASSERT_TRUE(replay.Seek(probe.Position()).ok());
    EXPECT_EQ(replay.next_event(), probe.next_event());
    auto rest = ReadAll(&replay, 1024);
    ASSERT_EQ(read + rest.size(), rows.size());
    EXPECT_EQ(rest.front(), rows[read]);
    EXPECT_EQ(rest.back(), rows.back());
  }
  NexmarkSource bad(NexmarkOptions::Parse(options, columns));
  EXPECT_FALSE(bad.Seek("short").ok());
}

TEST(NexmarkSourceTest, ColumnsAreMatchedByNameInAnyOrder) {
  auto full = ReadStream(Options("bid", "500"), AllColumns(EventType::kBid));
  auto subset = ReadStream(
      Options("bid", "500"),
      {{"price", TypeId::kInt64}, {"auction", TypeId::kInt64}, {"channel", TypeId::kVarchar}});
  ASSERT_EQ(full.size(), subset.size());
  for (size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(subset[i][0], full[i][2]);
    EXPECT_EQ(subset[i][1], full[i][0]);
    EXPECT_EQ(subset[i][2], full[i][3]);
  }
}

TEST(NexmarkSourceTest, ExtraIsLeftEmptyWhenNothingReadsIt) {
  auto columns = AllColumns(EventType::kBid);
  auto full = ReadStream(Options("bid", "500"), columns);
  NexmarkOptions options = NexmarkOptions::Parse(Options("bid", "500"), columns);
  size_t extra = columns.size() - 1;
  ASSERT_EQ(columns[extra].name, "extra");
  options.read_columns.assign(columns.size(), true);
  options.read_columns[extra] = false;
  NexmarkSource source(std::move(options));
  auto unread = ReadAll(&source, kChunkRows);
  ASSERT_EQ(full.size(), unread.size());
  for (size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(unread[i][extra], Value::String(""));
    // Every other column as before: the padding is drawn after the rest of the event.
    full[i][extra] = unread[i][extra];
    EXPECT_EQ(unread[i], full[i]);
  }
}

TEST(NexmarkSourceTest, TimestampsFollowTheConfiguredRate) {
  auto options = Options("bid", "5000");
  options["nexmark.first-event-rate"] = "1000";  // One event per millisecond of event time.
  auto rows = ReadStream(options, {{"date_time", TypeId::kInt64}});
  ASSERT_EQ(rows.size(), 4600u);
  // The first bid is event 4; bids are events 4..49, 54..99, ...
  EXPECT_EQ(rows[0][0].int_value(), nexmark::kBaseTimeMicros + 4 * 1000);
  EXPECT_EQ(rows[46][0].int_value(), nexmark::kBaseTimeMicros + 54 * 1000);
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_GE(rows[i][0].int_value(), rows[i - 1][0].int_value());
  }
  // 2015-07-15 00:00:00 UTC.
  EXPECT_EQ(nexmark::kBaseTimeMicros, 1436918400LL * 1000000);
  // The default rate is Flink's 10,000,000 events/s: 0.1 µs apart.
  nexmark::GeneratorConfig config;
  EXPECT_EQ(nexmark::EventTimeMicros(config, 0), nexmark::kBaseTimeMicros);
  EXPECT_EQ(nexmark::EventTimeMicros(config, 10'000'000), nexmark::kBaseTimeMicros + 1'000'000);
  // A throttled stream's event time follows its events-per-second unless told otherwise.
  auto throttled = NexmarkOptions::Parse(
      {{"nexmark.table.type", "bid"}, {"nexmark.events-per-second", "2000"}}, {});
  EXPECT_EQ(throttled.generator.event_rate, 2000u);
}

TEST(NexmarkSourceTest, ExtraPadsTowardTheAverageSizes) {
  nexmark::GeneratorConfig config;
  nexmark::Person person;
  nexmark::Auction auction;
  nexmark::Bid bid;
  double person_bytes = 0, auction_bytes = 0, bid_bytes = 0;
  uint64_t people = 0, auctions = 0, bids = 0;
  for (uint64_t e = 0; e < 50000; ++e) {
    switch (nexmark::TypeOfEvent(e)) {
      case EventType::kPerson:
        nexmark::GeneratePerson(config, e, true, &person);
        person_bytes += static_cast<double>(8 + person.name.size() + person.email_address.size() +
                                            person.credit_card.size() + person.city.size() +
                                            person.state.size() + person.extra.size());
        ++people;
        break;
      case EventType::kAuction:
        nexmark::GenerateAuction(config, e, true, &auction);
        auction_bytes += static_cast<double>(
            8 + auction.item_name.size() + auction.description.size() + 40 + auction.extra.size());
        ++auctions;
        break;
      case EventType::kBid:
        nexmark::GenerateBid(config, e, true, &bid);
        bid_bytes += static_cast<double>(32 + bid.extra.size());
        for (char c : bid.extra) ASSERT_TRUE(c >= 'a' && c <= 'z');
        ++bids;
        break;
    }
  }
  EXPECT_NEAR(person_bytes / static_cast<double>(people), 200, 5);
  EXPECT_NEAR(auction_bytes / static_cast<double>(auctions), 500, 5);
  EXPECT_NEAR(bid_bytes / static_cast<double>(bids), 100, 2);
  // A person looks like the reference's.
  nexmark::GeneratePerson(config, 50, true, &person);
  EXPECT_EQ(person.id, 1001);
  EXPECT_NE(person.name.find(' '), std::string::npos);
  EXPECT_NE(person.email_address.find('@'), std::string::npos);
  EXPECT_EQ(person.email_address.substr(person.email_address.size() - 4), ".com");
  EXPECT_EQ(person.credit_card.size(), 19u);
  EXPECT_EQ(person.credit_card[4], ' ');
  EXPECT_EQ(person.state.size(), 2u);
}

TEST(NexmarkSourceTest, RejectsBadOptionsAndColumnsClearly) {
  auto error_of = [](std::map<std::string, std::string> options,
                     std::vector<planner::Column> columns = {{"price", TypeId::kInt64}},
                     std::string sqlstate = "22023") -> std::string {
    try {
      NexmarkOptions::Parse(options, columns);
    } catch (const SqlError& error) {
      EXPECT_EQ(error.sqlstate(), sqlstate) << error.what();
      return error.what();
    }
    return "";
  };
  auto contains = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  };
  EXPECT_TRUE(contains(error_of({}), "needs 'nexmark.table.type'"));
  EXPECT_TRUE(contains(error_of({{"nexmark.table.type", "bids"}}), "'person', 'auction' or 'bid'"));
  EXPECT_TRUE(contains(error_of({{"nexmark.table.type", "bid"}, {"nexmark.event.num", "x"}}),
                       "must be an integer"));
  EXPECT_TRUE(contains(error_of({{"nexmark.table.type", "bid"}, {"nexmark.event.num", "-1"}}),
                       "must not be negative"));
  EXPECT_TRUE(
      contains(error_of({{"nexmark.table.type", "bid"}, {"nexmark.events-per-second", "0"}}),
               "must be positive"));
  EXPECT_TRUE(
      contains(error_of({{"nexmark.table.type", "bid"}, {"nexmark.first-event-rate", "1.5"}}),
               "must be an integer"));
  EXPECT_TRUE(contains(error_of({{"nexmark.table.type", "bid"}, {"speed", "1"}}),
                       "unknown nexmark option 'speed'"));
  EXPECT_TRUE(contains(error_of({{"nexmark.table.type", "bid"}}, {{"name", TypeId::kVarchar}}),
                       "nexmark bid has no column 'name' (its columns: auction, bidder, price, "
                       "channel, url, date_time, extra)"));
  EXPECT_TRUE(
      contains(error_of({{"nexmark.table.type", "bid"}}, {{"price", TypeId::kInt32}}, "42804"),
               "nexmark bid column 'price' must be bigint, not integer"));
  EXPECT_TRUE(
      contains(error_of({{"nexmark.table.type", "person"}}, {{"city", TypeId::kInt64}}, "42804"),
               "must be character varying"));
  EXPECT_TRUE(contains(
      error_of({{"nexmark.table.type", "auction"}}, {{"expires", TypeId::kFloat64}}, "42804"),
      "must be bigint (µs since 1970-01-01 UTC)"));
}

TEST(NexmarkSourceTest, ThrottlesToEventsPerSecond) {
  NexmarkSource source(
      NexmarkOptions::Parse({{"nexmark.table.type", "bid"}, {"nexmark.events-per-second", "10000"}},
                            {{"auction", TypeId::kInt64}}));
  Chunk chunk;
  std::chrono::steady_clock::time_point wake;
  auto start = std::chrono::steady_clock::now();
  size_t rows = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(200)) {
    if (source.Poll(1024, &chunk, &wake) == SourceReader::PollStatus::kData) rows += chunk.size();
  }
  // 2000 events in 200 ms, 92% of them bids.
  EXPECT_GT(rows, 500u);
  EXPECT_LT(rows, 4000u);
}

}  // namespace
}  // namespace stave::executor
