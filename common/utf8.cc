#include "common/utf8.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "common/sql_error.h"

namespace stave {
namespace {

constexpr std::string_view kCharacterNotInRepertoire = "22021";

// Returns the length of the valid UTF-8 sequence at the start of `text`, or 0 if it is not
// valid. Overlong forms, surrogates, code points beyond U+10FFFF and NUL are invalid, as in
// PostgreSQL.
size_t ValidUtf8SequenceLength(std::string_view text) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  auto continuation = [&](size_t i) { return i < text.size() && (byte(i) & 0xC0) == 0x80; };
  unsigned char lead = byte(0);
  if (lead == 0) return 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (lead == 0xE0 && byte(1) < 0xA0) return 0;   // Overlong.
    if (lead == 0xED && byte(1) >= 0xA0) return 0;  // UTF-16 surrogate.
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (lead == 0xF0 && byte(1) < 0x90) return 0;   // Overlong.
    if (lead == 0xF4 && byte(1) >= 0x90) return 0;  // Beyond U+10FFFF.
    return 4;
  }
  return 0;
}

}  // namespace

void CheckUtf8(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size()) {
    size_t length = ValidUtf8SequenceLength(sql.substr(i));
    if (length > 0) {
      i += length;
      continue;
    }
    // Like PostgreSQL, show the bytes the lead byte announces (at least one).
    unsigned char lead = static_cast<unsigned char>(sql[i]);
    size_t shown = (lead & 0xE0) == 0xC0   ? 2
                   : (lead & 0xF0) == 0xE0 ? 3
                   : (lead & 0xF8) == 0xF0 ? 4
                                           : 1;
    std::string bytes;
    for (size_t j = i; j < sql.size() && j < i + shown; ++j) {
      if (!bytes.empty()) bytes += ' ';
      bytes += fmt::format("0x{:02x}", static_cast<unsigned char>(sql[j]));
    }
    throw SqlError(kCharacterNotInRepertoire,
                   "invalid byte sequence for encoding \"UTF8\": " + bytes);
  }
}

void AppendUtf8(uint32_t code, std::string* out) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

size_t Utf8Length(std::string_view text) {
  size_t length = 0;
  for (char c : text) length += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return length;
}

std::string_view Utf8Prefix(std::string_view text, size_t characters) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    // A character starts at every byte that is not a continuation byte (10xxxxxx).
    if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80 && seen++ == characters) {
      return text.substr(0, i);
    }
  }
  return text;
}

}  // namespace stave
