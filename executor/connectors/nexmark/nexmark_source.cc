#include "executor/connectors/nexmark/nexmark_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <span>

#include "common/sql_error.h"
#include "storage/key_codec.h"

namespace stave::executor {
namespace {

using nexmark::EventType;

enum class FieldKind { kInt, kString, kTime };

struct FieldSpec {
  std::string_view name;
  FieldKind kind;
};

// Each table type's columns, in RisingWave's and Flink's order; the index is the field.
constexpr FieldSpec kPersonFields[] = {{"id", FieldKind::kInt},
                                       {"name", FieldKind::kString},
                                       {"email_address", FieldKind::kString},
                                       {"credit_card", FieldKind::kString},
                                       {"city", FieldKind::kString},
                                       {"state", FieldKind::kString},
                                       {"date_time", FieldKind::kTime},
                                       {"extra", FieldKind::kString}};
constexpr FieldSpec kAuctionFields[] = {{"id", FieldKind::kInt},
                                        {"item_name", FieldKind::kString},
                                        {"description", FieldKind::kString},
                                        {"initial_bid", FieldKind::kInt},
                                        {"reserve", FieldKind::kInt},
                                        {"date_time", FieldKind::kTime},
                                        {"expires", FieldKind::kTime},
                                        {"seller", FieldKind::kInt},
                                        {"category", FieldKind::kInt},
                                        {"extra", FieldKind::kString}};
constexpr FieldSpec kBidFields[] = {{"auction", FieldKind::kInt}, {"bidder", FieldKind::kInt},
                                    {"price", FieldKind::kInt},   {"channel", FieldKind::kString},
                                    {"url", FieldKind::kString},  {"date_time", FieldKind::kTime},
                                    {"extra", FieldKind::kString}};

std::span<const FieldSpec> FieldsOf(EventType type) {
  switch (type) {
    case EventType::kPerson:
      return kPersonFields;
    case EventType::kAuction:
      return kAuctionFields;
    case EventType::kBid:
      return kBidFields;
  }
  return kBidFields;
}

std::string_view TypeName(EventType type) {
  switch (type) {
    case EventType::kPerson:
      return "person";
    case EventType::kAuction:
      return "auction";
    case EventType::kBid:
      return "bid";
  }
  return "bid";
}

[[noreturn]] void ThrowOption(const std::string& message) {
  throw SqlError(sqlstate::kInvalidParameterValue, message);
}

int64_t ParseInteger(const std::string& key, const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    ThrowOption(fmt::format("nexmark option '{}' must be an integer, not '{}'", key, text));
  }
  return value;
}

double ParseNumber(const std::string& key, const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
    ThrowOption(fmt::format("nexmark option '{}' must be a number, not '{}'", key, text));
  }
  return value;
}

// The TIMESTAMP type, if this build has one.
const std::optional<DataType>& TimestampType() {
  static const std::optional<DataType> type = DataTypeFromName("timestamp");
  return type;
}

bool FitsKind(FieldKind kind, DataType type) {
  switch (kind) {
    case FieldKind::kInt:
      return type.id == TypeId::kInt64;
    case FieldKind::kString:
      return type.IsString();
    case FieldKind::kTime:
      return type.id == TypeId::kInt64 || (TimestampType() && type == *TimestampType());
  }
  return false;
}

std::string KindName(FieldKind kind) {
  switch (kind) {
    case FieldKind::kInt:
      return "bigint";
    case FieldKind::kString:
      return "character varying";
    case FieldKind::kTime:
      return TimestampType() ? "bigint (µs since 1970-01-01 UTC) or timestamp"
                             : "bigint (µs since 1970-01-01 UTC)";
  }
  return "";
}

std::string ColumnList(EventType type) {
  std::string list;
  for (const FieldSpec& field : FieldsOf(type)) {
    if (!list.empty()) list += ", ";
    list += field.name;
  }
  return list;
}

int64_t TimeValue(DataType type, int64_t unix_micros) {
  return type.id == TypeId::kInt64 ? unix_micros : unix_micros - kTimestampEpochOffsetMicros;
}

void PushString(std::string* value, Column* column) {
  column->strings.push_back(std::move(*value));
}
void PushString(std::string_view value, Column* column) { column->strings.emplace_back(value); }

// Appends field `field` of each event type to `column` (nulls are filled in per chunk).
void AppendField(size_t field, DataType type, nexmark::Person* person, Column* column) {
  switch (field) {
    case 0:
      column->ints.push_back(person->id);
      return;
    case 1:
      PushString(&person->name, column);
      return;
    case 2:
      PushString(&person->email_address, column);
      return;
    case 3:
      PushString(&person->credit_card, column);
      return;
    case 4:
      PushString(person->city, column);
      return;
    case 5:
      PushString(person->state, column);
      return;
    case 6:
      column->ints.push_back(TimeValue(type, person->date_time));
      return;
    default:
      PushString(&person->extra, column);
      return;
  }
}

