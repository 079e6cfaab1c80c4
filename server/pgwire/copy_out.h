#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/copy_format.h"
#include "common/value.h"
#include "executor/query_result.h"

namespace stave::server::pgwire {

/// One line of COPY ... TO STDOUT output, newline included, byte for byte as PostgreSQL
/// writes it: in text format values are separated by the delimiter, NULL is the null
/// string, and backslash, the delimiter and control characters are escaped (\t, \n, \\, ...);
/// in CSV a value is quoted when it holds the delimiter, the quote, a newline or a carriage
/// return, or equals the null string (so it reads back as itself, not as NULL).
std::string CopyOutLine(const std::vector<Value>& row,
                        const std::vector<executor::ResultColumn>& columns,
                        const CopyFormat& format);

/// The HEADER line: the column names, escaped or quoted as values are.
std::string CopyHeaderLine(const std::vector<executor::ResultColumn>& columns,
                           const CopyFormat& format);

}  // namespace stave::server::pgwire
