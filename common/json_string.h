#pragma once

#include <string>
#include <string_view>

namespace stave {

/// Appends `text` as a JSON string (RFC 8259): in double quotes, with '"' and '\' escaped,
/// control characters as \b \f \n \r \t or \u00XX, and every byte that is not part of
/// well-formed UTF-8 replaced by U+FFFD, so that the output is always valid JSON. Used
/// wherever JSON is written by hand: jsonb's canonical text, the JSON sinks and log format.
void AppendJsonString(std::string_view text, std::string* out);

}  // namespace stave
