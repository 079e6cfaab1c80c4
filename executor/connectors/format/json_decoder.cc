#include "executor/connectors/format/json_decoder.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/array_value.h"
#include "common/jsonb.h"
#include "common/sql_error.h"
#include "common/value_cast.h"
#include "executor/connectors/format/field_decoding.h"

namespace stave::executor {
namespace {

namespace ondemand = simdjson::ondemand;
using simdjson::error_code;

bool IsJsonWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// simdjson's raw tokens run up to the next token, so they carry the whitespace before it.
std::string_view TrimTrailingWhitespace(std::string_view text) {
  while (!text.empty() && IsJsonWhitespace(text.back())) text.remove_suffix(1);
  return text;
}

// RFC 8259's number: -? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)?. Checked on the text
// rather than by converting it, so that a number too large for a double is still valid JSON
// where nothing needs its value (an ignored field, a varchar column).
bool IsJsonNumber(std::string_view text) {
  size_t pos = 0;
  auto digits = [&] {
    size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    return pos > start;
  };
  if (pos < text.size() && text[pos] == '-') ++pos;
  if (pos < text.size() && text[pos] == '0') {
    ++pos;
  } else if (!digits()) {
    return false;
  }
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    if (!digits()) return false;
  }
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) ++pos;
    if (!digits()) return false;
  }
  return pos == text.size();
}

bool IsIntegerText(std::string_view number) {
  return number.find_first_of(".eE") == std::string_view::npos;
}

// Why simdjson refused the record, in a few words.
std::string_view Reason(error_code code) {
  switch (code) {
    case simdjson::TAPE_ERROR:
      return "unexpected character, or a missing comma, colon or bracket";
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
      return "unclosed or unbalanced object or array";
    case simdjson::UNCLOSED_STRING:
      return "unclosed string";
    case simdjson::STRING_ERROR:
      return "bad escape sequence in a string";
    case simdjson::UTF8_ERROR:
      return "invalid UTF-8";
    case simdjson::UNESCAPED_CHARS:
      return "unescaped control character in a string";
    case simdjson::NUMBER_ERROR:
      return "malformed number";
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
      return "malformed true, false or null";
    case simdjson::DEPTH_ERROR:
      return "objects or arrays nested too deep";
    case simdjson::TRAILING_CONTENT:
      return "content after the object";
    case simdjson::CAPACITY:
      return "record too large";
    case simdjson::MEMALLOC:
      return "out of memory";
    default:
      // simdjson's own words, some of them long.
      return std::string_view(simdjson::error_message(code)).substr(0, 80);
  }
}

error_code CheckValue(ondemand::value value, int depth);

// Checks a scalar (string, number, true, false, null). Kept out of CheckValue so that the
// frames of its recursion stay small: sanitizer builds pad every local, and a record may
// nest kMaxJsonDepth deep on a worker thread's stack.
[[gnu::noinline]] error_code CheckScalar(ondemand::value& value, ondemand::json_type type) {
  switch (type) {
    case ondemand::json_type::string: {
      std::string_view text;
      return value.get_string().get(text);
    }
    case ondemand::json_type::number:
      return IsJsonNumber(TrimTrailingWhitespace(value.raw_json_token())) ? simdjson::SUCCESS
                                                                          : simdjson::NUMBER_ERROR;
    case ondemand::json_type::boolean: {
      bool flag;
      return value.get_bool().get(flag);
    }
    case ondemand::json_type::null: {
      bool is_null = false;
      SIMDJSON_TRY(value.is_null().get(is_null));
      return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    }
    default:
      return simdjson::TAPE_ERROR;
  }
}

[[gnu::noinline]] error_code CheckObject(ondemand::value& value, int depth) {
  ondemand::object object;
  SIMDJSON_TRY(value.get_object().get(object));
  for (auto field : object) {
    SIMDJSON_TRY(field.error());
    std::string_view key;
    SIMDJSON_TRY(field.value_unsafe().unescaped_key().get(key));  // Checks its escapes.
    SIMDJSON_TRY(CheckValue(field.value_unsafe().value(), depth + 1));
  }
  return simdjson::SUCCESS;
}

[[gnu::noinline]] error_code CheckArray(ondemand::value& value, int depth) {
  ondemand::array array;
  SIMDJSON_TRY(value.get_array().get(array));
  for (auto element : array) {
    SIMDJSON_TRY(element.error());
    SIMDJSON_TRY(CheckValue(element.value_unsafe(), depth + 1));
  }
  return simdjson::SUCCESS;
}

