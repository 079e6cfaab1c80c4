#include "executor/connectors/datagen/datagen_source.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "common/sql_error.h"
#include "common/temporal.h"
#include "storage/key_codec.h"

namespace stave::executor {
namespace {

[[noreturn]] void ThrowOption(const std::string& message) {
  throw SqlError(sqlstate::kInvalidParameterValue, message);
}

int64_t ParseInteger(const std::string& key, const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    ThrowOption(fmt::format("datagen option '{}' must be an integer, not '{}'", key, text));
  }
  return value;
}

double ParseNumber(const std::string& key, const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
    ThrowOption(fmt::format("datagen option '{}' must be a number, not '{}'", key, text));
  }
  return value;
}

// A well-mixed 64-bit hash of (seed, column, row): SplitMix64's finalizer.
uint64_t Mix(uint64_t seed, uint64_t column, uint64_t row) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ULL + column * 0xBF58476D1CE4E5B9ULL + row + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A sequence's start or end: an integer, or a timestamp for a timestamp column.
int64_t ParseFieldValue(DataType type, const std::string& key, const std::string& value) {
  if (!type.IsTimestamp()) return ParseInteger(key, value);
  try {
    return temporal::ParseTimestamp(value, type.id == TypeId::kTimestampTz);
  } catch (const SqlError& error) {
    ThrowOption(fmt::format("datagen option '{}': {}", key, error.what()));
  }
}

// A sequence's step: a positive integer, or a positive interval (without months) for a
// timestamp column, in microseconds.
int64_t ParseStep(DataType type, const std::string& key, const std::string& value) {
  int64_t step = 0;
  if (type.IsTimestamp()) {
    temporal::Interval interval;
    try {
      interval = temporal::ParseInterval(value);
    } catch (const SqlError& error) {
      ThrowOption(fmt::format("datagen option '{}': {}", key, error.what()));
    }
    if (interval.months != 0)
      ThrowOption(fmt::format("datagen option '{}' cannot be in months", key));
    step = interval.days * temporal::kMicrosPerDay + interval.micros;
  } else {
    step = ParseInteger(key, value);
  }
  if (step <= 0) ThrowOption(fmt::format("datagen option '{}' must be positive", key));
  return step;
}

std::pair<double, double> DefaultRange(DataType type) {
  switch (type.id) {
    case TypeId::kInt16:
      return {std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max()};
    case TypeId::kInt32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case TypeId::kInt64:
      return {-9.2e18, 9.2e18};
    default:
      return {0, 1};
  }
}

}  // namespace

