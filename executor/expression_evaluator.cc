#include "executor/expression_evaluator.h"

#include <cmath>
#include <limits>

#include "common/jsonb.h"
#include "common/sql_error.h"
#include "common/utf8.h"
#include "common/value_cast.h"
#include "executor/bytea_jsonb_array_functions.h"
#include "executor/scalar_functions.h"
#include "executor/subquery_evaluation.h"
#include "executor/temporal_functions.h"

namespace stave::executor {
namespace {

using planner::BoundExpr;
using planner::ScalarFunction;

[[noreturn]] void ThrowOverflow(DataType type) {
  throw SqlError(sqlstate::kNumericValueOutOfRange, type.Name() + " out of range");
}

[[noreturn]] void ThrowDivisionByZero() {
  throw SqlError(sqlstate::kDivisionByZero, "division by zero");
}

Column Broadcast(const Value& value, DataType type, size_t rows) {
  Column column(type);
  column.Reserve(rows);
  for (size_t i = 0; i < rows; ++i) column.AppendValue(value);
  return column;
}

Column IntArithmetic(ScalarFunction function, DataType type, const Column& left,
                     const Column& right) {
  size_t rows = left.size();
  Column out(type);
  out.ints.resize(rows);
  out.nulls.resize(rows);
  for (size_t i = 0; i < rows; ++i) {
    out.nulls[i] = left.nulls[i] | right.nulls[i];
    if (out.nulls[i]) continue;
    int64_t a = left.ints[i], b = right.ints[i], r = 0;
    bool overflow = false;
    switch (function) {
      case ScalarFunction::kAdd:
        overflow = __builtin_add_overflow(a, b, &r);
        break;
      case ScalarFunction::kSubtract:
        overflow = __builtin_sub_overflow(a, b, &r);
        break;
      case ScalarFunction::kMultiply:
        overflow = __builtin_mul_overflow(a, b, &r);
        break;
      case ScalarFunction::kDivide:
        if (b == 0) ThrowDivisionByZero();
        if (a == std::numeric_limits<int64_t>::min() && b == -1) {
          overflow = true;
        } else {
          r = a / b;
        }
        break;
      default:  // kModulo
        if (b == 0) ThrowDivisionByZero();
        r = b == -1 ? 0 : a % b;
        break;
    }
    if (overflow) ThrowOverflow(type);
    if (type.id != TypeId::kInt64) CheckIntegerRange(r, type);
    out.ints[i] = r;
  }
  return out;
}

[[noreturn]] void ThrowFloatOutOfRange(const char* what) {
  throw SqlError(sqlstate::kNumericValueOutOfRange, std::string("value out of range: ") + what);
}

Column FloatArithmetic(ScalarFunction function, DataType type, const Column& left,
                       const Column& right) {
  size_t rows = left.size();
  Column out(type);
  out.doubles.resize(rows);
  out.nulls.resize(rows);
  bool single = type.id == TypeId::kFloat32;
  for (size_t i = 0; i < rows; ++i) {
    out.nulls[i] = left.nulls[i] | right.nulls[i];
    if (out.nulls[i]) continue;
    double a = left.doubles[i], b = right.doubles[i], r = 0;
    switch (function) {
      case ScalarFunction::kAdd:
        r = a + b;
        break;
      case ScalarFunction::kSubtract:
        r = a - b;
        break;
      case ScalarFunction::kMultiply:
        r = a * b;
        break;
      default:  // kDivide
        if (b == 0) ThrowDivisionByZero();
        r = a / b;
        break;
    }
    if (single) r = static_cast<float>(r);
    // As PostgreSQL: infinity only from an infinite operand, zero from a product or quotient
    // only when the dividend or a factor is zero.
    if (std::isinf(r) && !std::isinf(a) && !std::isinf(b)) ThrowFloatOutOfRange("overflow");
    if (r == 0 && a != 0 &&
        ((function == ScalarFunction::kMultiply && b != 0) ||
         (function == ScalarFunction::kDivide && !std::isinf(b)))) {
      ThrowFloatOutOfRange("underflow");
    }
    out.doubles[i] = r;
  }
  return out;
}

// Numeric arithmetic runs on common/decimal.h's 128-bit values, which live inside the
// column's vector: no allocation per row.
Column DecimalArithmetic(ScalarFunction function, DataType type, const Column& left,
                         const Column& right) {
  size_t rows = left.size();
  Column out(type);
  out.decimals.resize(rows);
  out.nulls.resize(rows);
  for (size_t i = 0; i < rows; ++i) {
    out.nulls[i] = left.nulls[i] | right.nulls[i];
    if (out.nulls[i]) continue;
    const Decimal& a = left.decimals[i];
    const Decimal& b = right.decimals[i];
    switch (function) {
      case ScalarFunction::kAdd:
        out.decimals[i] = decimal::Add(a, b);
        break;
      case ScalarFunction::kSubtract:
        out.decimals[i] = decimal::Subtract(a, b);
        break;
      case ScalarFunction::kMultiply:
        out.decimals[i] = decimal::Multiply(a, b);
        break;
      case ScalarFunction::kDivide:
        out.decimals[i] = decimal::Divide(a, b);
        break;
      default:  // kModulo
        out.decimals[i] = decimal::Modulo(a, b);
        break;
    }
  }
  return out;
}

Column Comparison(ScalarFunction function, const Column& left, const Column& right) {
  size_t rows = left.size();
  Column out(TypeId::kBoolean);
  out.ints.resize(rows);
  out.nulls.resize(rows);
  for (size_t i = 0; i < rows; ++i) {
    out.nulls[i] = left.nulls[i] | right.nulls[i];
    if (out.nulls[i]) continue;
    int c = CompareRows(left, i, right, i);
    bool r = false;
    switch (function) {
      case ScalarFunction::kEqual:
        r = c == 0;
        break;
      case ScalarFunction::kNotEqual:
        r = c != 0;
        break;
      case ScalarFunction::kLess:
        r = c < 0;
        break;
      case ScalarFunction::kLessEqual:
        r = c <= 0;
        break;
      case ScalarFunction::kGreater:
        r = c > 0;
        break;
      default:
        r = c >= 0;
        break;
    }
    out.ints[i] = r;
  }
  return out;
}

// Evaluates `expr` only on rows with mask[i] set; other rows come out NULL.
Column EvaluateMasked(const BoundExpr& expr, const Chunk& chunk, const std::vector<uint8_t>& mask) {
  size_t selected = 0;
  for (uint8_t m : mask) selected += m;
  if (selected == mask.size()) return Evaluate(expr, chunk);
  Column out(expr.type);
  out.Reserve(mask.size());
  if (selected == 0) {
    for (size_t i = 0; i < mask.size(); ++i) out.AppendNull();
    return out;
  }
  Column part = Evaluate(expr, chunk.Select(mask));
  size_t next = 0;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i]) {
      out.AppendFrom(part, next++);
    } else {
      out.AppendNull();
    }
  }
  return out;
}

