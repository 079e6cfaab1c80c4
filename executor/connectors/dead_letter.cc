#include "executor/connectors/dead_letter.h"

#include "common/utf8.h"
#include "storage/key_codec.h"

namespace stave::executor {
namespace {

bool IsValidUtf8WithoutNul(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t length = text[i] == '\0' ? 0 : Utf8SequenceLength(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

}  // namespace

std::string EncodeDeadLetter(const DeadLetter& letter) {
  std::string bytes;
  bytes.reserve(4 + letter.error.size() + letter.raw.size());
  storage::AppendBigEndian32(static_cast<uint32_t>(letter.error.size()), &bytes);
  bytes.append(letter.error);
  bytes.append(letter.raw);
  return bytes;
}

bool DecodeDeadLetter(std::string_view bytes, DeadLetter* letter) {
  if (bytes.size() < 4) return false;
  uint32_t error_bytes = storage::ReadBigEndian32(bytes);
  bytes.remove_prefix(4);
  if (bytes.size() < error_bytes) return false;
  letter->error.assign(bytes.substr(0, error_bytes));
  letter->raw.assign(bytes.substr(error_bytes));
  return true;
}

std::string RawBytesAsText(std::string_view bytes) {
  if (IsValidUtf8WithoutNul(bytes)) return std::string(bytes);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "\\x";
  text.reserve(2 + 2 * bytes.size());
  for (char c : bytes) {
    auto byte = static_cast<uint8_t>(c);
    text.push_back(kHex[byte >> 4]);
    text.push_back(kHex[byte & 0x0F]);
  }
  return text;
}

}  // namespace stave::executor
