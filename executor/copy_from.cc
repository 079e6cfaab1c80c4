#include "executor/copy_from.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/sql_error.h"
#include "common/value_cast.h"

namespace stave::executor {
namespace {

constexpr std::string_view kBadCopyFileFormat = "22P04";

// PostgreSQL quotes at most this much of a line or value in an error's CONTEXT.
constexpr size_t kMaxQuotedBytes = 100;

std::string Quoted(std::string_view text) {
  if (text.size() <= kMaxQuotedBytes) return fmt::format("\"{}\"", text);
  size_t cut = kMaxQuotedBytes;
  // Never cut a UTF-8 character in two.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("\"{}...\"", text.substr(0, cut));
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

CopyFrom::CopyFrom(DmlExecutor dml, std::shared_ptr<Table> table, std::vector<size_t> targets,
                   CopyFormat format, Transaction* transaction)
    : dml_(std::move(dml)),
      table_(std::move(table)),
      targets_(std::move(targets)),
      format_(std::move(format)),
      transaction_(transaction),
      writes_(transaction->For(table_)) {}

void CopyFrom::Feed(std::string_view data) {
  if (ended_) return;
  pending_.append(data);
  DecodeLines(false);
}

uint64_t CopyFrom::Finish() {
  if (!ended_) DecodeLines(true);
  if (!ended_ && line_start_ < pending_.size()) {
    // Only an open CSV quote keeps a line from ending at the end of the data.
    line_number_ += 1 + quoted_line_breaks_;
    throw InLine(SqlError(kBadCopyFileFormat, "unterminated CSV quoted field"),
                 std::string_view(pending_).substr(line_start_));
  }
  return rows_;
}

std::string CopyFrom::Context() const {
  return fmt::format("COPY {}, line {}", table_->object().name, line_number_ + 1);
}

void CopyFrom::DecodeLines(bool at_end) {
  while (!ended_) {
    std::optional<size_t> end = FindLineEnd(at_end);
    if (!end) break;
    line_number_ += 1 + quoted_line_breaks_;
    quoted_line_breaks_ = 0;
    AddLine(std::string_view(pending_).substr(line_start_, *end - line_start_));
    line_start_ = scanned_ = next_line_;
  }
  // Keep only the line not complete yet: the memory held is one line, not the input.
  pending_.erase(0, line_start_);
  scanned_ -= line_start_;
  line_start_ = 0;
}

std::optional<size_t> CopyFrom::FindLineEnd(bool at_end) {
  size_t size = pending_.size();
  size_t i = scanned_;
  while (i < size) {
    char c = pending_[i];
    if (!format_.csv && c == '\\') {
      // A backslash quotes the next character, a line end too.
      if (i + 1 >= size && !at_end) break;
      i = std::min(i + 2, size);
      continue;
    }
    if (format_.csv && in_quote_) {
      if (c == format_.escape && format_.escape != format_.quote) {
        if (i + 1 >= size && !at_end) break;
        if (i + 1 < size &&
            (pending_[i + 1] == format_.quote || pending_[i + 1] == format_.escape)) {
          i += 2;
          continue;
        }
      }
      if (c == format_.quote) in_quote_ = false;
      // PostgreSQL counts the line breaks inside quoted fields as lines.
      if (c == '\n') ++quoted_line_breaks_;
      ++i;
      continue;
    }
    if (format_.csv && c == format_.quote) {
      in_quote_ = true;
      ++i;
      continue;
    }
    if (c == '\n') {
      scanned_ = i;
      next_line_ = i + 1;
      return i;
    }
    if (c == '\r') {
      if (i + 1 >= size && !at_end) break;  // "\r\n" may be split between two messages.
      scanned_ = i;
      next_line_ = (i + 1 < size && pending_[i + 1] == '\n') ? i + 2 : i + 1;
      return i;
    }
    ++i;
  }
  scanned_ = i;
  if (at_end && i == size && i > line_start_ && !in_quote_) {
    next_line_ = size;  // The last line needs no line end.
    return size;
  }
  return std::nullopt;
}

void CopyFrom::AddLine(std::string_view line) {
  if (line == "\\.") {  // PostgreSQL's end-of-data marker.
    ended_ = true;
    return;
  }
  if (format_.header && !header_skipped_) {
    header_skipped_ = true;
    return;
  }
  if (format_.csv) {
    SplitCsv(line);
  } else {
    SplitText(line);
  }
  const planner::CatalogObject& object = table_->object();
  if (fields_.size() < targets_.size()) {
    throw InLine(
        SqlError(kBadCopyFileFormat, fmt::format("missing data for column \"{}\"",
                                                 object.columns[targets_[fields_.size()]].name)),
        line);
  }
  if (fields_.size() > targets_.size()) {
    throw InLine(SqlError(kBadCopyFileFormat, "extra data after last expected column"), line);
  }
  std::vector<Value> row(object.columns.size());
  for (size_t i = 0; i < targets_.size(); ++i) {
    if (!fields_[i]) continue;
    const planner::Column& column = object.columns[targets_[i]];
    try {
      row[targets_[i]] = CastValue(Value::String(*fields_[i]), TypeId::kVarchar, column.type);
    } catch (const SqlError& error) {
      throw InLine(error, line, &column.name, &fields_[i]);
    }
  }
  try {
    dml_.AddInsert(writes_, transaction_, std::move(row), 0);
  } catch (const SqlError& error) {
    throw InLine(error, line);
  }
  ++rows_;
}

// PostgreSQL's CopyReadAttributesText: fields split at unescaped delimiters; backslash
// sequences (\t, \n, \\, octal \ooo, hex \xhh, else the character itself) are decoded; a
// field whose raw text is the NULL string is NULL.
void CopyFrom::SplitText(std::string_view line) {
  fields_.clear();
  size_t i = 0;
  while (true) {
    size_t start = i;
    std::string value;
    bool delimiter_found = false;
    while (i < line.size()) {
      char c = line[i++];
      if (c == format_.delimiter) {
        delimiter_found = true;
        break;
      }
      if (c == '\\') {
        if (i >= line.size()) break;
        c = line[i++];
        if (c >= '0' && c <= '7') {
          int code = c - '0';
          for (int digits = 1; digits < 3 && i < line.size() && line[i] >= '0' && line[i] <= '7';
               ++digits) {
            code = code * 8 + (line[i++] - '0');
          }
          c = static_cast<char>(code & 0xFF);
        } else if (c == 'x' && i < line.size() && HexDigit(line[i]) >= 0) {
          int code = HexDigit(line[i++]);
          if (i < line.size() && HexDigit(line[i]) >= 0) code = code * 16 + HexDigit(line[i++]);
          c = static_cast<char>(code);
        } else {
          switch (c) {
            case 'b':
              c = '\b';
              break;
            case 'f':
              c = '\f';
              break;
            case 'n':
              c = '\n';
              break;
            case 'r':
              c = '\r';
              break;
            case 't':
              c = '\t';
              break;
            case 'v':
              c = '\v';
              break;
            default:
              break;
          }
        }
      }
      value += c;
    }
    size_t raw_end = delimiter_found ? i - 1 : i;
    if (line.substr(start, raw_end - start) == format_.null_string) {
      fields_.emplace_back(std::nullopt);
    } else {
      fields_.emplace_back(std::move(value));
    }
    if (!delimiter_found) return;
  }
}

// PostgreSQL's CopyReadAttributesCSV: quotes may open and close anywhere in a field; inside
// them the escape character takes the next quote or escape literally; an unquoted field
// whose raw text is the NULL string is NULL (a quoted "" is the empty string).
void CopyFrom::SplitCsv(std::string_view line) {
  fields_.clear();
  size_t i = 0;
  while (true) {
    size_t start = i;
    std::string value;
    bool delimiter_found = false;
    bool saw_quote = false;
    while (i < line.size()) {
      char c = line[i++];
      if (c == format_.delimiter) {
        delimiter_found = true;
        break;
      }
      if (c != format_.quote) {
        value += c;
        continue;
      }
      saw_quote = true;
      while (true) {
        if (i >= line.size()) {
          throw InLine(SqlError(kBadCopyFileFormat, "unterminated CSV quoted field"), line);
        }
        c = line[i++];
        if (c == format_.escape && i < line.size() &&
            (line[i] == format_.escape || line[i] == format_.quote)) {
          value += line[i++];
          continue;
        }
        if (c == format_.quote) break;
        value += c;
      }
    }
    size_t raw_end = delimiter_found ? i - 1 : i;
    if (!saw_quote && line.substr(start, raw_end - start) == format_.null_string) {
      fields_.emplace_back(std::nullopt);
    } else {
      fields_.emplace_back(std::move(value));
    }
    if (!delimiter_found) return;
  }
}

SqlError CopyFrom::InLine(const SqlError& error, std::string_view line, const std::string* column,
                          const std::optional<std::string>* value) const {
  // The error is about the data, not the statement's text: no position.
  SqlError placed(error.sqlstate(), error.what());
  placed.WithDetail(error.detail()).WithHint(error.hint());
  std::string context = fmt::format("COPY {}, line {}", table_->object().name, line_number_);
  if (column != nullptr) {
    context += fmt::format(", column {}: ", *column);
    context += (value != nullptr && *value) ? Quoted(**value) : "null input";
  } else if (error.sqlstate() != "23505") {  // PostgreSQL names only the line for a key.
    context += ": " + Quoted(line);
  }
  placed.WithContext(std::move(context));
  return placed;
}

}  // namespace stave::executor
