#include "executor/connectors/nexmark/nexmark_generator.h"

#include <algorithm>
#include <array>
#include <cmath>
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

// `length` lower-case letters, appended: ten base-26 digits from each 64-bit draw (the
// draw's leading fraction digits, so each letter is uniform).
void AppendLetters(Random* random, size_t length, std::string* out) {
  size_t at = out->size();
  out->resize(at + length);
  char* data = out->data() + at;
  while (length > 0) {
    uint64_t word = random->Next();
    size_t n = std::min<size_t>(length, 10);
    for (size_t i = 0; i < n; ++i) {
      unsigned __int128 product = static_cast<unsigned __int128>(word) * 26;
      data[i] = static_cast<char>('a' + static_cast<int>(product >> 64));
      word = static_cast<uint64_t>(product);
    }
    data += n;
    length -= n;
  }
}

// A random string of 3 to max_length - 1 characters, each a space with probability 1/13
// (else a letter), trimmed: the reference's nextString.
void AppendWords(Random* random, uint64_t max_length, char space, std::string* out) {
  uint64_t length = 3 + random->Below(max_length - 3);
  size_t start = out->size();
  out->reserve(start + length);
  for (uint64_t i = 0; i < length; ++i) {
    uint64_t v = random->Below(13 * 26);  // One draw: < 26 is a space, the rest letters.
    out->push_back(v < 26 ? space : static_cast<char>('a' + (v - 26) % 26));
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
  return std::llround(std::pow(10.0, random->Unit() * 6.0) * 100.0);
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
// channels, then "channel-<i>" for i < kNumChannels.
struct Channels {
  std::vector<std::string> names;
  std::vector<std::string> urls;

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

  Channels() {
    names.reserve(kHotChannels.size() + kNumChannels);
    urls.reserve(kHotChannels.size() + kNumChannels);
    for (size_t i = 0; i < kHotChannels.size(); ++i) {
      names.emplace_back(kHotChannels[i]);
      urls.push_back(BaseUrl(i));
    }
    for (uint64_t i = 0; i < kNumChannels; ++i) {
      names.push_back("channel-" + std::to_string(i));
      std::string url = BaseUrl(i);
      // Nine in ten channels' urls carry a channel id: the index's bits reversed.
      if (Random(0x63686964ULL, i).Below(10) > 0) {
        uint32_t reversed = 0;
        for (int bit = 0; bit < 32; ++bit)
          reversed |= ((static_cast<uint32_t>(i) >> bit) & 1) << (31 - bit);
        url += "&channel_id=" +
               std::to_string(std::abs(static_cast<int64_t>(static_cast<int32_t>(reversed))));
      }
      urls.push_back(std::move(url));
    }
  }
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
  auto offset = static_cast<unsigned __int128>(event) * 1'000'000 / config.event_rate;
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
  out->channel = channels.names[channel];
  out->url = channels.urls[channel];
  out->date_time = EventTimeMicros(config, event);
  if (extra) {
    MakeExtra(&random, 8 + 8 + 8 + 8, kAvgBidBytes, &out->extra);
  } else {
    out->extra.clear();
  }
}

}  // namespace stave::executor::nexmark
