#include "server/flag_values.h"

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

std::optional<size_t> ParseByteSize(std::string_view text) {
  std::string copy(text);
  if (copy.empty()) return std::nullopt;
  char* end = nullptr;
  double number = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || !std::isfinite(number) || number < 0) return std::nullopt;
  std::string unit(end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double factor;
  if (unit.empty() || unit == "B") {
    factor = 1;
  } else if (unit == "KB" || unit == "K") {
    factor = 1024.0;
  } else if (unit == "MB" || unit == "M") {
    factor = 1024.0 * 1024;
  } else if (unit == "GB" || unit == "G") {
    factor = 1024.0 * 1024 * 1024;
  } else {
    return std::nullopt;
  }
  double bytes = number * factor;
  // Converting a double at or past 2^64 to size_t is undefined: such a size is no size.
  if (bytes >= 18446744073709551616.0) return std::nullopt;
  return static_cast<size_t>(bytes);
}

}  // namespace stave::server