void AppendField(size_t field, DataType type, nexmark::Auction* auction, Column* column) {
  switch (field) {
    case 0:
      column->ints.push_back(auction->id);
      return;
    case 1:
      PushString(&auction->item_name, column);
      return;
    case 2:
      PushString(&auction->description, column);
      return;
    case 3:
      column->ints.push_back(auction->initial_bid);
      return;
    case 4:
      column->ints.push_back(auction->reserve);
      return;
    case 5:
      column->ints.push_back(TimeValue(type, auction->date_time));
      return;
    case 6:
      column->ints.push_back(TimeValue(type, auction->expires));
      return;
    case 7:
      column->ints.push_back(auction->seller);
      return;
    case 8:
      column->ints.push_back(auction->category);
      return;
    default:
      PushString(&auction->extra, column);
      return;
  }
}

void AppendField(size_t field, DataType type, nexmark::Bid* bid, Column* column) {
  switch (field) {
    case 0:
      column->ints.push_back(bid->auction);
      return;
    case 1:
      column->ints.push_back(bid->bidder);
      return;
    case 2:
      column->ints.push_back(bid->price);
      return;
    case 3:
      PushString(bid->channel, column);
      return;
    case 4:
      PushString(bid->url, column);
      return;
    case 5:
      column->ints.push_back(TimeValue(type, bid->date_time));
      return;
    default:
      PushString(&bid->extra, column);
      return;
  }
}

constexpr std::string_view kKnownOptions =
    "nexmark.table.type, nexmark.event.num, nexmark.events-per-second, nexmark.seed, "
    "nexmark.first-event-rate";

}  // namespace

std::vector<std::string> NexmarkColumnNames(EventType type) {
  std::vector<std::string> names;
  for (const FieldSpec& field : FieldsOf(type)) names.emplace_back(field.name);
  return names;
}

NexmarkOptions NexmarkOptions::Parse(const std::map<std::string, std::string>& options,
                                     const std::vector<planner::Column>& columns) {
  NexmarkOptions parsed;
  std::optional<uint64_t> first_event_rate;
  bool has_type = false;
  for (const auto& [key, value] : options) {
    if (key == "nexmark.table.type") {
      if (value == "person") {
        parsed.type = EventType::kPerson;
      } else if (value == "auction") {
        parsed.type = EventType::kAuction;
      } else if (value == "bid") {
        parsed.type = EventType::kBid;
      } else {
        ThrowOption(fmt::format(
            "nexmark option 'nexmark.table.type' must be 'person', 'auction' or 'bid', not '{}'",
            value));
      }
      has_type = true;
    } else if (key == "nexmark.event.num") {
      int64_t events = ParseInteger(key, value);
      if (events < 0) ThrowOption("nexmark option 'nexmark.event.num' must not be negative");
      parsed.event_num = static_cast<uint64_t>(events);
    } else if (key == "nexmark.events-per-second") {
      double rate = ParseNumber(key, value);
      if (rate <= 0) ThrowOption("nexmark option 'nexmark.events-per-second' must be positive");
      parsed.events_per_second = rate;
    } else if (key == "nexmark.seed") {
      parsed.generator.seed = static_cast<uint64_t>(ParseInteger(key, value));
    } else if (key == "nexmark.first-event-rate") {
      int64_t rate = ParseInteger(key, value);
      if (rate <= 0) ThrowOption("nexmark option 'nexmark.first-event-rate' must be positive");
      first_event_rate = static_cast<uint64_t>(rate);
    } else {
      ThrowOption(fmt::format("unknown nexmark option '{}' (known: {})", key, kKnownOptions));
    }
  }
  if (!has_type) {
    ThrowOption("a nexmark stream needs 'nexmark.table.type' = 'person', 'auction' or 'bid'");
  }
  if (first_event_rate) {
    parsed.generator.event_rate = *first_event_rate;
  } else if (parsed.events_per_second) {
    parsed.generator.event_rate =
        static_cast<uint64_t>(std::max(1.0, std::round(*parsed.events_per_second)));
  }
  std::span<const FieldSpec> fields = FieldsOf(parsed.type);
  for (const planner::Column& column : columns) {
    auto it = std::find_if(fields.begin(), fields.end(),
                           [&](const FieldSpec& field) { return field.name == column.name; });
    if (it == fields.end()) {
      ThrowOption(fmt::format("nexmark {} has no column '{}' (its columns: {})",
                              TypeName(parsed.type), column.name, ColumnList(parsed.type)));
    }
    if (!FitsKind(it->kind, column.type)) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("nexmark {} column '{}' must be {}, not {}", TypeName(parsed.type),
                                 column.name, KindName(it->kind), column.type.Name()));
    }
    parsed.fields.push_back(static_cast<size_t>(it - fields.begin()));
    parsed.types.push_back(column.type);
  }
  return parsed;
}

