#include "executor/scalar_functions.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/array_value.h"
#include "common/sql_error.h"
#include "common/utf8.h"
#include "executor/expression_evaluator.h"

namespace stave::executor {
namespace {

using planner::ScalarFunction;

constexpr std::string_view kSubstringError = "22011";
constexpr std::string_view kInvalidRegularExpression = "2201B";
constexpr std::string_view kProgramLimitExceeded = "54000";
// The longest text a function builds (PostgreSQL's limit is 1 GB).
constexpr size_t kMaxTextBytes = size_t{1} << 30;

// Byte offsets of the characters of UTF-8 `text`, plus its size at the end.
std::vector<size_t> CharacterStarts(std::string_view text) {
  std::vector<size_t> starts;
  starts.reserve(text.size() + 1);
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  starts.push_back(text.size());
  return starts;
}

// Characters [first, first + count) of `text` (0-based, clamped to the text).
std::string Characters(std::string_view text, int64_t first, int64_t count) {
  std::vector<size_t> starts = CharacterStarts(text);
  auto length = static_cast<int64_t>(starts.size()) - 1;
  int64_t begin = std::clamp<int64_t>(first, 0, length);
  int64_t end = std::clamp<int64_t>(count > length - first ? length : first + count, 0, length);
  if (end <= begin) return "";
  return std::string(text.substr(starts[begin], starts[end] - starts[begin]));
}

int64_t CharacterCount(std::string_view text) {
  int64_t count = 0;
  for (char c : text) count += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return count;
}

std::string Substr(std::string_view text, int64_t from, std::optional<int64_t> count) {
  if (count && *count < 0) {
    throw SqlError(kSubstringError, "negative substring length not allowed");
  }
  // PostgreSQL counts from 1, and a start before 1 eats into the count.
  int64_t first = from - 1;
  if (!count) return Characters(text, std::max<int64_t>(first, 0), INT64_MAX / 2);
  int64_t end = first + std::min<int64_t>(*count, INT64_MAX / 4);
  first = std::max<int64_t>(first, 0);
  return Characters(text, first, end - first);
}

enum class TrimSide { kBoth, kLeft, kRight };

std::string Trim(std::string_view text, std::string_view characters, TrimSide side) {
  std::vector<size_t> set_starts = CharacterStarts(characters);
  auto in_set = [&](std::string_view character) {
    for (size_t i = 0; i + 1 < set_starts.size(); ++i) {
      if (characters.substr(set_starts[i], set_starts[i + 1] - set_starts[i]) == character)
        return true;
    }
    return false;
  };
  std::vector<size_t> starts = CharacterStarts(text);
  size_t begin = 0;
  size_t end = starts.size() - 1;  // In characters.
  if (side != TrimSide::kRight) {
    while (begin < end && in_set(text.substr(starts[begin], starts[begin + 1] - starts[begin])))
      ++begin;
  }
  if (side != TrimSide::kLeft) {
    while (end > begin && in_set(text.substr(starts[end - 1], starts[end] - starts[end - 1])))
      --end;
  }
  return std::string(text.substr(starts[begin], starts[end] - starts[begin]));
}

std::string Replace(std::string_view text, std::string_view from, std::string_view to) {
  if (from.empty()) return std::string(text);
  std::string out;
  size_t start = 0;
  for (size_t found; (found = text.find(from, start)) != std::string_view::npos;
       start = found + from.size()) {
    out.append(text.substr(start, found - start));
    out.append(to);
    if (out.size() > kMaxTextBytes) throw SqlError(kProgramLimitExceeded, "string too long");
  }
  out.append(text.substr(start));
  return out;
}

std::string SplitPart(std::string_view text, std::string_view delimiter, int64_t field) {
  if (field == 0) {
    throw SqlError(sqlstate::kInvalidParameterValue, "field position must not be zero");
  }
  std::vector<std::string_view> parts;
  if (delimiter.empty()) {
    parts.push_back(text);
  } else {
    size_t start = 0;
    for (size_t found; (found = text.find(delimiter, start)) != std::string_view::npos;
         start = found + delimiter.size()) {
      parts.push_back(text.substr(start, found - start));
    }
    parts.push_back(text.substr(start));
  }
  if (text.empty()) return "";
  auto count = static_cast<int64_t>(parts.size());
  int64_t index = field > 0 ? field - 1 : count + field;  // Negative: from the end.
  if (index < 0 || index >= count) return "";
  return std::string(parts[static_cast<size_t>(index)]);
}

int64_t StrPos(std::string_view text, std::string_view needle) {
  size_t found = text.find(needle);
  if (found == std::string_view::npos) return 0;
  return CharacterCount(text.substr(0, found)) + 1;
}

std::string Repeat(std::string_view text, int64_t times) {
  if (times <= 0 || text.empty()) return "";
  if (static_cast<uint64_t>(times) > kMaxTextBytes / text.size()) {
    throw SqlError(kProgramLimitExceeded, "requested length too large");
  }
  std::string out;
  out.reserve(text.size() * static_cast<size_t>(times));
  for (int64_t i = 0; i < times; ++i) out.append(text);
  return out;
}

// chr(n): the character of code point n, as UTF-8; PostgreSQL's errors for NUL, negative
// numbers, numbers past U+10FFFF and the UTF-16 surrogates.
std::string Chr(int64_t code) {
  if (code < 0) {
    throw SqlError(sqlstate::kInvalidParameterValue, "character number must be positive");
  }
  if (code == 0) throw SqlError(kProgramLimitExceeded, "null character not permitted");
  if (code > 0x10FFFF) {
    throw SqlError(kProgramLimitExceeded,
                   fmt::format("requested character too large for encoding: {}", code));
  }
  if (code >= 0xD800 && code <= 0xDFFF) {
    throw SqlError(kProgramLimitExceeded,
                   fmt::format("requested character not valid for encoding: {}", code));
  }
  std::string out;
  AppendUtf8(static_cast<uint32_t>(code), &out);
  return out;
}

// ascii(s): the code point of the first character of UTF-8 `text`, 0 for an empty one.
int64_t FirstCodePoint(std::string_view text) {
  if (text.empty()) return 0;
  auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(text[i])); };
  uint32_t lead = byte(0);
  size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  if (length > text.size()) return lead;  // Not valid UTF-8; text values always are.
  uint32_t code = length == 1 ? lead : lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) code = code << 6 | (byte(i) & 0x3F);
  return code;
}

