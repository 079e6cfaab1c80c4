#pragma once

#include <string>
#include <string_view>

namespace stave {

/// Appends `text` as a JSON string: in double quotes, with quotes, backslashes and control
/// characters escaped. Used wherever JSON is written by hand (jsonb's canonical text, the
/// JSON log format).
void AppendJsonString(std::string_view text, std::string* out);

}  // namespace stave