// Reads `value` to its end and checks it as a full parser would. simdjson's On Demand
// parser checks only what a program reads: a value it is told to skip is passed over by
// counting brackets, so `[1 2}` would go unnoticed. `depth` is the value's own depth.
error_code CheckValue(ondemand::value value, int depth) {
  ondemand::json_type type;
  SIMDJSON_TRY(value.type().get(type));
  if (type == ondemand::json_type::object || type == ondemand::json_type::array) {
    if (depth > kMaxJsonDepth) return simdjson::DEPTH_ERROR;
    return type == ondemand::json_type::object ? CheckObject(value, depth)
                                               : CheckArray(value, depth);
  }
  return CheckScalar(value, type);
}

class JsonDecoder final : public RecordDecoder {
 public:
  explicit JsonDecoder(std::vector<PayloadColumn> columns)
      : columns_(std::move(columns)), seen_(columns_.size(), 0) {
    // The keys view the names in columns_, which is never resized.
    for (size_t i = 0; i < columns_.size(); ++i) {
      by_name_.emplace(columns_[i].name, i);
      // A name with a character JSON must escape never equals a key as written (and could
      // seem to: the name `a":1,"b` matches the bytes of {"a":1,"b":2}).
      const std::string& name = columns_[i].name;
      comparable_as_written_.push_back(std::none_of(name.begin(), name.end(), [](char c) {
        return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
      }));
    }
  }

