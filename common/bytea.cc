#include "common/bytea.h"

#include <openssl/evp.h>

#include <cctype>
#include <cstdint>

#include "common/sql_error.h"

namespace stave::bytea {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";
constexpr char kBase64Digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// PostgreSQL's hex_decode: pairs of digits, whitespace skipped between pairs.
std::string DecodeHex(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 2);
  size_t i = 0;
  while (i < text.size()) {
    if (IsSpace(text[i])) {
      ++i;
      continue;
    }
    int high = HexValue(text[i]);
    if (high < 0) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "invalid hexadecimal digit: \"" + std::string(1, text[i]) + "\"");
    }
    if (i + 1 >= text.size()) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "invalid hexadecimal data: odd number of digits");
    }
    int low = HexValue(text[i + 1]);
    if (low < 0) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "invalid hexadecimal digit: \"" + std::string(1, text[i + 1]) + "\"");
    }
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

bool IsOctal(char c) { return c >= '0' && c <= '7'; }

// The escape format: `\\` is a backslash, `\ooo` (first digit 0-3) an octal byte.
std::string DecodeEscape(std::string_view text, std::string_view type_name) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '\\') {
      out.push_back(text[i++]);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '\\') {
      out.push_back('\\');
      i += 2;
      continue;
    }
    if (i + 3 < text.size() + 0 && text[i + 1] >= '0' && text[i + 1] <= '3' &&
        IsOctal(text[i + 2]) && IsOctal(text[i + 3])) {
      out.push_back(static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 +
                                      text[i + 3] - '0'));
      i += 4;
      continue;
    }
    throw SqlError(sqlstate::kInvalidTextRepresentation,
                   "invalid input syntax for type " + std::string(type_name));
  }
  return out;
}

std::string EncodeBase64(std::string_view bytes) {
  std::string out;
  size_t line = 0;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t chunk = static_cast<uint8_t>(bytes[i]) << 16;
    size_t available = bytes.size() - i;
    if (available > 1) chunk |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (available > 2) chunk |= static_cast<uint8_t>(bytes[i + 2]);
    // PostgreSQL breaks base64 output into lines of 76 characters.
    if (line >= 76) {
      out.push_back('\n');
      line = 0;
    }
    out.push_back(kBase64Digits[(chunk >> 18) & 63]);
    out.push_back(kBase64Digits[(chunk >> 12) & 63]);
    out.push_back(available > 1 ? kBase64Digits[(chunk >> 6) & 63] : '=');
    out.push_back(available > 2 ? kBase64Digits[chunk & 63] : '=');
    line += 4;
  }
  return out;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// PostgreSQL's pg_base64_decode: whitespace is skipped, '=' ends the data.
std::string DecodeBase64(std::string_view text) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  int padding = 0;
  size_t significant = 0;
  for (char c : text) {
    if (IsSpace(c)) continue;
    if (c == '=') {
      // Padding is allowed only where a group of four ends one or two characters short.
      ++padding;
      if (padding > 2 || (significant % 4) + padding > 4 || significant % 4 < 2) {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       "unexpected \"=\" while decoding base64 sequence");
      }
      continue;
    }
    int value = Base64Value(c);
    if (value < 0) {
      throw SqlError(
          sqlstate::kInvalidParameterValue,
          "invalid symbol \"" + std::string(1, c) + "\" found while decoding base64 sequence");
    }
    if (padding > 0) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "unexpected \"=\" while decoding base64 sequence");
    }
    ++significant;
    buffer = (buffer << 6) | static_cast<uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  if ((significant + padding) % 4 != 0) {
    throw SqlError(sqlstate::kInvalidParameterValue, "invalid base64 end sequence")
        .WithHint("Input data is missing padding, is truncated, or is otherwise corrupted.");
  }
  return out;
}

// encode(…, 'escape'): NUL, bytes with the high bit set and backslashes are escaped.
std::string EncodeEscape(std::string_view bytes) {
  std::string out;
  for (char c : bytes) {
    auto byte = static_cast<uint8_t>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (byte == 0 || byte >= 0x80) {
      out.push_back('\\');
      out.push_back(static_cast<char>('0' + (byte >> 6)));
      out.push_back(static_cast<char>('0' + ((byte >> 3) & 7)));
      out.push_back(static_cast<char>('0' + (byte & 7)));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

[[noreturn]] void ThrowUnknownFormat(std::string_view format) {
  throw SqlError(sqlstate::kInvalidParameterValue,
                 "unrecognized encoding: \"" + std::string(format) + "\"");
}

}  // namespace

std::string Parse(std::string_view text) {
  if (text.size() >= 2 && text[0] == '\\' && text[1] == 'x') return DecodeHex(text.substr(2));
  return DecodeEscape(text, "bytea");
}

std::string Format(std::string_view bytes) {
  std::string out = "\\x";
  out.reserve(2 + bytes.size() * 2);
  for (char c : bytes) {
    auto byte = static_cast<uint8_t>(c);
    out.push_back(kHexDigits[byte >> 4]);
    out.push_back(kHexDigits[byte & 15]);
  }
  return out;
}

std::string Encode(std::string_view bytes, std::string_view format) {
  if (format == "hex") return Format(bytes).substr(2);
  if (format == "base64") return EncodeBase64(bytes);
  if (format == "escape") return EncodeEscape(bytes);
  ThrowUnknownFormat(format);
}

std::string Decode(std::string_view text, std::string_view format) {
  if (format == "hex") return DecodeHex(text);
  if (format == "base64") return DecodeBase64(text);
  if (format == "escape") return DecodeEscape(text, "bytea");
  ThrowUnknownFormat(format);
}

std::string Md5Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_md5(), nullptr);
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHexDigits[digest[i] >> 4]);
    out.push_back(kHexDigits[digest[i] & 15]);
  }
  return out;
}

}  // namespace stave::bytea
