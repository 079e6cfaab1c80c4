#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

namespace stave::server {

/// Reads a duration such as "1s", "200ms", "2m", "1.5s" or "0" (a bare number is
/// seconds). Returns nullopt for anything else.
std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);

/// Reads a size such as "256MB", "1GB", "512kB" or "1048576" (bytes; units are powers of
/// 1024, as PostgreSQL's memory settings). Returns nullopt for anything else.
std::optional<size_t> ParseByteSize(std::string_view text);

}  // namespace stave::server
