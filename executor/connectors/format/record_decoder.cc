#include "executor/connectors/format/record_decoder.h"

#include <fmt/format.h>

#include "common/sql_error.h"
#include "executor/connectors/format/bytes_decoder.h"
#include "executor/connectors/format/csv_decoder.h"
#include "executor/connectors/format/json_decoder.h"

namespace stave::executor {

std::unique_ptr<RecordDecoder> MakeRecordDecoder(
    std::string_view format, std::vector<PayloadColumn> columns,
    const std::map<std::string, std::string>& format_options) {
  for (const PayloadColumn& column : columns) {
    if (column.type.id == TypeId::kUnknown) {
      throw SqlError(sqlstate::kInternalError,
                     fmt::format("payload column \"{}\" has no type", column.name));
    }
  }
  std::string lower;
  for (char c : format)
    lower.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  if (lower == "json") {
    if (!format_options.empty()) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("unknown format option '{}': FORMAT JSON takes no options",
                                 format_options.begin()->first));
    }
    return MakeJsonDecoder(std::move(columns));
  }
  if (lower == "csv") return MakeCsvDecoder(std::move(columns), format_options);
  if (lower == "bytes") return MakeBytesDecoder(std::move(columns), format_options);
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("unknown format '{}' (known: JSON, CSV, BYTES)", format));
}

}  // namespace stave::executor
