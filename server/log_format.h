#pragma once

#include <string_view>

namespace stave::server {

/// Makes spdlog's default logger write one JSON object per line: {"time": "...Z", "level":
/// "info", "thread": 123, "message": "..."}, the message escaped as a JSON string, so that log
/// shippers need no parsing rules. Call before logging starts.
void UseJsonLogFormat();

}  // namespace stave::server