Column Logical(const BoundExpr& expr, const Chunk& chunk) {
  bool is_and = expr.function == ScalarFunction::kAnd;
  Column left = Evaluate(*expr.args[0], chunk);
  size_t rows = chunk.size();
  // The right side matters only where the left does not decide the result alone.
  std::vector<uint8_t> undecided(rows);
  for (size_t i = 0; i < rows; ++i) {
    undecided[i] = left.nulls[i] || (left.ints[i] != 0) == is_and;
  }
  Column right = EvaluateMasked(*expr.args[1], chunk, undecided);
  Column out(TypeId::kBoolean);
  out.ints.resize(rows);
  out.nulls.resize(rows);
  for (size_t i = 0; i < rows; ++i) {
    if (!undecided[i]) {
      out.ints[i] = is_and ? 0 : 1;
      continue;
    }
    bool l_null = left.nulls[i], r_null = right.nulls[i];
    bool l = !l_null && left.ints[i], r = !r_null && right.ints[i];
    if (is_and) {
      if ((!l_null && !l) || (!r_null && !r)) {
        out.ints[i] = 0;
      } else if (l_null || r_null) {
        out.nulls[i] = 1;
      } else {
        out.ints[i] = 1;
      }
    } else {
      if (l || r) {
        out.ints[i] = 1;
      } else if (l_null || r_null) {
        out.nulls[i] = 1;
      } else {
        out.ints[i] = 0;
      }
    }
  }
  return out;
}

Column Case(const BoundExpr& expr, const Chunk& chunk) {
  size_t rows = chunk.size();
  std::vector<Value> results(rows);
  std::vector<uint8_t> remaining(rows, 1);
  size_t branches = (expr.args.size() - 1) / 2;
  for (size_t b = 0; b < branches; ++b) {
    Column condition = EvaluateMasked(*expr.args[2 * b], chunk, remaining);
    std::vector<uint8_t> taken(rows, 0);
    for (size_t i = 0; i < rows; ++i) {
      taken[i] = remaining[i] && !condition.nulls[i] && condition.ints[i] != 0;
    }
    Column value = EvaluateMasked(*expr.args[2 * b + 1], chunk, taken);
    for (size_t i = 0; i < rows; ++i) {
      if (taken[i]) {
        results[i] = value.GetValue(i);
        remaining[i] = 0;
      }
    }
  }
  Column otherwise = EvaluateMasked(*expr.args.back(), chunk, remaining);
  Column out(expr.type);
  out.Reserve(rows);
  for (size_t i = 0; i < rows; ++i) {
    out.AppendValue(remaining[i] ? otherwise.GetValue(i) : results[i]);
  }
  return out;
}

