#pragma once

#include <memory>
#include <vector>

#include "executor/connectors/format/record_decoder.h"

namespace stave::executor {

/// Objects deeper than this (the record itself is depth 1) are refused; simdjson's own DOM
/// parser stops at the same depth.
inline constexpr int kMaxJsonDepth = 1024;

/// A decoder for FORMAT JSON (simdjson On Demand). A record is one JSON object (RFC 8259).
///
/// - Fields match payload columns by exact name; fields no column has are ignored (but must
///   still be valid JSON). A missing field, or JSON null, gives NULL. If a field appears more
///   than once, the last one wins, as in JavaScript's JSON.parse.
/// - Strict types: boolean takes true/false; smallint/integer/bigint take a JSON integer
///   (no fraction, no exponent) within the column's range; real/double precision take any
///   JSON number within range (real: rounded to single precision), and also the strings
///   "NaN", "Infinity" and "-Infinity", which the JSON encoder writes for those values;
///   varchar takes a string's content, or the JSON text of a number, boolean, object or
///   array as it appears in the record (as Flink's JSON format does).
/// - Whatever the bytes are (empty, truncated, not UTF-8, lone surrogate escapes, nesting
///   deeper than kMaxJsonDepth, numbers of any size, trailing content after the object),
///   the record either decodes or is refused with an error; every value in the record is
///   checked, not just those of the columns.
std::unique_ptr<RecordDecoder> MakeJsonDecoder(std::vector<PayloadColumn> columns);

}  // namespace stave::executor
