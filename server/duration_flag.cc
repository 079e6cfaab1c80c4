#include "server/duration_flag.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace stave::server {

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  std::string copy(text);
  if (copy.empty()) return std::nullopt;
  char* end = nullptr;
  double number = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || !std::isfinite(number) || number < 0) return std::nullopt;
  std::string_view unit(end);
  double millis;
  if (unit.empty() || unit == "s") {
    millis = number * 1000;
  } else if (unit == "ms") {
    millis = number;
  } else if (unit == "m" || unit == "min") {
    millis = number * 60'000;
  } else {
    return std::nullopt;
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(millis)));
}

}  // namespace stave::server