DatagenOptions DatagenOptions::Parse(const std::map<std::string, std::string>& options,
                                     const std::vector<planner::Column>& columns) {
  DatagenOptions parsed;
  std::map<std::string, size_t> column_index;
  for (size_t i = 0; i < columns.size(); ++i) {
    column_index[columns[i].name] = i;
    if ((columns[i].type.IsTemporal() && !columns[i].type.IsTimestamp()) ||
        columns[i].type.IsDecimal()) {
      ThrowOption(fmt::format("datagen cannot generate column '{}' of type {} yet", columns[i].name,
                              columns[i].type.Name()));
    }
    DatagenField field;
    field.type = columns[i].type;
    if (field.type.IsTimestamp()) {  // Time moves on: a sequence, a second apart by default.
      field.kind = DatagenField::Kind::kSequence;
      field.start = 0;
      field.step = temporal::kMicrosPerSecond;
    }
    std::tie(field.min, field.max) = DefaultRange(field.type);
    parsed.fields.push_back(field);
  }
  std::set<size_t> has_end;
  for (const auto& [key, value] : options) {
    if (key == "rows-per-second") {
      double rate = ParseNumber(key, value);
      if (rate <= 0) ThrowOption("datagen option 'rows-per-second' must be positive");
      parsed.rows_per_second = rate;
    } else if (key == "number-of-rows") {
      int64_t rows = ParseInteger(key, value);
      if (rows < 0) ThrowOption("datagen option 'number-of-rows' must not be negative");
      parsed.number_of_rows = static_cast<uint64_t>(rows);
    } else if (key == "seed") {
      parsed.seed = static_cast<uint64_t>(ParseInteger(key, value));
    } else if (key.rfind("fields.", 0) == 0) {
      size_t dot = key.rfind('.');
      std::string column = key.substr(7, dot > 7 ? dot - 7 : 0);
      std::string property = key.substr(dot + 1);
      auto it = column_index.find(column);
      if (dot <= 7 || it == column_index.end()) {
        ThrowOption(fmt::format("datagen option '{}' names no column of the stream", key));
      }
      DatagenField& field = parsed.fields[it->second];
      if (property == "kind") {
        if (field.type.IsTimestamp() && value != "sequence") {
          ThrowOption(fmt::format("datagen column '{}' of type {} can only be a sequence", column,
                                  field.type.Name()));
        }
        if (value == "sequence") {
          if (!field.type.IsInteger() && !field.type.IsString() && !field.type.IsTimestamp()) {
            ThrowOption(fmt::format("datagen column '{}' of type {} cannot be a sequence", column,
                                    field.type.Name()));
          }
          field.kind = DatagenField::Kind::kSequence;
        } else if (value == "random") {
          field.kind = DatagenField::Kind::kRandom;
        } else {
          ThrowOption(fmt::format("datagen option '{}' must be 'sequence' or 'random', not '{}'",
                                  key, value));
        }
      } else if (property == "start") {
        field.start = ParseFieldValue(field.type, key, value);
      } else if (property == "end") {
        field.end = ParseFieldValue(field.type, key, value);
        has_end.insert(it->second);
      } else if (property == "step") {
        field.step = ParseStep(field.type, key, value);
      } else if (property == "min") {
        field.min = ParseNumber(key, value);
      } else if (property == "max") {
        field.max = ParseNumber(key, value);
      } else if (property == "length") {
        field.length = ParseInteger(key, value);
        if (field.length < 0 || field.length > 1 << 20) {
          ThrowOption(fmt::format("datagen option '{}' must be between 0 and 1048576", key));
        }
      } else {
        ThrowOption(
            fmt::format("unknown datagen option '{}' (a field takes kind, start, end, step, "
                        "min, max or length)",
                        key));
      }
    } else {
      ThrowOption(
          fmt::format("unknown datagen option '{}' (known: rows-per-second, number-of-rows, "
                      "seed, fields.<column>.<kind|start|end|step|min|max|length>)",
                      key));
    }
  }
  for (size_t i = 0; i < parsed.fields.size(); ++i) {
    DatagenField& field = parsed.fields[i];
    if (field.kind == DatagenField::Kind::kSequence) {
      if (field.end && *field.end < field.start) {
        ThrowOption(fmt::format("datagen column '{}': end {} is before start {}", columns[i].name,
                                *field.end, field.start));
      }
    } else {
      if (has_end.count(i)) {
        ThrowOption(
            fmt::format("datagen column '{}': 'end' applies to a sequence; set "
                        "'fields.{}.kind' = 'sequence'",
                        columns[i].name, columns[i].name));
      }
      if (field.min > field.max) {
        ThrowOption(fmt::format("datagen column '{}': min is above max", columns[i].name));
      }
    }
  }
  return parsed;
}

DatagenSource::DatagenSource(DatagenOptions options) : options_(std::move(options)) {
  total_rows_ = options_.number_of_rows;
  for (const DatagenField& field : options_.fields) {
    if (field.kind == DatagenField::Kind::kSequence && field.end) {
      uint64_t rows = static_cast<uint64_t>((*field.end - field.start) / field.step) + 1;
      total_rows_ = total_rows_ ? std::min(*total_rows_, rows) : rows;
    }
  }
  rate_start_ = std::chrono::steady_clock::now();
}