std::string Reverse(std::string_view text) {
  std::vector<size_t> starts = CharacterStarts(text);
  std::string out;
  out.reserve(text.size());
  for (size_t i = starts.size() - 1; i > 0; --i)
    out.append(text.substr(starts[i - 1], starts[i] - starts[i - 1]));
  return out;
}

std::string Pad(std::string_view text, int64_t length, std::string_view fill, bool left) {
  if (length <= 0) return "";
  if (static_cast<uint64_t>(length) > kMaxTextBytes / 4) {
    throw SqlError(kProgramLimitExceeded, "requested length too large");
  }
  int64_t have = CharacterCount(text);
  if (have >= length || fill.empty()) return Characters(text, 0, length);
  std::vector<size_t> fill_starts = CharacterStarts(fill);
  size_t fill_chars = fill_starts.size() - 1;
  std::string padding;
  for (int64_t i = 0; i < length - have; ++i) {
    size_t k = static_cast<size_t>(i) % fill_chars;
    padding.append(fill.substr(fill_starts[k], fill_starts[k + 1] - fill_starts[k]));
  }
  return left ? padding + std::string(text) : std::string(text) + padding;
}

// regexp_replace with PostgreSQL's flags ('g' every match, 'i' case-insensitive) and
// replacement syntax (\1..\9, \& for the whole match), and the match operators (~, ~*, !~,
// !~*), on RE2, which never backtracks. Keeps the last pattern compiled: a column of rows
// usually shares one.
class RegexEvaluator {
 public:
  bool Matches(const std::string& text, const std::string& pattern, bool case_insensitive) {
    std::string flags = case_insensitive ? "i" : "";
    if (!regex_ || pattern != pattern_ || flags != flags_) Compile(pattern, flags);
    return RE2::PartialMatch(text, *regex_);
  }

  std::string Replace(const std::string& text, const std::string& pattern,
                      const std::string& replacement, const std::string& flags) {
    if (!regex_ || pattern != pattern_ || flags != flags_) Compile(pattern, flags);
    std::string rewrite = Rewrite(replacement);
    std::string out = text;
    if (global_) {
      RE2::GlobalReplace(&out, *regex_, rewrite);
    } else {
      RE2::Replace(&out, *regex_, rewrite);
    }
    return out;
  }