NexmarkSource::NexmarkSource(NexmarkOptions options) : options_(std::move(options)) {
  size_t extra_field = FieldsOf(options_.type).size() - 1;
  for (size_t c = 0; c < options_.fields.size(); ++c) {
    bool read = options_.read_columns.size() != options_.fields.size() || options_.read_columns[c];
    if (options_.fields[c] == extra_field && read) want_extra_ = true;
  }
  rate_start_ = std::chrono::steady_clock::now();
}

SourceReader::PollStatus NexmarkSource::Poll(size_t max_rows, Chunk* chunk,
                                             std::chrono::steady_clock::time_point* wake_at) {
  const EventType type = options_.type;
  uint64_t first = nexmark::NextEventOfType(type, next_event_);
  if (options_.event_num && first >= *options_.event_num) return PollStatus::kFinished;
  uint64_t limit = options_.event_num.value_or(UINT64_MAX);
  if (options_.events_per_second) {
    double rate = *options_.events_per_second;
    auto now = std::chrono::steady_clock::now();
    double elapsed = std::chrono::duration<double>(now - rate_start_).count();
    uint64_t allowed = rate_start_event_ + static_cast<uint64_t>(elapsed * rate);
    if (allowed <= first) {
      double wait = static_cast<double>(first + 1 - rate_start_event_) / rate - elapsed;
      *wake_at =
          now + std::chrono::microseconds(static_cast<int64_t>(std::max(wait, 0.0) * 1e6) + 1);
      return PollStatus::kIdle;
    }
    limit = std::min(limit, allowed);
  }
  uint64_t available =
      nexmark::CountEventsOfType(type, limit) - nexmark::CountEventsOfType(type, next_event_);
  size_t rows = static_cast<size_t>(std::min<uint64_t>(max_rows, available));

  Chunk out;
  out.columns.reserve(options_.fields.size());
  for (DataType column_type : options_.types) {
    out.columns.emplace_back(column_type);
    out.columns.back().Reserve(rows);
  }
  const size_t width = options_.fields.size();
  uint64_t event = first;
  for (size_t row = 0; row < rows; ++row) {
    switch (type) {
      case EventType::kPerson:
        nexmark::GeneratePerson(options_.generator, event, want_extra_, &person_);
        for (size_t c = 0; c < width; ++c) {
          AppendField(options_.fields[c], options_.types[c], &person_, &out.columns[c]);
        }
        break;
      case EventType::kAuction:
        nexmark::GenerateAuction(options_.generator, event, want_extra_, &auction_);
        for (size_t c = 0; c < width; ++c) {
          AppendField(options_.fields[c], options_.types[c], &auction_, &out.columns[c]);
        }
        break;
      case EventType::kBid:
        nexmark::GenerateBid(options_.generator, event, want_extra_, &bid_);
        for (size_t c = 0; c < width; ++c) {
          AppendField(options_.fields[c], options_.types[c], &bid_, &out.columns[c]);
        }
        break;
    }
    next_event_ = event + 1;
    event = nexmark::NextEventOfType(type, event + 1);
  }
  for (Column& column : out.columns) column.nulls.assign(rows, 0);
  out.ops.assign(rows, RowOp::kInsert);
  *chunk = std::move(out);
  return PollStatus::kData;
}

std::string NexmarkSource::Position() const {
  std::string bytes;
  storage::AppendBigEndian64(next_event_, &bytes);
  return bytes;
}

Status NexmarkSource::Seek(std::string_view position) {
  if (position.size() != 8) return Status::Corruption("malformed nexmark position");
  next_event_ = storage::ReadBigEndian64(position);
  rate_start_ = std::chrono::steady_clock::now();
  rate_start_event_ = next_event_;
  return Status::Ok();
}

planner::ConnectorSpec NexmarkConnectorSpec() {
  planner::ConnectorSpec spec;
  spec.name = "nexmark";
  spec.replayable_source = true;
  spec.source_reason =
      "the nexmark generator is deterministic and rewinds to the checkpointed event number";
  spec.validate_source = [](const std::map<std::string, std::string>& options,
                            const std::vector<planner::Column>& columns,
                            const std::string& format) {
    planner::RefuseFormat("nexmark", format);
    NexmarkOptions::Parse(options, columns);
  };
  return spec;
}

}  // namespace stave::executor