std::string AsciiLower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string AsciiUpper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

int CompareRows(const Column& a, size_t i, const Column& b, size_t j) {
  switch (a.type.physical()) {
    case PhysicalType::kInt64:
      return a.ints[i] < b.ints[j] ? -1 : (a.ints[i] > b.ints[j] ? 1 : 0);
    case PhysicalType::kFloat64: {
      double x = a.doubles[i], y = b.doubles[j];
      // PostgreSQL orders NaN above every other value.
      if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? (std::isnan(y) ? 0 : 1) : -1;
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case PhysicalType::kString: {
      int c = a.strings[i].compare(b.strings[j]);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case PhysicalType::kDecimal:
      return decimal::Compare(a.decimals[i], b.decimals[j]);
  }
  return 0;
}

bool LikeMatch(std::string_view text, std::string_view pattern) {
  size_t t = 0, p = 0;
  size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      char pc = pattern[p];
      if (pc == '%') {
        star_p = ++p;
        star_t = t;
        continue;
      }
      if (pc == '_') {
        ++p;
        // Skip one whole UTF-8 character.
        ++t;
        while (t < text.size() && (static_cast<uint8_t>(text[t]) & 0xC0) == 0x80) ++t;
        continue;
      }
      if (pc == '\\' && p + 1 < pattern.size()) pc = pattern[++p];
      if (pc == text[t]) {
        ++p;
        ++t;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

Column Evaluate(const BoundExpr& expr, const Chunk& chunk) {
  size_t rows = chunk.size();
  switch (expr.kind) {
    case BoundExpr::Kind::kConstant:
      return Broadcast(expr.constant,
                       expr.type.id == TypeId::kUnknown ? DataType(TypeId::kVarchar) : expr.type,
                       rows);
    case BoundExpr::Kind::kColumn:
      return chunk.columns[expr.column];
    case BoundExpr::Kind::kOuterColumn:
      return EvaluateOuterColumn(expr, chunk);
    case BoundExpr::Kind::kSubquery:
      return EvaluateSubquery(expr, chunk);
    case BoundExpr::Kind::kFunction:
      break;
  }
  switch (expr.function) {
    case ScalarFunction::kAnd:
    case ScalarFunction::kOr:
      return Logical(expr, chunk);
    case ScalarFunction::kCase:
      return Case(expr, chunk);
    default:
      break;
  }
  std::vector<Column> args;
  args.reserve(expr.args.size());
  for (const auto& arg : expr.args) args.push_back(Evaluate(*arg, chunk));

  switch (expr.function) {
    case ScalarFunction::kAdd:
    case ScalarFunction::kSubtract:
    case ScalarFunction::kMultiply:
    case ScalarFunction::kDivide:
    case ScalarFunction::kModulo:
      if (args[0].type.IsTemporal() || args[1].type.IsTemporal()) {
        return TemporalArithmetic(expr.function, expr.type, args[0], args[1]);
      }
      if (expr.type.IsInteger()) return IntArithmetic(expr.function, expr.type, args[0], args[1]);
      if (expr.type.IsDecimal()) {
        return DecimalArithmetic(expr.function, expr.type, args[0], args[1]);
      }
      return FloatArithmetic(expr.function, expr.type, args[0], args[1]);
    case ScalarFunction::kEqual:
    case ScalarFunction::kNotEqual:
    case ScalarFunction::kLess:
    case ScalarFunction::kLessEqual:
    case ScalarFunction::kGreater:
    case ScalarFunction::kGreaterEqual:
      return Comparison(expr.function, args[0], args[1]);
    case ScalarFunction::kIsNull:
    case ScalarFunction::kIsNotNull: {
      Column out(TypeId::kBoolean);
      out.ints.resize(rows);
      out.nulls.assign(rows, 0);
      bool want_null = expr.function == ScalarFunction::kIsNull;
      for (size_t i = 0; i < rows; ++i) out.ints[i] = (args[0].nulls[i] != 0) == want_null;
      return out;
    }
    case ScalarFunction::kNot: {
      Column out = std::move(args[0]);
      for (size_t i = 0; i < rows; ++i) out.ints[i] = !out.ints[i];
      return out;
    }
    case ScalarFunction::kNegate: {
      if (expr.type.id == TypeId::kInterval) return NegateIntervals(std::move(args[0]));
      Column out = std::move(args[0]);
      for (size_t i = 0; i < rows; ++i) {
        if (out.nulls[i]) continue;
        if (expr.type.IsFloat()) {
          out.doubles[i] = -out.doubles[i];
        } else if (expr.type.IsDecimal()) {
          out.decimals[i] = decimal::Negate(out.decimals[i]);
        } else {
          if (out.ints[i] == std::numeric_limits<int64_t>::min()) ThrowOverflow(expr.type);
          out.ints[i] = -out.ints[i];
          CheckIntegerRange(out.ints[i], expr.type);
        }
      }
      return out;
    }
    case ScalarFunction::kAbs: {
      Column out = std::move(args[0]);
      for (size_t i = 0; i < rows; ++i) {
        if (out.nulls[i]) continue;
        if (expr.type.IsFloat()) {
          out.doubles[i] = std::fabs(out.doubles[i]);
        } else if (expr.type.IsDecimal()) {
          out.decimals[i] = decimal::Abs(out.decimals[i]);
        } else {
          if (out.ints[i] == std::numeric_limits<int64_t>::min()) ThrowOverflow(expr.type);
          out.ints[i] = std::llabs(out.ints[i]);
          CheckIntegerRange(out.ints[i], expr.type);
        }
      }
      return out;
    }
    case ScalarFunction::kCast: {
      Column out(expr.type);
      out.Reserve(rows);
      DataType from = args[0].type;
      // Only an explicit cast is to a varchar of a length (ExpressionBinder::Coerce drops it).
      bool cut = expr.type.IsString() && expr.type.length > 0;
      for (size_t i = 0; i < rows; ++i) {
        Value value = CastValue(args[0].GetValue(i), from, expr.type);
        out.AppendValue(cut ? CutToLength(value, expr.type) : value);
      }
      return out;
    }
    case ScalarFunction::kConcat: {
      Column out(expr.type);  // text, bytea for bytea || bytea, jsonb for jsonb || jsonb.
      out.Reserve(rows);
      bool jsonb = expr.type.id == TypeId::kJsonb;
      for (size_t i = 0; i < rows; ++i) {
        if (args[0].nulls[i] || args[1].nulls[i]) {
          out.AppendNull();
        } else if (jsonb) {
          out.AppendString(jsonb::Concat(args[0].strings[i], args[1].strings[i]));
        } else {
          out.AppendString(args[0].strings[i] + args[1].strings[i]);
        }
      }
      return out;
    }
    case ScalarFunction::kLike:
    case ScalarFunction::kILike: {
      Column out(TypeId::kBoolean);
      out.ints.resize(rows);
      out.nulls.resize(rows);
      bool fold = expr.function == ScalarFunction::kILike;
      for (size_t i = 0; i < rows; ++i) {
        out.nulls[i] = args[0].nulls[i] | args[1].nulls[i];
        if (out.nulls[i]) continue;
        out.ints[i] =
            fold ? LikeMatch(AsciiLower(args[0].strings[i]), AsciiLower(args[1].strings[i]))
                 : LikeMatch(args[0].strings[i], args[1].strings[i]);
      }
      return out;
    }
    case ScalarFunction::kCoalesce: {
      Column out(expr.type);
      out.Reserve(rows);
      for (size_t i = 0; i < rows; ++i) {
        size_t a = 0;
        while (a < args.size() && args[a].nulls[i]) ++a;
        if (a == args.size()) {
          out.AppendNull();
        } else {
          out.AppendFrom(args[a], i);
        }
      }
      return out;
    }
    case ScalarFunction::kLower:
    case ScalarFunction::kUpper: {
      Column out = std::move(args[0]);
      for (size_t i = 0; i < rows; ++i) {
        if (out.nulls[i]) continue;
        out.strings[i] = expr.function == ScalarFunction::kLower
                             ? AsciiLower(std::move(out.strings[i]))
                             : AsciiUpper(std::move(out.strings[i]));
      }
      return out;
    }
    case ScalarFunction::kLength: {
      Column out(TypeId::kInt32);
      out.ints.resize(rows);
      out.nulls = args[0].nulls;
      for (size_t i = 0; i < rows; ++i) {
        if (!out.nulls[i]) out.ints[i] = static_cast<int64_t>(Utf8Length(args[0].strings[i]));
      }
      return out;
    }
    default: {
      Column out;
      if (EvaluateScalarFunction(expr, &args, rows, &out)) return out;
      if (EvaluateTemporalFunction(expr, &args, rows, &out)) return out;
      if (EvaluateByteaJsonbArrayFunction(expr, &args, rows, &out)) return out;
      break;
    }
  }
  throw SqlError(
      sqlstate::kInternalError,
      "cannot evaluate function " + std::string(planner::ScalarFunctionName(expr.function)));
}

std::vector<uint8_t> EvaluatePredicate(const BoundExpr& expr, const Chunk& chunk) {
  Column result = Evaluate(expr, chunk);
  std::vector<uint8_t> keep(chunk.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = !result.nulls[i] && result.ints[i] != 0;
  return keep;
}

}  // namespace stave::executor
