#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stave::executor::nexmark {

// The Nexmark auction model (Apache Beam's and Flink's nexmark generators): people list
// items in auctions and bid on them. Events are numbered from 0; of each 50 events, 1 is a
// new person, 3 are new auctions and 46 are bids. Every value of event n is a pure function
// of (config, n): a replay from any event number yields the same events.

inline constexpr uint64_t kPersonProportion = 1;
inline constexpr uint64_t kAuctionProportion = 3;
inline constexpr uint64_t kBidProportion = 46;
inline constexpr uint64_t kProportionDenominator =
    kPersonProportion + kAuctionProportion + kBidProportion;

inline constexpr int64_t kFirstPersonId = 1000;
inline constexpr int64_t kFirstAuctionId = 1000;
inline constexpr int64_t kFirstCategoryId = 10;
inline constexpr int64_t kNumCategories = 5;
/// Auctions likely still open, which bids choose among (besides the hot ones).
inline constexpr uint64_t kNumInFlightAuctions = 100;
/// People who list and bid (besides the hot ones): the most recent ones.
inline constexpr uint64_t kNumActivePeople = 1000;
/// Ids of people and auctions not generated yet that sellers and bids may name.
inline constexpr uint64_t kPersonIdLead = 10;
inline constexpr uint64_t kAuctionIdLead = 10;
/// 1 in these many bids is for a random auction / by a random bidder, and 1 in these many
/// auctions by a random seller; the others go to the hot ones (Flink nexmark's defaults).
inline constexpr uint64_t kHotAuctionRatio = 2;
inline constexpr uint64_t kHotBiddersRatio = 4;
inline constexpr uint64_t kHotSellersRatio = 4;
/// Hot auctions, bidders and sellers are the first of each batch of this many.
inline constexpr uint64_t kHotBatch = 100;
/// 1 in these many bids comes through a random channel, the others through a hot one.
inline constexpr uint64_t kHotChannelRatio = 2;
inline constexpr uint64_t kNumChannels = 10000;
/// Average sizes (bytes) each event type's `extra` pads toward.
inline constexpr int64_t kAvgPersonBytes = 200;
inline constexpr int64_t kAvgAuctionBytes = 500;
inline constexpr int64_t kAvgBidBytes = 100;
/// Flink nexmark's default first-event-rate: events per second of event time.
inline constexpr uint64_t kDefaultEventRate = 10'000'000;
/// Event time of event 0: 2015-07-15 00:00:00 UTC in µs since the Unix epoch (Flink
/// nexmark's BASE_TIME), fixed so that runs are reproducible.
inline constexpr int64_t kBaseTimeMicros = 1'436'918'400'000'000;

enum class EventType : uint8_t { kPerson, kAuction, kBid };

struct GeneratorConfig {
  uint64_t seed = 0;
  /// Events per second of event time: event n happens at base + n × 1e6 / rate µs.
  uint64_t event_rate = kDefaultEventRate;
  int64_t base_time_micros = kBaseTimeMicros;
};

/// The type of event `event`.
EventType TypeOfEvent(uint64_t event);
/// The first event of `type` numbered `event` or later.
uint64_t NextEventOfType(EventType type, uint64_t event);
/// How many events of `type` are numbered below `event`.
uint64_t CountEventsOfType(EventType type, uint64_t event);
/// Event time of `event`, in µs since the Unix epoch.
int64_t EventTimeMicros(const GeneratorConfig& config, uint64_t event);

/// The id (base 0) of the last person generated at or before `event`.
uint64_t LastBase0PersonId(uint64_t event);
/// The id (base 0) of the last auction generated at or before `event` (for an auction
/// event: its own id).
uint64_t LastBase0AuctionId(uint64_t event);

// The events. Strings are reused buffers, so a caller that keeps one struct and generates
// into it again and again allocates nothing once they have grown.

struct Person {
  int64_t id = 0;
  std::string name;
  std::string email_address;
  std::string credit_card;
  std::string_view city;
  std::string_view state;
  int64_t date_time = 0;
  std::string extra;
};

struct Auction {
  int64_t id = 0;
  std::string item_name;
  std::string description;
  int64_t initial_bid = 0;
  int64_t reserve = 0;
  int64_t date_time = 0;
  int64_t expires = 0;
  int64_t seller = 0;
  int64_t category = 0;
  std::string extra;
};

struct Bid {
  int64_t auction = 0;
  int64_t bidder = 0;
  int64_t price = 0;
  std::string_view channel;
  std::string_view url;
  int64_t date_time = 0;
  std::string extra;
};

// Each generates the event numbered `event`, which must be of its type. `extra` = false
// leaves the `extra` string empty (it is drawn last, so the other fields do not change).
void GeneratePerson(const GeneratorConfig& config, uint64_t event, bool extra, Person* out);
void GenerateAuction(const GeneratorConfig& config, uint64_t event, bool extra, Auction* out);
void GenerateBid(const GeneratorConfig& config, uint64_t event, bool extra, Bid* out);

}  // namespace stave::executor::nexmark
