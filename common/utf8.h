#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stave {

/// The length (1 to 4) of the well-formed UTF-8 sequence that starts at `text[pos]`, or 0 if
/// the bytes there are not one: a stray continuation byte, a truncated sequence, an overlong
/// form, a surrogate (U+D800..U+DFFF) or a code point past U+10FFFF (Unicode's table 3-7).
/// NUL is a sequence of length 1 here; callers that refuse it check for it.
/// REQUIRES: pos < text.size().
inline size_t Utf8SequenceLength(std::string_view text, size_t pos) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[pos + i]); };
  auto continuation = [&](size_t i, unsigned char low, unsigned char high) {
    return pos + i < text.size() && byte(i) >= low && byte(i) <= high;
  };
  unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(1, 0x80, 0xBF) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    unsigned char low = lead == 0xE0 ? 0xA0 : 0x80;   // Overlong below U+0800.
    unsigned char high = lead == 0xED ? 0x9F : 0xBF;  // Surrogates.
    return continuation(1, low, high) && continuation(2, 0x80, 0xBF) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    unsigned char low = lead == 0xF0 ? 0x90 : 0x80;   // Overlong below U+10000.
    unsigned char high = lead == 0xF4 ? 0x8F : 0xBF;  // Past U+10FFFF.
    return continuation(1, low, high) && continuation(2, 0x80, 0xBF) && continuation(3, 0x80, 0xBF)
               ? 4
               : 0;
  }
  return 0;
}

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