  // regexp_match: the capturing groups of the first match as text[] (an unmatched group is a
  // NULL element), the whole match when the pattern has no groups, NULL without a match.
  Value FirstMatch(const std::string& text, const std::string& pattern, const std::string& flags) {
    if (!regex_ || pattern != pattern_ || flags != flags_) Compile(pattern, flags);
    if (global_) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "regexp_match() does not support the \"global\" option")
          .WithHint("Use the regexp_matches function instead.");
    }
    int groups = regex_->NumberOfCapturingGroups();
    std::vector<re2::StringPiece> found(static_cast<size_t>(groups) + 1);
    if (!regex_->Match(text, 0, text.size(), RE2::UNANCHORED, found.data(),
                       static_cast<int>(found.size()))) {
      return Value::Null();
    }
    std::vector<Value> elements;
    for (size_t i = groups == 0 ? 0 : 1; i < found.size(); ++i) {
      elements.push_back(found[i].data() == nullptr
                             ? Value::Null()
                             : Value::String(std::string(found[i].data(), found[i].size())));
    }
    return Value::String(array::Encode(elements, DataType(TypeId::kVarchar)));
  }

 private:
  void Compile(const std::string& pattern, const std::string& flags) {
    RE2::Options options;
    options.set_log_errors(false);
    global_ = false;
    for (char flag : flags) {
      if (flag == 'g') {
        global_ = true;
      } else if (flag == 'i') {
        options.set_case_sensitive(false);
      } else if (flag != 'c') {  // PostgreSQL's other flags (m, n, s, x, q, ...) are not here.
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("invalid regular expression option: \"{}\"", flag))
            .WithHint("regexp_replace and regexp_match take the flags g, i and c here.");
      }
    }
    auto regex = std::make_unique<RE2>(pattern, options);
    if (!regex->ok()) {
      throw SqlError(kInvalidRegularExpression,
                     fmt::format("invalid regular expression: {}", regex->error()));
    }
    regex_ = std::move(regex);
    pattern_ = pattern;
    flags_ = flags;
  }

  static std::string Rewrite(const std::string& replacement) {
    std::string rewrite;
    for (size_t i = 0; i < replacement.size(); ++i) {
      char c = replacement[i];
      if (c == '\\' && i + 1 < replacement.size()) {
        char next = replacement[++i];
        if (next == '&') {
          rewrite += "\\0";
        } else if (next >= '1' && next <= '9') {
          rewrite += '\\';
          rewrite += next;
        } else {
          rewrite += next == '\\' ? "\\\\" : std::string(1, next);
        }
      } else {
        rewrite += c == '\\' ? "\\\\" : std::string(1, c);
      }
    }
    return rewrite;
  }

  std::unique_ptr<RE2> regex_;
  std::string pattern_;
  std::string flags_;
  bool global_ = false;
};

double CheckedDouble(double value) {
  if (std::isinf(value)) {
    throw SqlError(sqlstate::kNumericValueOutOfRange, "value out of range: overflow");
  }
  return value;
}

double Math(ScalarFunction function, double x, double y) {
  switch (function) {
    case ScalarFunction::kRound:
      return std::nearbyint(x);  // Half to even, as PostgreSQL's float8 round (rint).
    case ScalarFunction::kFloor:
      return std::floor(x);
    case ScalarFunction::kCeil:
      return std::ceil(x);
    case ScalarFunction::kTrunc:
      return std::trunc(x);
    case ScalarFunction::kSign:
      return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
    case ScalarFunction::kSqrt:
      if (x < 0) {
        throw SqlError(sqlstate::kInvalidArgumentForPower,
                       "cannot take square root of a negative number");
      }
      return std::sqrt(x);
    case ScalarFunction::kLn:
    case ScalarFunction::kLog10:
      if (x == 0) throw SqlError(sqlstate::kInvalidArgumentForLog, "cannot take logarithm of zero");
      if (x < 0) {
        throw SqlError(sqlstate::kInvalidArgumentForLog,
                       "cannot take logarithm of a negative number");
      }
      return function == ScalarFunction::kLn ? std::log(x) : std::log10(x);
    case ScalarFunction::kExp: {
      double result = std::exp(x);
      if (result == 0 && !std::isinf(x)) {
        throw SqlError(sqlstate::kNumericValueOutOfRange, "value out of range: underflow");
      }
      return std::isinf(x) ? result : CheckedDouble(result);
    }
    case ScalarFunction::kPower: {
      if (x == 0 && y < 0) {
        throw SqlError(sqlstate::kInvalidArgumentForPower,
                       "zero raised to a negative power is undefined");
      }
      if (x < 0 && std::floor(y) != y) {
        throw SqlError(sqlstate::kInvalidArgumentForPower,
                       "a negative number raised to a non-integer power yields a complex result");
      }
      double result = std::pow(x, y);
      return std::isinf(x) || std::isinf(y) ? result : CheckedDouble(result);
    }
    default:
      break;
  }
  throw SqlError(sqlstate::kInternalError, "not a math function");
}

