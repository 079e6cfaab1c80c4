#include "server/pgwire/copy_out.h"

namespace stave::server::pgwire {
namespace {

// PostgreSQL's CopyAttributeOutText.
void AppendText(std::string_view value, const CopyFormat& format, std::string* line) {
  for (char c : value) {
    switch (c) {
      case '\b':
        *line += "\\b";
        continue;
      case '\f':
        *line += "\\f";
        continue;
      case '\n':
        *line += "\\n";
        continue;
      case '\r':
        *line += "\\r";
        continue;
      case '\t':
        *line += "\\t";
        continue;
      case '\v':
        *line += "\\v";
        continue;
      default:
        break;
    }
    if (c == '\\' || c == format.delimiter) *line += '\\';
    *line += c;
  }
}

// PostgreSQL's CopyAttributeOutCSV. `only_column`: the value is a whole line's only field,
// where "\." would read as the end of data.
void AppendCsv(std::string_view value, const CopyFormat& format, bool only_column,
               std::string* line) {
  bool quote = (value == format.null_string) || (only_column && value == "\\.");
  if (!quote) {
    for (char c : value) {
      if (c == format.delimiter || c == format.quote || c == '\n' || c == '\r') {
        quote = true;
        break;
      }
    }
  }
  if (!quote) {
    *line += value;
    return;
  }
  *line += format.quote;
  for (char c : value) {
    if (c == format.quote || c == format.escape) *line += format.escape;
    *line += c;
  }
  *line += format.quote;
}

void AppendField(std::string_view value, const CopyFormat& format, bool only_column,
                 std::string* line) {
  if (format.csv) {
    AppendCsv(value, format, only_column, line);
  } else {
    AppendText(value, format, line);
  }
}

}  // namespace

std::string CopyOutLine(const std::vector<Value>& row,
                        const std::vector<executor::ResultColumn>& columns,
                        const CopyFormat& format) {
  std::string line;
  for (size_t i = 0; i < row.size(); ++i) {
    if (i > 0) line += format.delimiter;
    if (row[i].is_null()) {
      line += format.null_string;
    } else {
      AppendField(row[i].ToText(columns[i].type), format, row.size() == 1, &line);
    }
  }
  line += '\n';
  return line;
}

std::string CopyHeaderLine(const std::vector<executor::ResultColumn>& columns,
                           const CopyFormat& format) {
  std::string line;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) line += format.delimiter;
    AppendField(columns[i].name, format, false, &line);
  }
  line += '\n';
  return line;
}

}  // namespace stave::server::pgwire
