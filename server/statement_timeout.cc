#include "server/statement_timeout.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "common/sql_error.h"

namespace stave::server {
namespace {

constexpr int64_t kMaxMilliseconds = 2147483647;  // PostgreSQL's INT_MAX limit.

}  // namespace

std::chrono::milliseconds ParseStatementTimeout(std::string_view value, int position) {
  auto invalid = [&] {
    return SqlError(sqlstate::kInvalidParameterValue,
                    fmt::format("invalid value for parameter \"statement_timeout\": \"{}\"", value),
                    position)
        .WithHint(
            "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and "
            "\"d\".");
  };
  std::string copy(value);
  char* end = nullptr;
  double number = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end == copy.c_str() || !std::isfinite(number)) throw invalid();
  std::string_view unit(end);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) {
    unit.remove_prefix(1);
  }
  double milliseconds;
  if (unit.empty() || unit == "ms") {
    milliseconds = number;
  } else if (unit == "us") {
    milliseconds = number / 1000;
  } else if (unit == "s") {
    milliseconds = number * 1000;
  } else if (unit == "min") {
    milliseconds = number * 60'000;
  } else if (unit == "h") {
    milliseconds = number * 3'600'000;
  } else if (unit == "d") {
    milliseconds = number * 86'400'000;
  } else {
    throw invalid();
  }
  double rounded = std::nearbyint(milliseconds);
  if (rounded < 0 || rounded > static_cast<double>(kMaxMilliseconds)) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("{} ms is outside the valid range for parameter "
                               "\"statement_timeout\" (0 .. {})",
                               rounded, kMaxMilliseconds),
                   position);
  }
  return std::chrono::milliseconds(static_cast<int64_t>(rounded));
}

std::string FormatStatementTimeout(std::chrono::milliseconds timeout) {
  int64_t milliseconds = timeout.count();
  if (milliseconds == 0) return "0";
  constexpr std::array<std::pair<int64_t, std::string_view>, 4> kUnits = {
      {{86'400'000, "d"}, {3'600'000, "h"}, {60'000, "min"}, {1000, "s"}}};
  for (const auto& [size, name] : kUnits) {
    if (milliseconds % size == 0) return fmt::format("{}{}", milliseconds / size, name);
  }
  return fmt::format("{}ms", milliseconds);
}

}  // namespace stave::server