// The math functions over numeric, for one row of their arguments.
Decimal DecimalMath(ScalarFunction function, const std::vector<Column>& args, size_t row) {
  const Decimal& x = args[0].decimals[row];
  const bool binary = args.size() > 1;
  switch (function) {
    case ScalarFunction::kRound:
      return decimal::Round(x, binary ? args[1].ints[row] : 0);
    case ScalarFunction::kTrunc:
      return decimal::Trunc(x, binary ? args[1].ints[row] : 0);
    case ScalarFunction::kExp:
      return decimal::Exp(x);
    case ScalarFunction::kLn:
      return decimal::Ln(x);
    case ScalarFunction::kLog10:  // log(x), or log(b, x) with two arguments
      return binary ? decimal::Log(x, args[1].decimals[row])
                    : decimal::Log(decimal::FromInteger(10), x);
    case ScalarFunction::kPower:
      return decimal::Power(x, args[1].decimals[row]);
    case ScalarFunction::kFloor:
      return decimal::Floor(x);
    case ScalarFunction::kCeil:
      return decimal::Ceil(x);
    case ScalarFunction::kSign:
      return decimal::Sign(x);
    case ScalarFunction::kSqrt:
      if (decimal::SignOf(x) < 0) {
        throw SqlError(sqlstate::kInvalidArgumentForPower,
                       "cannot take square root of a negative number");
      }
      return decimal::Sqrt(x);
    default:
      break;
  }
  throw SqlError(sqlstate::kInternalError, "not a numeric function");
}

bool IsStringFunction(ScalarFunction function) {
  switch (function) {
    case ScalarFunction::kSubstr:
    case ScalarFunction::kTrim:
    case ScalarFunction::kLTrim:
    case ScalarFunction::kRTrim:
    case ScalarFunction::kReplace:
    case ScalarFunction::kSplitPart:
    case ScalarFunction::kStrPos:
    case ScalarFunction::kLeft:
    case ScalarFunction::kRight:
    case ScalarFunction::kRepeat:
    case ScalarFunction::kReverse:
    case ScalarFunction::kStartsWith:
    case ScalarFunction::kChr:
    case ScalarFunction::kAscii:
    case ScalarFunction::kLPad:
    case ScalarFunction::kRPad:
    case ScalarFunction::kRegexpReplace:
    case ScalarFunction::kRegexpMatch:
    case ScalarFunction::kRegexMatch:
    case ScalarFunction::kRegexMatchInsensitive:
    case ScalarFunction::kRegexNotMatch:
    case ScalarFunction::kRegexNotMatchInsensitive:
      return true;
    default:
      return false;
  }
}

bool IsMathFunction(ScalarFunction function) {
  switch (function) {
    case ScalarFunction::kRound:
    case ScalarFunction::kFloor:
    case ScalarFunction::kCeil:
    case ScalarFunction::kTrunc:
    case ScalarFunction::kSqrt:
    case ScalarFunction::kPower:
    case ScalarFunction::kExp:
    case ScalarFunction::kLn:
    case ScalarFunction::kLog10:
    case ScalarFunction::kSign:
      return true;
    default:
      return false;
  }
}

