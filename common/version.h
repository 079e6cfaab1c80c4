#pragma once

#include <string_view>

namespace stave {

/// Stave's own version.
inline constexpr std::string_view kStaveVersion = "0.1.0";
/// The PostgreSQL version Stave speaks as (server_version): clients pick features by it.
inline constexpr std::string_view kPostgresVersion = "15.18";
/// What `SELECT version()` returns; clients parse the leading "PostgreSQL X.Y".
inline constexpr std::string_view kVersionString =
    "PostgreSQL 15.18 (Stave 0.1.0) on x86_64-pc-linux-gnu, a streaming SQL database";

}  // namespace stave
