#pragma once

#include <string>
#include <string_view>

/// PostgreSQL's bytea text formats and the encodings of encode()/decode(). A bytea value is
/// held as its bytes in a std::string (see data_type.h).
namespace stave::bytea {

/// Parses bytea input: the hex format (`\xDEADBEEF`, whitespace allowed between digit pairs)
/// or the escape format (bytes as written, `\\` for a backslash, `\ooo` octal). Throws
/// SqlError 22023 for bad hex digits, 22P02 for a bad escape.
std::string Parse(std::string_view text);

/// PostgreSQL's output (bytea_output = hex): `\x` then two lower-case hex digits a byte.
std::string Format(std::string_view bytes);

/// encode(bytes, format) for the formats 'hex', 'base64' (lines of 76 characters, as
/// PostgreSQL) and 'escape'. Throws SqlError 22023 for an unknown format.
std::string Encode(std::string_view bytes, std::string_view format);

/// decode(text, format), the inverse of Encode. Throws SqlError 22023 for an unknown format
/// or bad input in it (22P02 for a bad escape sequence).
std::string Decode(std::string_view text, std::string_view format);

/// The md5 digest of `bytes` as 32 lower-case hex digits, as PostgreSQL's md5().
std::string Md5Hex(std::string_view bytes);

}  // namespace stave::bytea
