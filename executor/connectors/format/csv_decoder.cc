#include "executor/connectors/format/csv_decoder.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string_view>

#include "common/sql_error.h"
#include "executor/connectors/format/field_decoding.h"

namespace stave::executor {
namespace {

bool EqualsIgnoringCase(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

// from_chars takes no '+', which PostgreSQL and most CSV writers allow. A sign after it
// ("+-1") stays an error.
std::string_view WithoutPlus(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  return text;
}

char ParseDelimiter(const std::string& value) {
  if (value == "\\t") return '\t';
  if (value.size() != 1 || static_cast<unsigned char>(value[0]) >= 0x80 || value[0] == '"' ||
      value[0] == '\r' || value[0] == '\n') {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("format option 'csv.delimiter' must be one ASCII character other "
                               "than a double quote or a line break, not '{}'",
                               value));
  }
  return value[0];
}

class CsvDecoder final : public RecordDecoder {
 public:
  CsvDecoder(std::vector<PayloadColumn> columns, char delimiter)
      : columns_(std::move(columns)), delimiter_(delimiter) {}

  bool Decode(std::string_view payload, Chunk* chunk, std::string* error) override {
    if (payload.ends_with("\r\n")) {
      payload.remove_suffix(2);
    } else if (payload.ends_with('\n')) {
      payload.remove_suffix(1);
    }
    if (!Split(payload, error)) return false;
    if (fields_.size() != columns_.size()) {
      error->assign(fmt::format("expected {} fields, got {}", columns_.size(), fields_.size()));
      return false;
    }
    for (size_t i = 0; i < columns_.size(); ++i) {
      const Field& field = fields_[i];
      std::string_view text = (field.unescaped ? std::string_view(unescaped_) : payload)
                                  .substr(field.offset, field.length);
      if (!DecodeField(columns_[i], text, field.quoted, &chunk->columns[columns_[i].index],
                       error)) {
        for (size_t j = 0; j < i; ++j) RemoveLastValue(&chunk->columns[columns_[j].index]);
        return false;
      }
    }
    return true;
  }

 private:
  // Where a field's text lies: in the record, or (for a quoted field with "" in it) in
  // unescaped_. Offsets rather than views, since unescaped_ may grow while splitting.
  struct Field {
    size_t offset;
    size_t length;
    bool quoted;
    bool unescaped;
  };

  // Fills fields_ with the record's fields.
  bool Split(std::string_view record, std::string* error) {
    fields_.clear();
    unescaped_.clear();
    size_t pos = 0;
    while (true) {
      size_t number = fields_.size() + 1;  // 1-based, for errors.
      if (pos < record.size() && record[pos] == '"') {
        size_t start = pos + 1;
        size_t scan = start;
        bool has_escapes = false;
        size_t close;
        while (true) {
          close = record.find('"', scan);
          if (close == std::string_view::npos) {
            error->assign(fmt::format("field {}: unterminated quoted field", number));
            return false;
          }
          if (close + 1 < record.size() && record[close + 1] == '"') {
            has_escapes = true;
            scan = close + 2;
            continue;
          }
          break;
        }
        if (has_escapes) {
          size_t offset = unescaped_.size();
          for (size_t i = start; i < close; ++i) {
            unescaped_.push_back(record[i]);
            if (record[i] == '"') ++i;  // The first of a pair; skip the second.
          }
          fields_.push_back({offset, unescaped_.size() - offset, true, true});
        } else {
          fields_.push_back({start, close - start, true, false});
        }
        pos = close + 1;
        if (pos == record.size()) return true;
        if (record[pos] != delimiter_) {
          error->assign(fmt::format(
              "field {}: a quoted field must end at a delimiter or the end of the record", number));
          return false;
        }
        ++pos;
        continue;
      }
      size_t end = pos;
      while (end < record.size() && record[end] != delimiter_) {
        char c = record[end];
        if (c == '"' || c == '\n' || c == '\r') {
          error->assign(fmt::format("field {}: ", number));
          error->append(c == '"' ? "a double quote inside an unquoted field"
                                 : "a line break inside an unquoted field (one record per line)");
          return false;
        }
        ++end;
      }
      fields_.push_back({pos, end - pos, false, false});
      if (end == record.size()) return true;
      pos = end + 1;
    }
  }

