#include "common/utf8.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "common/sql_error.h"

namespace stave {
namespace {

constexpr std::string_view kCharacterNotInRepertoire = "22021";

}  // namespace

void CheckUtf8(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size()) {
    size_t length = sql[i] == '\0' ? 0 : Utf8SequenceLength(sql, i);
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
