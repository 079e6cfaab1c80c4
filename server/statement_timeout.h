#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace stave::server {

/// Reads a value of PostgreSQL's statement_timeout: milliseconds, or a number with a unit
/// (us, ms, s, min, h, d; "1.5s", "500 ms"); 0 disables it. Throws SqlError 22023 with
/// PostgreSQL's messages for anything else or a value out of 0 .. 2147483647 ms.
std::chrono::milliseconds ParseStatementTimeout(std::string_view value, int position);

/// How SHOW statement_timeout prints `timeout`, as PostgreSQL does: in the largest unit that
/// divides it ("5s", "1500ms", "1min"), "0" when disabled.
std::string FormatStatementTimeout(std::chrono::milliseconds timeout);

}  // namespace stave::server