  // Appends the field's value to `out`; on false, `out` is untouched.
  static bool DecodeField(const PayloadColumn& column, std::string_view text, bool quoted,
                          Column* out, std::string* error) {
    if (text.empty() && !quoted) {
      out->AppendNull();
      return true;
    }
    switch (column.type.id) {
      case TypeId::kBoolean:
        for (std::string_view yes : {"true", "t", "1"}) {
          if (EqualsIgnoringCase(text, yes)) {
            out->AppendInt(1);
            return true;
          }
        }
        for (std::string_view no : {"false", "f", "0"}) {
          if (EqualsIgnoringCase(text, no)) {
            out->AppendInt(0);
            return true;
          }
        }
        break;
      case TypeId::kInt16:
      case TypeId::kInt32:
      case TypeId::kInt64: {
        std::string_view digits = WithoutPlus(text);
        int64_t number = 0;
        auto [end, code] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
        if (end != digits.data() + digits.size()) break;
        if (code == std::errc::result_out_of_range || !IntegerFitsType(number, column.type)) {
          return OutOfRange(column, text, error);
        }
        if (code != std::errc()) break;
        out->AppendInt(number);
        return true;
      }
      case TypeId::kFloat32:
      case TypeId::kFloat64: {
        std::string_view digits = WithoutPlus(text);
        double number = 0;
        auto [end, code] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
        if (end != digits.data() + digits.size()) break;
        if (code == std::errc::result_out_of_range) return OutOfRange(column, text, error);
        if (code != std::errc()) break;
        if (column.type.id == TypeId::kFloat32) {
          float single = static_cast<float>(number);
          if (std::isinf(single) && !std::isinf(number)) return OutOfRange(column, text, error);
          number = single;
        }
        out->AppendDouble(number);
        return true;
      }
      case TypeId::kVarchar:
        out->AppendString(std::string(text));
        return true;
      case TypeId::kDate:
      case TypeId::kTime:
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
      case TypeId::kInterval:
      case TypeId::kNumeric:  // Parsed as PostgreSQL parses its text, with the column's scale.
        return DecodeTemporalText(column.name, column.type, text, out, error);
      case TypeId::kBytea:
      case TypeId::kJsonb:
      case TypeId::kArray:
        return DecodeTextByCast(column.name, column.type, text, out, error);
      case TypeId::kUnknown:
        break;
    }
    StartFieldError(column.name, error);
    error->append("expected ").append(TypeWithArticle(column.type)).append(", got ");
    AppendQuotedForError(text, error);
    return false;
  }

  static bool OutOfRange(const PayloadColumn& column, std::string_view text, std::string* error) {
    StartFieldError(column.name, error);
    AppendQuotedForError(text, error);
    error->append(" is out of range for type ").append(column.type.Name());
    return false;
  }

  const std::vector<PayloadColumn> columns_;
  const char delimiter_;
  std::vector<Field> fields_;  // Reused from record to record.
  std::string unescaped_;
};

}  // namespace

std::unique_ptr<RecordDecoder> MakeCsvDecoder(std::vector<PayloadColumn> columns,
                                              const std::map<std::string, std::string>& options) {
  char delimiter = ',';
  for (const auto& [key, value] : options) {
    if (key == "csv.delimiter") {
      delimiter = ParseDelimiter(value);
    } else {
      throw SqlError(
          sqlstate::kInvalidParameterValue,
          fmt::format("unknown format option '{}' for FORMAT CSV (known: csv.delimiter)", key));
    }
  }
  return std::make_unique<CsvDecoder>(std::move(columns), delimiter);
}

}  // namespace stave::executor
