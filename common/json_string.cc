#include "common/json_string.h"

#include <array>

#include "common/utf8.h"

namespace stave {
namespace {

// The bytes a JSON string cannot hold as they are: control characters, '"', '\', and every
// byte of a multi-byte UTF-8 sequence (checked for well-formedness one sequence at a time).
constexpr std::array<bool, 256> kSpecial = [] {
  std::array<bool, 256> special{};
  for (int c = 0; c < 256; ++c) special[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  return special;
}();

}  // namespace

void AppendJsonString(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t pos = 0;
  while (pos < text.size()) {
    // Copy the longest run that needs no escaping in one go.
    size_t run = pos;
    while (run < text.size() && !kSpecial[static_cast<unsigned char>(text[run])]) ++run;
    out->append(text.data() + pos, run - pos);
    pos = run;
    if (pos == text.size()) break;
    unsigned char c = static_cast<unsigned char>(text[pos]);
    if (c >= 0x80) {
      size_t length = Utf8SequenceLength(text, pos);
      if (length == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
        ++pos;
      } else {
        out->append(text.data() + pos, length);
        pos += length;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xF]);
        break;
    }
    ++pos;
  }
  out->push_back('"');
}

}  // namespace stave
