#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "executor/connectors/format/record_decoder.h"

namespace stave::executor {

/// A decoder for FORMAT CSV: a record is one line of RFC 4180 CSV.
///
/// - One field per payload column, in the columns' order; any other count is an error.
/// - Fields are separated by ',' or by the one ASCII character of the option
///   `csv.delimiter` ('\t' may be written as the two characters backslash and t). A field
///   that starts with '"' is quoted: it runs to the next lone '"', "" inside stands for one
///   '"', and it may hold delimiters and line breaks. An unquoted field must not contain
///   '"' or a line break. Spaces are part of fields.
/// - An unquoted empty field is NULL; a quoted empty field ("") is the empty string.
/// - Text becomes the column's type with std::from_chars (an optional leading '+' aside):
///   integers within the column's range; real/double precision as from_chars reads them,
///   "inf" and "nan" included, within range (real: rounded to single precision); booleans
///   are true/false/t/f/1/0 in any case; varchar takes the text as it is.
/// - One trailing "\r\n" or "\n" is ignored. An empty record is a single unquoted empty
///   field, as PostgreSQL's COPY reads it.
///
/// Throws SqlError(22023) for an unknown option or a bad delimiter.
std::unique_ptr<RecordDecoder> MakeCsvDecoder(std::vector<PayloadColumn> columns,
                                              const std::map<std::string, std::string>& options);

}  // namespace stave::executor
