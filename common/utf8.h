#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stave {

/// Throws SqlError 22021 ("invalid byte sequence for encoding \"UTF8\": 0xff", PostgreSQL's
/// message) unless `text` is valid UTF-8. Overlong forms, surrogates, code points beyond
/// U+10FFFF and NUL are invalid, as in PostgreSQL. Used for query strings and for text
/// values that arrive in binary form.
void CheckUtf8(std::string_view text);

/// Appends code point `code` (at most U+10FFFF) to `out` as UTF-8.
void AppendUtf8(uint32_t code, std::string* out);

/// The number of characters (code points) of UTF-8 `text`.
size_t Utf8Length(std::string_view text);

/// The first `characters` characters of UTF-8 `text` (all of it if it has fewer).
std::string_view Utf8Prefix(std::string_view text, size_t characters);

}  // namespace stave
