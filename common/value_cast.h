#pragma once

#include <string_view>

#include "common/data_type.h"
#include "common/value.h"

namespace stave {

/// Converts a non-null value of type `from` to type `to` with PostgreSQL's rules: text
/// parses (" 42 " is 42, "1.5" is not an integer), float → integer rounds half to even,
/// integer narrowing checks the range. Throws SqlError 22P02 (bad text) or 22003 (out of
/// range); 42846 if there is no cast between the two types.
Value CastValue(const Value& value, DataType from, DataType to);

/// What an explicit cast to varchar(n) `to` makes of the text `value`: its first n
/// characters, as PostgreSQL cuts them. A NULL stays NULL; without a length, the value.
Value CutToLength(const Value& value, DataType to);

/// What a varchar(n) column `to` stores of `value` on INSERT, UPDATE and COPY: the value
/// when it has at most n characters; else, when only spaces are past the n-th, its first n
/// (PostgreSQL's rule); else throws 22001 ("value too long for type character varying(n)").
Value FitLength(const Value& value, DataType to);

/// Whether CastValue can convert between the types (explicit CAST).
bool CanCast(DataType from, DataType to);

/// Whether PostgreSQL converts `from` to `to` implicitly (in expressions): date → timestamp
/// and timestamptz, timestamp → timestamptz, time → interval.
bool IsImplicitTemporalCast(DataType from, DataType to);
/// Whether it does so on assignment (INSERT into a column): the implicit casts, plus
/// timestamp(tz) → date, time and the other timestamp type.
bool IsAssignmentTemporalCast(DataType from, DataType to);

/// Throws 22003 unless `value` fits the integer type `type`.
void CheckIntegerRange(int64_t value, DataType type);

}  // namespace stave
