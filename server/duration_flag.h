#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace stave::server {

/// Reads a duration such as "1s", "200ms", "2m", "1.5s" or "0" (a bare number is
/// seconds). Returns nullopt for anything else.
std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);

}  // namespace stave::server
