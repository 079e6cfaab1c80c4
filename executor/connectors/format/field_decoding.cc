#include "executor/connectors/format/field_decoding.h"

#include <limits>

#include "common/sql_error.h"
#include "common/temporal.h"
#include "common/utf8.h"
#include "common/value_cast.h"

namespace stave::executor {

bool IntegerFitsType(int64_t value, DataType type) {
  switch (type.id) {
    case TypeId::kInt16:
      return value >= std::numeric_limits<int16_t>::min() &&
             value <= std::numeric_limits<int16_t>::max();
    case TypeId::kInt32:
      return value >= std::numeric_limits<int32_t>::min() &&
             value <= std::numeric_limits<int32_t>::max();
    default:
      return true;
  }
}

void RemoveLastValue(Column* column) {
  column->nulls.pop_back();
  switch (column->type.physical()) {
    case PhysicalType::kInt64:
      column->ints.pop_back();
      break;
    case PhysicalType::kFloat64:
      column->doubles.pop_back();
      break;
    case PhysicalType::kString:
      column->strings.pop_back();
      break;
    case PhysicalType::kDecimal:
      column->decimals.pop_back();
      break;
  }
}

void AppendQuotedForError(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t start = out->size();
  size_t pos = 0;
  while (pos < text.size()) {
    // The piece `text[pos]` becomes: a whole character, or one escaped byte.
    char piece[4];
    size_t piece_size = 0;
    size_t consumed = 1;
    unsigned char c = static_cast<unsigned char>(text[pos]);
    size_t length = Utf8SequenceLength(text, pos);
    if (length > 1) {
      consumed = length;
    } else if (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t') {
      piece[0] = '\\';
      piece[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : static_cast<char>(c);
      piece_size = 2;
    } else if (c < 0x20 || c == 0x7F || length == 0) {
      piece[0] = '\\';
      piece[1] = 'x';
      piece[2] = kHex[c >> 4];
      piece[3] = kHex[c & 0xF];
      piece_size = 4;
    } else {
      piece[0] = static_cast<char>(c);
      piece_size = 1;
    }
    size_t added = piece_size > 0 ? piece_size : consumed;
    if (out->size() - start + added > kMaxQuotedBytes) break;  // Never cut a piece in two.
    if (piece_size > 0) {
      out->append(piece, piece_size);
    } else {
      out->append(text.substr(pos, consumed));
    }
    pos += consumed;
  }
  out->push_back('"');
  if (pos < text.size()) out->append("...");
}

std::string TypeWithArticle(DataType type) {
  std::string name = type.Name();
  bool vowel = !name.empty() && std::string_view("aeiou").find(name[0]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + name;
}

bool DecodeTemporalText(std::string_view name, DataType type, std::string_view text, Column* out,
                        std::string* error) {
  return DecodeTextByCast(name, type, text, out, error);
}

bool DecodeTextByCast(std::string_view name, DataType type, std::string_view text, Column* out,
                      std::string* error) {
  try {
    out->AppendValue(CastValue(Value::String(std::string(text)), TypeId::kVarchar, type));
    return true;
  } catch (const SqlError& bad) {
    // The message quotes the whole text; cut it as every other field error is.
    StartFieldError(name, error);
    error->append("invalid ").append(type.Name()).append(" ");
    AppendQuotedForError(text, error);
    error->append(" (SQLSTATE ").append(bad.sqlstate()).append(")");
    return false;
  }
}

bool DecodeEpochMillis(std::string_view name, DataType type, int64_t millis, Column* out,
                       std::string* error) {
  constexpr int64_t kEpochMillis = temporal::kUnixEpochDays * temporal::kMicrosPerDay / 1000;
  int64_t micros = 0;
  bool overflow = __builtin_add_overflow(millis, kEpochMillis, &micros) ||
                  __builtin_mul_overflow(micros, int64_t{1000}, &micros);
  if (!overflow) {
    try {
      temporal::CheckTimestamp(micros);
    } catch (const SqlError&) {
      overflow = true;
    }
  }
  if (overflow) {
    StartFieldError(name, error);
    error->append(std::to_string(millis))
        .append(" milliseconds since 1970 is out of range for type ")
        .append(type.Name());
    return false;
  }
  out->AppendInt(micros);
  return true;
}

void StartFieldError(std::string_view name, std::string* error) {
  error->assign("field ");
  AppendQuotedForError(name, error);
  error->append(": ");
}

}  // namespace stave::executor
