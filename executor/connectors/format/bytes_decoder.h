#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "executor/connectors/format/record_decoder.h"

namespace stave::executor {

/// A decoder for FORMAT BYTES: the record's value, whatever its bytes, lands unchanged in the
/// one payload column, which must be of type bytea. Every record decodes; an empty value is
/// an empty bytea (not NULL).
///
/// Throws SqlError(42P16) unless there is exactly one payload column and it is bytea, and
/// SqlError(22023) for any format option (BYTES has none).
std::unique_ptr<RecordDecoder> MakeBytesDecoder(std::vector<PayloadColumn> columns,
                                                const std::map<std::string, std::string>& options);

}  // namespace stave::executor
