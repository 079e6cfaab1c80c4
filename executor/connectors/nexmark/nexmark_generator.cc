#include "executor/connectors/nexmark/nexmark_generator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

namespace stave::executor::nexmark {
namespace {

// SplitMix64's finalizer: a bijection with well-mixed output bits.
uint64_t Finalize(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A SplitMix64 stream whose start depends only on (seed, event): each event draws its
// values from its own stream, so any event can be generated without its predecessors.
class Random {
 public:
  Random(uint64_t seed, uint64_t event)
      : state_(Finalize(event ^ Finalize(seed ^ 0x6E65786D61726BULL))) {}

  uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return Finalize(state_);
  }
  /// Uniform in [0, n), n > 0 (Lemire's multiply-shift; the bias is below 2^-40 here).
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  /// Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// `length` lower-case letters, appended: ten from each 64-bit draw, five from each 32-bit
// half as the leading base-26 digits of half / 2^32 (each letter within 0.3 % of uniform). The
// halves' digit chains do not depend on each other, so they run in parallel.
void AppendLetters(Random* random, size_t length, std::string* out) {
  size_t at = out->size();
  out->resize(at + length);
  char* data = out->data() + at;
  while (length > 0) {
    uint64_t word = random->Next();
    uint64_t low = word & 0xFFFFFFFF;
    uint64_t high = word >> 32;
    char letters[10];
    for (int i = 0; i < 5; ++i) {
      low *= 26;
      high *= 26;
      letters[i] = static_cast<char>('a' + (low >> 32));
      letters[5 + i] = static_cast<char>('a' + (high >> 32));
      low &= 0xFFFFFFFF;
      high &= 0xFFFFFFFF;
    }
    size_t n = std::min<size_t>(length, 10);
    std::memcpy(data, letters, n);
    data += n;
    length -= n;
  }
}

// A random string of 3 to max_length - 1 characters, each a space with probability 1/13
// (else a letter), trimmed: the reference's nextString. `space` may be another separator.
void AppendWords(Random* random, uint64_t max_length, char space, std::string* out) {
  uint64_t length = 3 + random->Below(max_length - 3);
  size_t start = out->size();
  out->resize(start + length);
  char* data = out->data() + start;
  // Four characters from each draw, one per 16-bit lane scaled to [0, 13 × 26): below 26 is
  // a space, the rest are letters.
  for (uint64_t i = 0; i < length; i += 4) {
    uint64_t word = random->Next();
    for (uint64_t lane = 0; lane < 4 && i + lane < length; ++lane) {
      uint64_t v = ((word >> (16 * lane)) & 0xFFFF) * (13 * 26) >> 16;
      data[i + lane] = v < 26 ? space : static_cast<char>('a' + (v - 26) % 26);
    }
  }
  if (space == ' ') {
    size_t first = out->find_first_not_of(' ', start);
    if (first == std::string::npos) {
      out->resize(start);
      return;
    }
    out->erase(start, first - start);
    out->resize(out->find_last_not_of(' ') + 1);
  }
}

// The padding that brings an event of `current_size` bytes to `average_size` on average:
// ±20% around the difference, in letters (the reference's nextExtra).
void MakeExtra(Random* random, int64_t current_size, int64_t average_size, std::string* out) {
  out->clear();
  if (current_size > average_size) return;
  int64_t wanted = average_size - current_size;
  int64_t delta = static_cast<int64_t>(std::llround(static_cast<double>(wanted) * 0.2));
  int64_t size = wanted - delta;
  if (delta > 0) size += static_cast<int64_t>(random->Below(static_cast<uint64_t>(2 * delta)));
  AppendLetters(random, static_cast<size_t>(size), out);
}

// Prices in cents, log-uniform from $1 to $1,000,000.
int64_t NextPrice(Random* random) {
  // 10^(6u) = e^(6u ln 10); exp is cheaper than pow.
  return std::llround(std::exp(random->Unit() * (6.0 * 2.302585092994046)) * 100.0);
}

// A person among the active ones, or one of the next few not generated yet.
uint64_t NextBase0PersonId(uint64_t event, Random* random) {
  uint64_t people = LastBase0PersonId(event) + 1;
  uint64_t active = std::min(people, kNumActivePeople);
  return people - active + random->Below(active + kPersonIdLead);
}

// An auction among those likely in flight, or one of the next few not generated yet.
uint64_t NextBase0AuctionId(uint64_t event, Random* random) {
  uint64_t last = LastBase0AuctionId(event);
  uint64_t first = last > kNumInFlightAuctions ? last - kNumInFlightAuctions : 0;
  return first + random->Below(last - first + 1 + kAuctionIdLead);
}

constexpr std::array<std::string_view, 6> kStates = {"AZ", "CA", "ID", "OR", "WA", "WY"};
constexpr std::array<std::string_view, 10> kCities = {
    "Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
    "Bend",    "Redmond",     "Seattle",       "Kent",  "Cheyenne"};
constexpr std::array<std::string_view, 11> kFirstNames = {
    "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"};
constexpr std::array<std::string_view, 9> kLastNames = {
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"};
constexpr std::array<std::string_view, 4> kHotChannels = {"Google", "Facebook", "Baidu", "Apple"};

// The channels bids come through and their urls, the same for every seed: the four hot
// channels, then "channel-<i>" for i < kNumChannels. Packed in one buffer, each channel's name
// followed by its url, so that a random channel costs one cache miss, not three.
class Channels {
 public:
  Channels() {
    starts_.reserve(2 * (kHotChannels.size() + kNumChannels) + 1);
    for (size_t i = 0; i < kHotChannels.size(); ++i) Add(kHotChannels[i], BaseUrl(i));
    for (uint64_t i = 0; i < kNumChannels; ++i) {
      std::string url = BaseUrl(i);
      // Nine in ten channels' urls carry a channel id: the index's bits reversed.
      if (Random(0x63686964ULL, i).Below(10) > 0) {
        uint32_t reversed = 0;
        for (int bit = 0; bit < 32; ++bit) {
          reversed |= ((static_cast<uint32_t>(i) >> bit) & 1) << (31 - bit);
        }
        url += "&channel_id=" +
               std::to_string(std::abs(static_cast<int64_t>(static_cast<int32_t>(reversed))));
      }
      Add("channel-" + std::to_string(i), url);
    }
    starts_.push_back(static_cast<uint32_t>(data_.size()));
  }

  std::string_view name(size_t channel) const { return Slice(2 * channel); }
  std::string_view url(size_t channel) const { return Slice(2 * channel + 1); }

 private:
  static std::string BaseUrl(uint64_t index) {
    Random random(0x63686E6CULL, index);
    std::string url = "https://www.nexmark.com/";
    for (int part = 0; part < 3; ++part) {
      AppendWords(&random, 5, '_', &url);
      url += '/';
    }
    url += "item.htm?query=1";
    return url;
  }

  void Add(std::string_view name, std::string_view url) {
    starts_.push_back(static_cast<uint32_t>(data_.size()));
    data_ += name;
    starts_.push_back(static_cast<uint32_t>(data_.size()));
    data_ += url;
  }

  std::string_view Slice(size_t i) const {
    return std::string_view(data_).substr(starts_[i], starts_[i + 1] - starts_[i]);
  }

  std::string data_;
  std::vector<uint32_t> starts_;  // Where each name and url begins, and the end.
};

const Channels& TheChannels() {
  static const Channels channels;
  return channels;
}

}  // namespace

EventType TypeOfEvent(uint64_t event) {
  uint64_t rem = event % kProportionDenominator;
  if (rem < kPersonProportion) return EventType::kPerson;
  if (rem < kPersonProportion + kAuctionProportion) return EventType::kAuction;
  return EventType::kBid;
}

uint64_t NextEventOfType(EventType type, uint64_t event) {
  uint64_t rem = event % kProportionDenominator;
  uint64_t base = event - rem;
  constexpr uint64_t kFirstAuction = kPersonProportion;
  constexpr uint64_t kFirstBid = kPersonProportion + kAuctionProportion;
  switch (type) {
    case EventType::kPerson:
      return rem < kFirstAuction ? event : base + kProportionDenominator;
    case EventType::kAuction:
      if (rem < kFirstAuction) return base + kFirstAuction;
      return rem < kFirstBid ? event : base + kProportionDenominator + kFirstAuction;
    case EventType::kBid:
      return rem < kFirstBid ? base + kFirstBid : event;
  }
  return event;
}

uint64_t CountEventsOfType(EventType type, uint64_t event) {
  uint64_t epochs = event / kProportionDenominator;
  uint64_t rem = event % kProportionDenominator;
  switch (type) {
    case EventType::kPerson:
      return epochs * kPersonProportion + std::min(rem, kPersonProportion);
    case EventType::kAuction:
      return epochs * kAuctionProportion +
             std::min(rem - std::min(rem, kPersonProportion), kAuctionProportion);
    case EventType::kBid: {
      constexpr uint64_t kFirstBid = kPersonProportion + kAuctionProportion;
      return epochs * kBidProportion + (rem > kFirstBid ? rem - kFirstBid : 0);
    }
  }
  return 0;
}

int64_t EventTimeMicros(const GeneratorConfig& config, uint64_t event) {
  constexpr uint64_t kMicrosPerSecond = 1'000'000;
  if (event < UINT64_MAX / kMicrosPerSecond) {  // The common case: no 128-bit division.
    return config.base_time_micros +
           static_cast<int64_t>(event * kMicrosPerSecond / config.event_rate);
  }
  auto offset = static_cast<unsigned __int128>(event) * kMicrosPerSecond / config.event_rate;
  return config.base_time_micros + static_cast<int64_t>(offset);
}

uint64_t LastBase0PersonId(uint64_t event) {
  uint64_t epoch = event / kProportionDenominator;
  uint64_t offset = std::min(event % kProportionDenominator, kPersonProportion - 1);
  return epoch * kPersonProportion + offset;
}

uint64_t LastBase0AuctionId(uint64_t event) {
  uint64_t epoch = event / kProportionDenominator;
  uint64_t offset = event % kProportionDenominator;
  if (offset < kPersonProportion) {
    // A person: the last auction is the previous epoch's last (none before epoch 1: 0,
    // which the first auction, event 1, is about to take).
    if (epoch == 0) return 0;
    --epoch;
    offset = kAuctionProportion - 1;
  } else if (offset >= kPersonProportion + kAuctionProportion) {
    offset = kAuctionProportion - 1;  // A bid: this epoch's last auction.
  } else {
    offset -= kPersonProportion;  // An auction: itself.
  }
  return epoch * kAuctionProportion + offset;
}

void GeneratePerson(const GeneratorConfig& config, uint64_t event, bool extra, Person* out) {
  Random random(config.seed, event);
  out->id = static_cast<int64_t>(LastBase0PersonId(event)) + kFirstPersonId;
  out->name.assign(kFirstNames[random.Below(kFirstNames.size())]);
  out->name += ' ';
  out->name += kLastNames[random.Below(kLastNames.size())];
  out->email_address.clear();
  AppendWords(&random, 7, ' ', &out->email_address);
  out->email_address += '@';
  AppendWords(&random, 5, ' ', &out->email_address);
  out->email_address += ".com";
  out->credit_card.assign(19, ' ');
  for (int group = 0; group < 4; ++group) {
    uint64_t digits = random.Below(10000);
    for (int i = 3; i >= 0; --i) {
      out->credit_card[static_cast<size_t>(group * 5 + i)] = static_cast<char>('0' + digits % 10);
      digits /= 10;
    }
  }
  out->city = kCities[random.Below(kCities.size())];
  out->state = kStates[random.Below(kStates.size())];
  out->date_time = EventTimeMicros(config, event);
  int64_t size =
      static_cast<int64_t>(8 + out->name.size() + out->email_address.size() +
                           out->credit_card.size() + out->city.size() + out->state.size());
  if (extra) {
    MakeExtra(&random, size, kAvgPersonBytes, &out->extra);
  } else {
    out->extra.clear();
  }
}

void GenerateAuction(const GeneratorConfig& config, uint64_t event, bool extra, Auction* out) {
  Random random(config.seed, event);
  out->id = static_cast<int64_t>(LastBase0AuctionId(event)) + kFirstAuctionId;
  uint64_t seller;
  if (random.Below(kHotSellersRatio) > 0) {
    seller = (LastBase0PersonId(event) / kHotBatch) * kHotBatch;  // The batch's first person.
  } else {
    seller = NextBase0PersonId(event, &random);
  }
  out->seller = static_cast<int64_t>(seller) + kFirstPersonId;
  out->category = kFirstCategoryId + static_cast<int64_t>(random.Below(kNumCategories));
  out->initial_bid = NextPrice(&random);
  out->date_time = EventTimeMicros(config, event);
  // Auctions last on average until the auction kNumInFlightAuctions later is created.
  constexpr uint64_t kEventsForAuctions =
      kNumInFlightAuctions * kProportionDenominator / kAuctionProportion;
  int64_t horizon = EventTimeMicros(config, event + kEventsForAuctions) - out->date_time;
  out->expires =
      out->date_time + 1 +
      static_cast<int64_t>(random.Below(static_cast<uint64_t>(std::max<int64_t>(horizon * 2, 1))));
  out->item_name.clear();
  AppendWords(&random, 20, ' ', &out->item_name);
  out->description.clear();
  AppendWords(&random, 100, ' ', &out->description);
  out->reserve = out->initial_bid + NextPrice(&random);
  int64_t size =
      static_cast<int64_t>(8 + out->item_name.size() + out->description.size() + 8 + 8 + 8 + 8 + 8);
  if (extra) {
    MakeExtra(&random, size, kAvgAuctionBytes, &out->extra);
  } else {
    out->extra.clear();
  }
}

void GenerateBid(const GeneratorConfig& config, uint64_t event, bool extra, Bid* out) {
  Random random(config.seed, event);
  uint64_t auction;
  if (random.Below(kHotAuctionRatio) > 0) {
    auction = (LastBase0AuctionId(event) / kHotBatch) * kHotBatch;  // The batch's first auction.
  } else {
    auction = NextBase0AuctionId(event, &random);
  }
  out->auction = static_cast<int64_t>(auction) + kFirstAuctionId;
  uint64_t bidder;
  if (random.Below(kHotBiddersRatio) > 0) {
    // The batch's second person, so that hot bidders and hot sellers differ.
    bidder = (LastBase0PersonId(event) / kHotBatch) * kHotBatch + 1;
  } else {
    bidder = NextBase0PersonId(event, &random);
  }
  out->bidder = static_cast<int64_t>(bidder) + kFirstPersonId;
  out->price = NextPrice(&random);
  const Channels& channels = TheChannels();
  size_t channel = random.Below(kHotChannelRatio) > 0
                       ? random.Below(kHotChannels.size())
                       : kHotChannels.size() + random.Below(kNumChannels);
  out->channel = channels.name(channel);
  out->url = channels.url(channel);
  out->date_time = EventTimeMicros(config, event);
  if (extra) {
    MakeExtra(&random, 8 + 8 + 8 + 8, kAvgBidBytes, &out->extra);
  } else {
    out->extra.clear();
  }
}

}  // namespace stave::executor::nexmark