void DatagenSource::AppendValue(size_t index, uint64_t row, Column* column) const {
  const DatagenField& field = options_.fields[index];
  if (field.kind == DatagenField::Kind::kSequence) {
    int64_t value = field.start + static_cast<int64_t>(row) * field.step;
    if (field.type.IsString()) {
      column->AppendString(std::to_string(value));
    } else {
      column->AppendInt(value);
    }
    return;
  }
  uint64_t hash = Mix(options_.seed, index, row);
  switch (field.type.id) {
    case TypeId::kBoolean:
      column->AppendInt(static_cast<int64_t>(hash & 1));
      return;
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64: {
      int64_t low = static_cast<int64_t>(std::ceil(field.min));
      int64_t high = static_cast<int64_t>(std::floor(field.max));
      uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) + 1;
      column->AppendInt(
          static_cast<int64_t>(static_cast<uint64_t>(low) + (span == 0 ? hash : hash % span)));
      return;
    }
    case TypeId::kFloat32:
    case TypeId::kFloat64: {
      double unit = static_cast<double>(hash >> 11) * 0x1.0p-53;
      double value = field.min + unit * (field.max - field.min);
      column->AppendDouble(field.type.id == TypeId::kFloat32 ? static_cast<float>(value) : value);
      return;
    }
    default: {
      static constexpr char kAlphabet[] =
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
      std::string text(static_cast<size_t>(field.length), ' ');
      uint64_t state = hash;
      for (char& c : text) {
        c = kAlphabet[state % 62];
        state = Mix(state, index, row);
      }
      column->AppendString(std::move(text));
      return;
    }
  }
}

SourceReader::PollStatus DatagenSource::Poll(size_t max_rows, Chunk* chunk,
                                             std::chrono::steady_clock::time_point* wake_at) {
  uint64_t rows = max_rows;
  if (total_rows_) {
    if (next_row_ >= *total_rows_) return PollStatus::kFinished;
    rows = std::min<uint64_t>(rows, *total_rows_ - next_row_);
  }
  if (options_.rows_per_second) {
    auto now = std::chrono::steady_clock::now();
    double elapsed = std::chrono::duration<double>(now - rate_start_).count();
    uint64_t allowed = rate_start_row_ + static_cast<uint64_t>(elapsed * *options_.rows_per_second);
    if (allowed <= next_row_) {
      double wait =
          static_cast<double>(next_row_ + 1 - rate_start_row_) / *options_.rows_per_second -
          elapsed;
      *wake_at =
          now + std::chrono::microseconds(static_cast<int64_t>(std::max(wait, 0.0) * 1e6) + 1);
      return PollStatus::kIdle;
    }
    rows = std::min(rows, allowed - next_row_);
  }
  Chunk out;
  out.columns.reserve(options_.fields.size());
  for (size_t f = 0; f < options_.fields.size(); ++f) {
    Column column(options_.fields[f].type);
    column.Reserve(rows);
    for (uint64_t r = 0; r < rows; ++r) AppendValue(f, next_row_ + r, &column);
    out.columns.push_back(std::move(column));
  }
  out.ops.assign(rows, RowOp::kInsert);
  next_row_ += rows;
  *chunk = std::move(out);
  return PollStatus::kData;
}

std::string DatagenSource::Position() const {
  std::string bytes;
  storage::AppendBigEndian64(next_row_, &bytes);
  return bytes;
}

Status DatagenSource::Seek(std::string_view position) {
  if (position.size() != 8) return Status::Corruption("malformed datagen position");
  next_row_ = storage::ReadBigEndian64(position);
  rate_start_ = std::chrono::steady_clock::now();
  rate_start_row_ = next_row_;
  return Status::Ok();
}

planner::ConnectorSpec DatagenConnectorSpec() {
  planner::ConnectorSpec spec;
  spec.name = "datagen";
  spec.replayable_source = true;
  spec.validate_source = [](const std::map<std::string, std::string>& options,
                            const std::vector<planner::Column>& columns,
                            const std::string& format) {
    planner::RefuseFormat("datagen", format);
    DatagenOptions::Parse(options, columns);
  };
  return spec;
}

}  // namespace stave::executor
