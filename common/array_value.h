#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"
#include "common/value.h"

/// One-dimensional SQL arrays, held as strings (see data_type.h): each element as a marker
/// byte (0x01 a value, 0x02 NULL) and, for a value, an order-preserving encoding of it
/// (integers and temporal values big-endian with the sign bit flipped, doubles by their
/// ordered bits, strings with 0x00 escaped as 0x00 0xFF and ended by 0x00 0x00), then 0x00
/// after the last element. Comparing two encodings byte by byte therefore orders arrays as
/// PostgreSQL does: element by element, NULL above every value, a prefix before the longer
/// array; and equal arrays have equal bytes, so hashing and grouping need nothing new.
namespace stave::array {

/// The encoding of `elements`, values of `element_type` or NULL.
std::string Encode(const std::vector<Value>& elements, DataType element_type);
/// The elements of an encoded array.
std::vector<Value> Decode(std::string_view encoded, DataType element_type);
/// The number of elements of an encoded array.
size_t Length(std::string_view encoded, DataType element_type);

/// PostgreSQL's text output: `{1,2,NULL}`, elements quoted when empty, when they are the word
/// NULL, or hold braces, commas, quotes, backslashes or white space (`{"a b","x\"y"}`).
std::string FormatText(std::string_view encoded, DataType element_type);
/// Parses PostgreSQL's array text input (`{1, 2, NULL}`, `{"a b",c}`) into an encoding.
/// Throws SqlError 22P02 for a malformed literal or a bad element, 0A000 for nested braces
/// (multidimensional arrays).
std::string ParseText(std::string_view text, DataType element_type);

}  // namespace stave::array