  bool Decode(std::string_view payload, Chunk* chunk, std::string* error) override {
    std::fill(seen_.begin(), seen_.end(), 0);
    if (!DecodeFields(payload, chunk, error)) {
      for (size_t i = 0; i < columns_.size(); ++i) {
        if (seen_[i]) RemoveLastValue(&chunk->columns[columns_[i].index]);
      }
      return false;
    }
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (!seen_[i]) chunk->columns[columns_[i].index].AppendNull();
    }
    return true;
  }

 private:
  static constexpr size_t kNotFound = static_cast<size_t>(-1);

  // Appends the value of every field that has a column, setting seen_ for those columns.
  bool DecodeFields(std::string_view payload, Chunk* chunk, std::string* error) {
    if (TrimTrailingWhitespace(payload).empty()) {
      error->assign("empty record");
      return false;
    }
    CopyToPaddedBuffer(payload);
    ondemand::document document;
    error_code code =
        parser_.iterate(buffer_.get(), payload.size(), buffer_capacity_).get(document);
    if (code) return Malformed(code, nullptr, {}, error);
    ondemand::object object;
    code = document.get_object().get(object);
    if (code == simdjson::INCORRECT_TYPE) {
      error->assign("the record is not a JSON object");
      return false;
    }
    if (code) return Malformed(code, Location(document), {}, error);
    next_column_ = 0;
    for (auto field_or_error : object) {
      // Used in place: copying a field (a std::pair) costs a store-forwarding stall.
      std::string_view key;
      if ((code = field_or_error.error()) ||
          (code = FindColumn(field_or_error.value_unsafe(), &key))) {
        return Malformed(code, Location(document), {}, error);
      }
      ondemand::field& field = field_or_error.value_unsafe();
      ondemand::value& value = field.value();
      if (column_ == kNotFound) {
        const char* start = value.raw_json_token().data();
        if ((code = CheckValue(value, 2))) return Malformed(code, start, key, error);
        continue;
      }
      size_t column = column_;
      if (seen_[column]) {  // A repeated field: the last one wins.
        RemoveLastValue(&chunk->columns[columns_[column].index]);
        seen_[column] = 0;
      }
      if (!DecodeValue(columns_[column], value, &chunk->columns[columns_[column].index], error)) {
        return false;
      }
      seen_[column] = 1;
    }
    // The object has been read to its closing brace; anything after it is an error.
    const char* after = nullptr;
    if (document.current_location().get(after) != simdjson::OUT_OF_BOUNDS) {
      return Malformed(simdjson::TRAILING_CONTENT, after, {}, error);
    }
    return true;
  }

  // Appends `value` to `out`; on false, `out` is untouched.
  bool DecodeValue(const PayloadColumn& column, ondemand::value& value, Column* out,
                   std::string* error) {
    switch (column.type.id) {
      case TypeId::kBoolean: {
        bool flag;
        if (value.get_bool().get(flag) == simdjson::SUCCESS) {
          out->AppendInt(flag ? 1 : 0);
          return true;
        }
        break;
      }
      case TypeId::kInt16:
      case TypeId::kInt32:
      case TypeId::kInt64: {
        int64_t number;
        if (value.get_int64().get(number) == simdjson::SUCCESS) {
          if (!IntegerFitsType(number, column.type)) return OutOfRange(column, value, error);
          out->AppendInt(number);
          return true;
        }
        break;
      }
      case TypeId::kFloat32:
      case TypeId::kFloat64: {
        double number;
        if (value.get_double().get(number) == simdjson::SUCCESS) {
          if (column.type.id == TypeId::kFloat32) {
            float single = static_cast<float>(number);
            if (std::isinf(single)) return OutOfRange(column, value, error);
            number = single;
          }
          out->AppendDouble(number);
          return true;
        }
        break;
      }
      case TypeId::kVarchar:
        return DecodeText(column, value, out, error);
      case TypeId::kDate:
      case TypeId::kTime:
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
      case TypeId::kInterval: {
        std::string_view text;
        if (value.get_string().get(text) == simdjson::SUCCESS) {
          return DecodeTemporalText(column.name, column.type, text, out, error);
        }
        // A number in a timestamp column is milliseconds since 1970-01-01 UTC, as Kafka
        // record timestamps and most JSON producers write instants.
        int64_t millis;
        if (column.type.IsTimestamp() && value.get_int64().get(millis) == simdjson::SUCCESS) {
          return DecodeEpochMillis(column.name, column.type, millis, out, error);
        }
        break;
      }
      case TypeId::kNumeric: {
        // The number's own digits, not a double's: 0.1 stays exactly 0.1. A string is
        // taken too ("NaN", "Infinity", or digits a producer quoted to keep them exact).
        std::string_view text;
        if (value.get_string().get(text) == simdjson::SUCCESS) {
          return DecodeTemporalText(column.name, column.type, text, out, error);
        }
        simdjson::ondemand::json_type type;
        if (value.type().get(type) == simdjson::SUCCESS &&
            type == simdjson::ondemand::json_type::number) {
          std::string_view raw = value.raw_json_token();
          while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\t' ||
                                  raw.back() == '\r')) {
            raw.remove_suffix(1);
          }
          return DecodeTemporalText(column.name, column.type, raw, out, error);
        }
        break;
      }
      case TypeId::kBytea: {
        // bytea in its text form ("\\xdeadbeef"), as PostgreSQL's json → bytea input takes it.
        std::string_view text;
        if (value.get_string().get(text) == simdjson::SUCCESS) {
          return DecodeTextByCast(column.name, column.type, text, out, error);
        }
        break;
      }
      case TypeId::kJsonb:
      case TypeId::kArray:
        return DecodeJsonbOrArray(column, value, out, error);
      case TypeId::kUnknown:
        break;
    }
    // Not a value of the column's type: the rarer cases, off the fast path above.
    bool is_null = false;
    if (value.is_null().get(is_null) == simdjson::SUCCESS && is_null) {
      out->AppendNull();
      return true;
    }
    return Mismatch(column, value, out, error);
  }

  bool DecodeText(const PayloadColumn& column, ondemand::value& value, Column* out,
                  std::string* error) {
    const char* start = value.raw_json_token().data();
    ondemand::json_type type;
    error_code code = value.type().get(type);
    if (code) return Malformed(code, start, column.name, error);
    switch (type) {
      case ondemand::json_type::string: {
        std::string_view text;
        if ((code = value.get_string().get(text))) break;
        out->AppendString(std::string(text));
        return true;
      }
      case ondemand::json_type::null: {
        if ((code = CheckValue(value, 2))) break;
        out->AppendNull();
        return true;
      }
      case ondemand::json_type::number:
      case ondemand::json_type::boolean:
      case ondemand::json_type::object:
      case ondemand::json_type::array: {
        // The text as written: check the value, which reads it to its end, then take what
        // lies between its start and the next token.
        std::string_view token = TrimTrailingWhitespace(value.raw_json_token());
        if ((code = CheckValue(value, 2))) break;
        if (type == ondemand::json_type::object || type == ondemand::json_type::array) {
          const char* end = nullptr;
          if ((code = value.current_location().get(end))) break;
          token = TrimTrailingWhitespace(std::string_view(start, static_cast<size_t>(end - start)));
        }
        out->AppendString(std::string(token));
        return true;
      }
    }
    return Malformed(code, start, column.name, error);
  }

  // A jsonb column takes the field's JSON value as it is (normalized as jsonb is); an array
  // column a JSON array of scalars (or the array's text form in a string). JSON null is NULL.
  bool DecodeJsonbOrArray(const PayloadColumn& column, ondemand::value& value, Column* out,
                          std::string* error) {
    const char* start = value.raw_json_token().data();
    ondemand::json_type type;
    error_code code = value.type().get(type);
    if (code) return Malformed(code, start, column.name, error);
    std::string_view token = TrimTrailingWhitespace(value.raw_json_token());
    if ((code = CheckValue(value, 2))) return Malformed(code, start, column.name, error);
    if (type == ondemand::json_type::null) {
      out->AppendNull();
      return true;
    }
    if (type == ondemand::json_type::object || type == ondemand::json_type::array) {
      const char* end = nullptr;
      if ((code = value.current_location().get(end))) {
        return Malformed(code, start, column.name, error);
      }
      token = TrimTrailingWhitespace(std::string_view(start, static_cast<size_t>(end - start)));
    }
    try {
      if (column.type.id == TypeId::kJsonb) {
        out->AppendString(jsonb::Normalize(token));
        return true;
      }
      jsonb::Node node = jsonb::Parse(token);
      if (node.kind == jsonb::Node::Kind::kString) {
        return DecodeTextByCast(column.name, column.type, node.scalar, out, error);
      }
      if (node.kind == jsonb::Node::Kind::kArray) {
        std::vector<Value> elements;
        DataType element_type = column.type.ElementType();
        for (const jsonb::Node& element : node.elements) {
          if (element.kind == jsonb::Node::Kind::kNull) {
            elements.push_back(Value::Null());
          } else if (element.kind == jsonb::Node::Kind::kArray ||
                     element.kind == jsonb::Node::Kind::kObject) {
            break;
          } else {
            elements.push_back(
                CastValue(Value::String(element.scalar), TypeId::kVarchar, element_type));
          }
        }
        if (elements.size() == node.elements.size()) {
          out->AppendString(array::Encode(elements, element_type));
          return true;
        }
      }
    } catch (const SqlError& bad) {
      StartFieldError(column.name, error);
      error->append("invalid ").append(column.type.Name()).append(" ");
      AppendQuotedForError(token, error);
      error->append(" (SQLSTATE ").append(bad.sqlstate()).append(")");
      return false;
    }
    StartFieldError(column.name, error);
    error->append("expected ").append(TypeWithArticle(column.type)).append(", got ");
    AppendQuotedForError(token, error);
    return false;
  }

  // A value that is not of the column's type (or not valid JSON at all). The JSON strings
  // "NaN", "Infinity" and "-Infinity" are taken for floating-point columns, since the JSON
  // encoder writes those values so.
  bool Mismatch(const PayloadColumn& column, ondemand::value& value, Column* out,
                std::string* error) {
    const char* start = value.raw_json_token().data();
    std::string_view token = TrimTrailingWhitespace(value.raw_json_token());
    ondemand::json_type type;
    error_code code = value.type().get(type);
    if (code) return Malformed(code, start, column.name, error);
    std::string_view text;
    switch (type) {
      case ondemand::json_type::string:
        if ((code = value.get_string().get(text)))
          return Malformed(code, start, column.name, error);
        if (column.type.IsFloat()) {
          if (text == "NaN") {
            out->AppendDouble(std::numeric_limits<double>::quiet_NaN());
            return true;
          }
          if (text == "Infinity" || text == "-Infinity") {
            double infinity = std::numeric_limits<double>::infinity();
            out->AppendDouble(text == "Infinity" ? infinity : -infinity);
            return true;
          }
        }
        break;
      case ondemand::json_type::number:
        if (!IsJsonNumber(token))
          return Malformed(simdjson::NUMBER_ERROR, start, column.name, error);
        // A number the column could take but for its size.
        if (column.type.IsFloat() || (column.type.IsInteger() && IsIntegerText(token))) {
          return OutOfRange(column, value, error);
        }
        break;
      default:
        if ((code = CheckValue(value, 2))) return Malformed(code, start, column.name, error);
        break;
    }
    StartFieldError(column.name, error);
    error->append("expected ").append(TypeWithArticle(column.type)).append(", got ");
    switch (type) {
      case ondemand::json_type::string:
        error->append("the string ");
        AppendQuotedForError(text, error);
        break;
      case ondemand::json_type::number:
        error->append("the number ").append(token.substr(0, kMaxQuotedBytes));
        if (token.size() > kMaxQuotedBytes) error->append("...");
        break;
      case ondemand::json_type::boolean:
        error->append(token);
        break;
      case ondemand::json_type::object:
        error->append("an object");
        break;
      case ondemand::json_type::array:
        error->append("an array");
        break;
      case ondemand::json_type::null:
        error->append("null");  // Unreachable: null decodes as NULL.
        break;
    }
    return false;
  }

  bool OutOfRange(const PayloadColumn& column, ondemand::value& value, std::string* error) {
    // The number is valid JSON, so plain ASCII: it needs cutting, not escaping.
    std::string_view number = TrimTrailingWhitespace(value.raw_json_token());
    StartFieldError(column.name, error);
    error->append(number.substr(0, kMaxQuotedBytes));
    if (number.size() > kMaxQuotedBytes) error->append("...");
    error->append(" is out of range for type ").append(column.type.Name());
    return false;
  }

  // `at` points into the record (or its padding) where the problem was seen, if known.
  bool Malformed(error_code code, const char* at, std::string_view field, std::string* error) {
    error->clear();
    if (!field.empty()) StartFieldError(field, error);
    error->append("malformed JSON");
    if (at != nullptr && at >= buffer_.get() && at <= buffer_.get() + buffer_capacity_) {
      size_t offset = std::min(static_cast<size_t>(at - buffer_.get()), payload_size_);
      fmt::format_to(std::back_inserter(*error), " at offset {}", offset);
    }
    error->append(": ").append(Reason(code));
    return false;
  }

  static const char* Location(ondemand::document& document) {
    const char* at = nullptr;
    return document.current_location().get(at) == simdjson::SUCCESS ? at : nullptr;
  }

  // Sets column_ to the column named by the field's key, or kNotFound; `*key` to the
  // unescaped key when it had to be unescaped. Fields usually come in the columns' order,
  // so the column after the last match is tried first, against the key as written: a key
  // without escapes need not be unescaped (which copies it) to be compared.
  error_code FindColumn(ondemand::field& field, std::string_view* key) {
    if (next_column_ < columns_.size() && comparable_as_written_[next_column_] &&
        field.key().unsafe_is_equal(columns_[next_column_].name)) {
      column_ = next_column_++;
      return simdjson::SUCCESS;
    }
    SIMDJSON_TRY(field.unescaped_key().get(*key));
    auto found = by_name_.find(*key);
    if (found == by_name_.end()) {
      column_ = kNotFound;
    } else {
      column_ = found->second;
      next_column_ = column_ + 1;
    }
    return simdjson::SUCCESS;
  }

  // simdjson reads up to SIMDJSON_PADDING bytes past the end of a document, and Kafka's
  // buffers have no such slack. The padding is zeroed so that the tail of an earlier, longer
  // record never follows this one (simdjson also guards against a '}' there itself).
  void CopyToPaddedBuffer(std::string_view payload) {
    size_t needed = payload.size() + simdjson::SIMDJSON_PADDING;
    if (needed > buffer_capacity_) {
      buffer_capacity_ = std::max(needed, buffer_capacity_ * 2);
      buffer_ = std::make_unique<char[]>(buffer_capacity_);
    }
    std::memcpy(buffer_.get(), payload.data(), payload.size());
    std::memset(buffer_.get() + payload.size(), 0, simdjson::SIMDJSON_PADDING);
    payload_size_ = payload.size();
  }

  const std::vector<PayloadColumn> columns_;
  std::unordered_map<std::string_view, size_t> by_name_;
  std::vector<uint8_t> comparable_as_written_;  // Per column: see the constructor.
  std::vector<uint8_t> seen_;  // Per column: a value was appended for the current record.
  size_t next_column_ = 0;
  size_t column_ = kNotFound;  // FindColumn's answer.
  ondemand::parser parser_;
  std::unique_ptr<char[]> buffer_;
  size_t buffer_capacity_ = 0;
  size_t payload_size_ = 0;
};

}  // namespace

std::unique_ptr<RecordDecoder> MakeJsonDecoder(std::vector<PayloadColumn> columns) {
  return std::make_unique<JsonDecoder>(std::move(columns));
}

}  // namespace stave::executor