// One row of a strict string function: every argument is non-NULL here.
Value StringRow(ScalarFunction function, const std::vector<Column>& args, size_t row,
                RegexEvaluator* regexp) {
  auto text = [&](size_t arg) -> const std::string& { return args[arg].strings[row]; };
  auto number = [&](size_t arg) { return args[arg].ints[row]; };
  switch (function) {
    case ScalarFunction::kSubstr:
      return Value::String(
          Substr(text(0), number(1), args.size() > 2 ? std::optional(number(2)) : std::nullopt));
    case ScalarFunction::kTrim:
    case ScalarFunction::kLTrim:
    case ScalarFunction::kRTrim: {
      TrimSide side = function == ScalarFunction::kTrim    ? TrimSide::kBoth
                      : function == ScalarFunction::kLTrim ? TrimSide::kLeft
                                                           : TrimSide::kRight;
      return Value::String(Trim(text(0), args.size() > 1 ? text(1) : " ", side));
    }
    case ScalarFunction::kReplace:
      return Value::String(Replace(text(0), text(1), text(2)));
    case ScalarFunction::kSplitPart:
      return Value::String(SplitPart(text(0), text(1), number(2)));
    case ScalarFunction::kStrPos:
      return Value::Int(StrPos(text(0), text(1)));
    case ScalarFunction::kLeft: {
      int64_t n = number(1);
      int64_t length = CharacterCount(text(0));
      return Value::String(Characters(text(0), 0, n >= 0 ? n : length + n));
    }
    case ScalarFunction::kRight: {
      int64_t n = number(1);
      int64_t length = CharacterCount(text(0));
      int64_t keep = n >= 0 ? std::min(n, length) : std::max<int64_t>(length + n, 0);
      return Value::String(Characters(text(0), length - keep, keep));
    }
    case ScalarFunction::kRepeat:
      return Value::String(Repeat(text(0), number(1)));
    case ScalarFunction::kReverse:
      return Value::String(Reverse(text(0)));
    case ScalarFunction::kStartsWith:
      return Value::Boolean(std::string_view(text(0)).starts_with(text(1)));
    case ScalarFunction::kChr:
      return Value::String(Chr(number(0)));
    case ScalarFunction::kAscii:
      return Value::Int(FirstCodePoint(text(0)));
    case ScalarFunction::kLPad:
    case ScalarFunction::kRPad:
      return Value::String(Pad(text(0), number(1), args.size() > 2 ? text(2) : " ",
                               function == ScalarFunction::kLPad));
    case ScalarFunction::kRegexpReplace:
      return Value::String(
          regexp->Replace(text(0), text(1), text(2), args.size() > 3 ? text(3) : ""));
    case ScalarFunction::kRegexpMatch:
      return regexp->FirstMatch(text(0), text(1), args.size() > 2 ? text(2) : "");
    case ScalarFunction::kRegexMatch:
      return Value::Boolean(regexp->Matches(text(0), text(1), false));
    case ScalarFunction::kRegexMatchInsensitive:
      return Value::Boolean(regexp->Matches(text(0), text(1), true));
    case ScalarFunction::kRegexNotMatch:
      return Value::Boolean(!regexp->Matches(text(0), text(1), false));
    case ScalarFunction::kRegexNotMatchInsensitive:
      return Value::Boolean(!regexp->Matches(text(0), text(1), true));
    default:
      break;
  }
  throw SqlError(sqlstate::kInternalError, "not a string function");
}

}  // namespace

bool EvaluateScalarFunction(const planner::BoundExpr& expr, std::vector<Column>* arg_columns,
                            size_t rows, Column* out) {
  std::vector<Column>& args = *arg_columns;
  ScalarFunction function = expr.function;
  *out = Column(expr.type);
  out->Reserve(rows);
  if (function == ScalarFunction::kNullIf) {
    for (size_t i = 0; i < rows; ++i) {
      bool equal =
          !args[0].nulls[i] && !args[1].nulls[i] && CompareRows(args[0], i, args[1], i) == 0;
      if (equal) {
        out->AppendNull();
      } else {
        out->AppendFrom(args[0], i);
      }
    }
    return true;
  }
  if (function == ScalarFunction::kGreatest || function == ScalarFunction::kLeast) {
    int want = function == ScalarFunction::kGreatest ? 1 : -1;
    for (size_t i = 0; i < rows; ++i) {
      const Column* best = nullptr;
      for (const Column& arg : args) {
        if (arg.nulls[i]) continue;
        if (!best || CompareRows(arg, i, *best, i) == want) best = &arg;
      }
      if (best) {
        out->AppendFrom(*best, i);
      } else {
        out->AppendNull();
      }
    }
    return true;
  }
  if (function == ScalarFunction::kConcatFunction) {
    for (size_t i = 0; i < rows; ++i) {
      std::string text;
      for (const Column& arg : args) {
        if (!arg.nulls[i]) text += arg.strings[i];
      }
      out->AppendString(std::move(text));
    }
    return true;
  }
  bool is_string = IsStringFunction(function);
  if (!is_string && !IsMathFunction(function)) return false;
  // Strict functions: NULL in any argument gives NULL.
  RegexEvaluator regexp;
  for (size_t i = 0; i < rows; ++i) {
    bool null = false;
    for (const Column& arg : args) null = null || arg.nulls[i];
    if (null) {
      out->AppendNull();
    } else if (is_string) {
      out->AppendValue(StringRow(function, args, i, &regexp));
    } else if (expr.type.IsDecimal()) {
      out->AppendDecimal(DecimalMath(function, args, i));
    } else {
      out->AppendDouble(
          Math(function, args[0].doubles[i], args.size() > 1 ? args[1].doubles[i] : 0.0));
    }
  }
  return true;
}

}  // namespace stave::executor
