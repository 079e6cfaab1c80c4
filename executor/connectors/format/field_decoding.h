#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/data_type.h"
#include "executor/chunk.h"

// What the JSON and CSV decoders share: range checks, undoing a half-decoded record, and the
// wording of their one-line errors.

namespace stave::executor {

/// Whether `value` fits an integer column of `type` (smallint, integer or bigint).
bool IntegerFitsType(int64_t value, DataType type);

/// Removes the last value appended to `column`, so that a decoder can leave a chunk as it
/// was when a later field of the record turns out to be bad. REQUIRES: column->size() > 0.
void RemoveLastValue(Column* column);

/// The most bytes an error message quotes of a text (between the quotes, escapes included);
/// longer texts are cut.
inline constexpr size_t kMaxQuotedBytes = 48;

/// Appends `text` in double quotes, fit for a one-line error message: quotes, backslashes,
/// control characters and bytes that are not UTF-8 escaped (\", \\, \n, \x01), and cut
/// after at most kMaxQuotedBytes, at a character boundary, with "..." after the closing quote
/// marking the cut.
void AppendQuotedForError(std::string_view text, std::string* out);

/// The type's name with its article, as errors say "expected a bigint", "an integer".
std::string TypeWithArticle(DataType type);

/// Appends the value of ISO text `text` (PostgreSQL's input forms) to a temporal column, as
/// a cast from text would; on a bad text sets `*error` (`field "name": invalid input syntax
/// for type date: "x"`) and returns false with `out` untouched.
bool DecodeTemporalText(std::string_view name, DataType type, std::string_view text, Column* out,
                        std::string* error);

/// Appends the value of `text` in PostgreSQL's text input format to a column of any type
/// (bytea, jsonb, arrays, temporal types), as a cast from text would; on a bad text sets
/// `*error` as DecodeTemporalText does and returns false with `out` untouched.
bool DecodeTextByCast(std::string_view name, DataType type, std::string_view text, Column* out,
                      std::string* error);

/// Appends milliseconds since 1970-01-01 UTC to a timestamp or timestamptz column; false
/// with `*error` set if out of range.
bool DecodeEpochMillis(std::string_view name, DataType type, int64_t millis, Column* out,
                       std::string* error);

/// Replaces `*error` with the start of an error about one field: `field "name": `.
void StartFieldError(std::string_view name, std::string* error);

}  // namespace stave::executor
