#include "planner/expression_binder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <limits>
#include <map>

#include "common/array_value.h"
#include "common/decimal.h"
#include "common/sql_error.h"
#include "common/temporal.h"
#include "common/utf8.h"
#include "common/value_cast.h"
#include "common/version.h"
#include "planner/subquery_binder.h"
#include "planner/temporal_binding.h"
#include "planner/unnest_binding.h"

namespace stave::planner {
namespace {

using parser::Expr;
using parser::ExprKind;

std::string JoinName(const parser::QualifiedName& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += ".";
    text += names[i];
  }
  return text;
}

// The function's own name, allowing the pg_catalog schema clients often write.
std::string FunctionName(const parser::QualifiedName& names) {
  if (names.size() == 2 && names[0] == "pg_catalog") return names[1];
  if (names.size() == 1) return names[0];
  return JoinName(names);
}

int IntegerRank(DataType type) {
  switch (type.id) {
    case TypeId::kInt16:
      return 1;
    case TypeId::kInt32:
      return 2;
    default:
      return 3;
  }
}

// The type both numeric operands become, as PostgreSQL's numeric promotion does: floats
// win, then numeric (whose precision an expression drops), then the wider integer.
DataType CommonNumericType(DataType left, DataType right) {
  if (left.IsFloat() || right.IsFloat()) {
    if (left.id == TypeId::kFloat32 && right.id == TypeId::kFloat32) return TypeId::kFloat32;
    return TypeId::kFloat64;
  }
  if (left.IsDecimal() || right.IsDecimal()) {
    // Equal types keep their modifier (CASE and UNION of numeric(10,2) stay numeric(10,2)).
    return left == right ? left : DataType(TypeId::kNumeric);
  }
  return IntegerRank(left) >= IntegerRank(right) ? left : right;
}

bool IsUntypedLiteral(const BoundExprPtr& expr) { return expr->type.id == TypeId::kUnknown; }

// A string function's arguments ('s' text, 'i' integer; the last `optional` may be left
// out) and result.
struct StringFunction {
  ScalarFunction function;
  std::string_view signature;
  size_t optional;
  DataType result;
};

const StringFunction* FindStringFunction(std::string_view name) {
  static const std::map<std::string_view, StringFunction> functions = {
      {"substr", {ScalarFunction::kSubstr, "sii", 1, TypeId::kVarchar}},
      {"substring", {ScalarFunction::kSubstr, "sii", 1, TypeId::kVarchar}},
      {"btrim", {ScalarFunction::kTrim, "ss", 1, TypeId::kVarchar}},
      {"trim", {ScalarFunction::kTrim, "ss", 1, TypeId::kVarchar}},
      {"ltrim", {ScalarFunction::kLTrim, "ss", 1, TypeId::kVarchar}},
      {"rtrim", {ScalarFunction::kRTrim, "ss", 1, TypeId::kVarchar}},
      {"replace", {ScalarFunction::kReplace, "sss", 0, TypeId::kVarchar}},
      {"split_part", {ScalarFunction::kSplitPart, "ssi", 0, TypeId::kVarchar}},
      {"strpos", {ScalarFunction::kStrPos, "ss", 0, TypeId::kInt32}},
      {"position", {ScalarFunction::kStrPos, "ss", 0, TypeId::kInt32}},
      {"left", {ScalarFunction::kLeft, "si", 0, TypeId::kVarchar}},
      {"right", {ScalarFunction::kRight, "si", 0, TypeId::kVarchar}},
      {"repeat", {ScalarFunction::kRepeat, "si", 0, TypeId::kVarchar}},
      {"reverse", {ScalarFunction::kReverse, "s", 0, TypeId::kVarchar}},
      {"starts_with", {ScalarFunction::kStartsWith, "ss", 0, TypeId::kBoolean}},
      {"chr", {ScalarFunction::kChr, "i", 0, TypeId::kVarchar}},
      {"ascii", {ScalarFunction::kAscii, "s", 0, TypeId::kInt32}},
      {"lpad", {ScalarFunction::kLPad, "sis", 1, TypeId::kVarchar}},
      {"rpad", {ScalarFunction::kRPad, "sis", 1, TypeId::kVarchar}},
      {"regexp_replace", {ScalarFunction::kRegexpReplace, "ssss", 1, TypeId::kVarchar}},
      {"regexp_match",
       {ScalarFunction::kRegexpMatch, "sss", 1, DataType::ArrayOf(TypeId::kVarchar)}},
      // The regular expression match operators (~, ~*, !~, !~*), by PostgreSQL's names.
      {"textregexeq", {ScalarFunction::kRegexMatch, "ss", 0, TypeId::kBoolean}},
      {"texticregexeq", {ScalarFunction::kRegexMatchInsensitive, "ss", 0, TypeId::kBoolean}},
      {"textregexne", {ScalarFunction::kRegexNotMatch, "ss", 0, TypeId::kBoolean}},
      {"texticregexne", {ScalarFunction::kRegexNotMatchInsensitive, "ss", 0, TypeId::kBoolean}},
  };
  auto it = functions.find(name);
  return it == functions.end() ? nullptr : &it->second;
}

struct MathFunction {
  ScalarFunction function;
  size_t arity;
  bool optional_digits = false;  ///< round(x, n) and trunc(x, n) over numeric.
};

const MathFunction* FindMathFunction(std::string_view name) {
  static const std::map<std::string_view, MathFunction> functions = {
      {"round", {ScalarFunction::kRound, 1, true}}, {"floor", {ScalarFunction::kFloor, 1}},
      {"ceil", {ScalarFunction::kCeil, 1}},         {"ceiling", {ScalarFunction::kCeil, 1}},
      {"trunc", {ScalarFunction::kTrunc, 1, true}}, {"sqrt", {ScalarFunction::kSqrt, 1}},
      {"power", {ScalarFunction::kPower, 2}},       {"pow", {ScalarFunction::kPower, 2}},
      {"exp", {ScalarFunction::kExp, 1}},           {"ln", {ScalarFunction::kLn, 1}},
      {"log", {ScalarFunction::kLog10, 1}},         {"log10", {ScalarFunction::kLog10, 1}},
      {"sign", {ScalarFunction::kSign, 1}},         {"mod", {ScalarFunction::kModulo, 2}},
  };
  auto it = functions.find(name);
  return it == functions.end() ? nullptr : &it->second;
}

}  // namespace

DataType CommonType(const std::vector<BoundExprPtr>& args, std::string_view what, int position) {
  DataType type = TypeId::kUnknown;
  for (const auto& arg : args) {
    DataType arg_type = arg->type;
    if (arg_type.id == TypeId::kUnknown) continue;
    if (type.id == TypeId::kUnknown) {
      type = arg_type;
    } else if (type.IsNumeric() && arg_type.IsNumeric()) {
      type = CommonNumericType(type, arg_type);
    } else if (IsImplicitTemporalCast(type, arg_type)) {
      type = arg_type;  // date and timestamp meet at timestamp, as PostgreSQL's.
    } else if (IsImplicitTemporalCast(arg_type, type)) {
      // Already the wider type.
    } else if (!(type.IsString() && arg_type.IsString()) && type != arg_type) {
      std::string upper(what);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      throw SqlError(
          sqlstate::kDatatypeMismatch,
          fmt::format("{} types {} and {} cannot be matched", upper, type.Name(), arg_type.Name()),
          position);
    }
  }
  return type.id == TypeId::kUnknown ? DataType(TypeId::kVarchar) : type;
}

namespace {

// `expr` as its type's output text (concat's "any" arguments): strings as they are, untyped
// literals parsed as text, booleans as t and f (a cast would say true and false), other
// types cast.
BoundExprPtr AsText(BoundExprPtr expr, int position) {
  if (expr->type.IsString()) return expr;
  if (IsUntypedLiteral(expr)) return ExpressionBinder::Coerce(expr, TypeId::kVarchar, position);
  if (expr->type.id == TypeId::kBoolean) {
    auto text = [](const char* value) {
      return BoundExpr::MakeConstant(Value::String(value), TypeId::kVarchar);
    };
    BoundExprPtr is_false = BoundExpr::MakeFunction(ScalarFunction::kNot, TypeId::kBoolean, {expr});
    return BoundExpr::MakeFunction(ScalarFunction::kCase, TypeId::kVarchar,
                                   {expr, text("t"), is_false, text("f"),
                                    BoundExpr::MakeConstant(Value::Null(), TypeId::kVarchar)});
  }
  return BoundExpr::MakeFunction(ScalarFunction::kCast, TypeId::kVarchar, {expr});
}

// `pattern` with `ESCAPE escape` rewritten for the LIKE evaluator, whose escape is the
// backslash (PostgreSQL's default): the escape character's escapes become backslashes, and
// other backslashes become literal ones. An empty escape turns escaping off. Both must be
// constants (0A000 otherwise); an escape of more than one character is 22025, as in
// PostgreSQL.
BoundExprPtr WithBackslashEscape(const BoundExprPtr& pattern, const BoundExprPtr& escape,
                                 const parser::LikeExpr& like) {
  if (escape->kind != BoundExpr::Kind::kConstant || pattern->kind != BoundExpr::Kind::kConstant) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "LIKE ... ESCAPE needs a constant pattern and escape character",
                   like.escape->position);
  }
  if (escape->constant.is_null() || pattern->constant.is_null()) {
    return BoundExpr::MakeConstant(Value::Null(), TypeId::kVarchar);
  }
  std::string_view character = escape->constant.string_value();
  if (Utf8Length(character) > 1) {
    throw SqlError("22025", "invalid escape string", like.escape->position)
        .WithHint("Escape string must be empty or one character.");
  }
  std::string_view text = pattern->constant.string_value();
  std::string rewritten;
  for (size_t i = 0; i < text.size();) {
    if (!character.empty() && text.compare(i, character.size(), character) == 0) {
      rewritten += '\\';
      i += character.size();
      if (i < text.size()) rewritten += text[i++];
      continue;
    }
    if (text[i] == '\\') rewritten += '\\';
    rewritten += text[i++];
  }
  return BoundExpr::MakeConstant(Value::String(std::move(rewritten)), TypeId::kVarchar);
}

[[noreturn]] void ThrowNoOperator(std::string_view op, DataType left, DataType right,
                                  int position) {
  throw SqlError(sqlstate::kUndefinedFunction,
                 fmt::format("operator does not exist: {} {} {}", left.Name(), op, right.Name()),
                 position)
      .WithHint(
          "No operator matches the given name and argument types. You might need to add "
          "explicit type casts.");
}

}  // namespace

bool IsAggregateFunction(const parser::QualifiedName& name) {
  std::string function = FunctionName(name);
  return function == "count" || function == "sum" || function == "min" || function == "max" ||
         function == "avg" || function == "array_agg" || function == "string_agg";
}

bool IsWindowOnlyFunction(const parser::QualifiedName& name) {
  std::string function = FunctionName(name);
  return function == "row_number" || function == "rank" || function == "dense_rank";
}

bool ContainsAggregate(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::kFunctionCall: {
      const auto& call = static_cast<const parser::FunctionCallExpr&>(expr);
      // With OVER, an aggregate is a window function: it does not group the query.
      if (IsAggregateFunction(call.name) && !call.over) return true;
      for (const auto& arg : call.args) {
        if (ContainsAggregate(*arg)) return true;
      }
      return false;
    }
    case ExprKind::kUnary:
      return ContainsAggregate(*static_cast<const parser::UnaryExpr&>(expr).operand);
    case ExprKind::kBinary: {
      const auto& binary = static_cast<const parser::BinaryExpr&>(expr);
      return ContainsAggregate(*binary.left) || ContainsAggregate(*binary.right);
    }
    case ExprKind::kCase: {
      const auto& case_expr = static_cast<const parser::CaseExpr&>(expr);
      if (case_expr.operand && ContainsAggregate(*case_expr.operand)) return true;
      for (const auto& [when, then] : case_expr.when_then) {
        if (ContainsAggregate(*when) || ContainsAggregate(*then)) return true;
      }
      return case_expr.else_result && ContainsAggregate(*case_expr.else_result);
    }
    case ExprKind::kCast:
      return ContainsAggregate(*static_cast<const parser::CastExpr&>(expr).operand);
    case ExprKind::kIsNull:
      return ContainsAggregate(*static_cast<const parser::IsNullExpr&>(expr).operand);
    case ExprKind::kBetween: {
      const auto& between = static_cast<const parser::BetweenExpr&>(expr);
      return ContainsAggregate(*between.operand) || ContainsAggregate(*between.lower) ||
             ContainsAggregate(*between.upper);
    }
    case ExprKind::kInList: {
      const auto& in = static_cast<const parser::InListExpr&>(expr);
      if (ContainsAggregate(*in.operand)) return true;
      for (const auto& item : in.list) {
        if (ContainsAggregate(*item)) return true;
      }
      return false;
    }
    case ExprKind::kLike: {
      const auto& like = static_cast<const parser::LikeExpr&>(expr);
      return ContainsAggregate(*like.operand) || ContainsAggregate(*like.pattern);
    }
    case ExprKind::kSubquery: {
      // The subquery's own aggregates belong to it, not to the query around it.
      const auto& subquery = static_cast<const parser::SubqueryExpr&>(expr);
      return subquery.operand && ContainsAggregate(*subquery.operand);
    }
    case ExprKind::kArrayConstructor: {
      const auto& constructor = static_cast<const parser::ArrayConstructorExpr&>(expr);
      for (const auto& element : constructor.elements) {
        if (ContainsAggregate(*element)) return true;
      }
      return false;
    }
    case ExprKind::kSubscript: {
      const auto& subscript = static_cast<const parser::SubscriptExpr&>(expr);
      return ContainsAggregate(*subscript.array) || ContainsAggregate(*subscript.index);
    }
    case ExprKind::kQuantifiedComparison: {
      const auto& quantified = static_cast<const parser::QuantifiedComparisonExpr&>(expr);
      return ContainsAggregate(*quantified.operand) || ContainsAggregate(*quantified.array);
    }
    default:
      return false;
  }
}

DataType ResolveType(const parser::TypeName& type) {
  // Clients qualify built-in types with their schema: pg_catalog.text.
  std::string_view name = type.name;
  if (name.starts_with("pg_catalog.")) name.remove_prefix(std::string_view("pg_catalog.").size());
  // PostgreSQL's catalogs' own types, as Stave reports the catalogs' columns.
  if (name == "name" || name == "\"char\"" || name == "char" || name == "character") name = "text";
  std::optional<DataType> resolved = DataTypeFromName(name);
  if (!resolved) {
    throw SqlError(sqlstate::kUndefinedObject, fmt::format("type \"{}\" does not exist", type.name),
                   type.position);
  }
  if (type.array_dimensions > 1) {
    throw SqlError(sqlstate::kFeatureNotSupported, "multidimensional arrays are not supported",
                   type.position);
  }
  if (type.array_dimensions == 1) return DataType::ArrayOf(resolved->id);
  if (resolved->IsDecimal() && !type.modifiers.empty()) {
    // PostgreSQL's numeric typmod checks (numerictypmodin), with its messages.
    if (type.modifiers.size() > 2) {
      throw SqlError(sqlstate::kInvalidParameterValue, "invalid NUMERIC type modifier",
                     type.position);
    }
    int64_t precision = type.modifiers[0];
    int64_t scale = type.modifiers.size() == 2 ? type.modifiers[1] : 0;
    if (precision < 1 || precision > decimal::kMaxPrecision) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("NUMERIC precision {} must be between 1 and {}", precision,
                                 decimal::kMaxPrecision),
                     type.position);
    }
    if (scale < -decimal::kMaxTypmodScale || scale > decimal::kMaxTypmodScale) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("NUMERIC scale {} must be between {} and {}", scale,
                                 -decimal::kMaxTypmodScale, decimal::kMaxTypmodScale),
                     type.position);
    }
    return DataType::Numeric(static_cast<int16_t>(precision), static_cast<int16_t>(scale));
  }
  if (resolved->IsString() && !type.modifiers.empty() && name != "text") {
    // PostgreSQL's varchar typmod checks (anychar_typmodin), with its messages.
    constexpr int64_t kMaxLength = 10485760;
    if (type.modifiers.size() > 1) {
      throw SqlError(sqlstate::kInvalidParameterValue, "invalid type modifier", type.position);
    }
    int64_t length = type.modifiers[0];
    if (length < 1) {
      throw SqlError(sqlstate::kInvalidParameterValue, "length for type varchar must be at least 1",
                     type.position);
    }
    if (length > kMaxLength) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("length for type varchar cannot exceed {}", kMaxLength),
                     type.position);
    }
    return DataType::Varchar(static_cast<int32_t>(length));
  }
  return *resolved;
}

std::string DefaultColumnName(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::kSubquery: {
      // As PostgreSQL: EXISTS is "exists", a scalar subquery takes its column's name.
      const auto& subquery = static_cast<const parser::SubqueryExpr&>(expr);
      if (subquery.subquery_kind == parser::SubqueryKind::kExists) return "exists";
      if (subquery.subquery_kind == parser::SubqueryKind::kArray) return "array";
      if (subquery.subquery_kind != parser::SubqueryKind::kScalar) return "?column?";
      const parser::SelectStatement* query = subquery.query.get();
      while (query->set_left) query = query->set_left.get();
      if (query->items.empty()) return "?column?";
      if (!query->items[0].alias.empty()) return query->items[0].alias;
      return DefaultColumnName(*query->items[0].expr);
    }
    case ExprKind::kColumnRef:
      return static_cast<const parser::ColumnRefExpr&>(expr).names.back();
    case ExprKind::kFunctionCall: {
      const auto& call = static_cast<const parser::FunctionCallExpr&>(expr);
      // `(record).x` is named x, as in PostgreSQL.
      if (call.name.back() == "_pg_expandarray_field" && call.args.size() == 2 &&
          call.args[1]->kind == ExprKind::kLiteral) {
        return static_cast<const parser::LiteralExpr&>(*call.args[1]).value;
      }
      return call.name.back();
    }
    case ExprKind::kCast: {
      // As PostgreSQL's FigureColname: the operand's name when it has one of its own (a
      // column, a function, an array, a subscript of one, a subquery), else the type's.
      const auto& cast = static_cast<const parser::CastExpr&>(expr);
      switch (cast.operand->kind) {
        case ExprKind::kColumnRef:
        case ExprKind::kFunctionCall:
        case ExprKind::kArrayConstructor:
        case ExprKind::kSubscript:
        case ExprKind::kSubquery: {
          std::string name = DefaultColumnName(*cast.operand);
          if (name != "?column?") return name;
          break;
        }
        default:
          break;
      }
      std::optional<DataType> type = DataTypeFromName(cast.type.name);
      if (!type) return cast.type.name;
      switch (type->id) {
        case TypeId::kBoolean:
          return "bool";
        case TypeId::kInt16:
          return "int2";
        case TypeId::kInt32:
          return "int4";
        case TypeId::kInt64:
          return "int8";
        case TypeId::kFloat32:
          return "float4";
        case TypeId::kFloat64:
          return "float8";
        case TypeId::kVarchar:
          return cast.type.name == "text" ? "text" : "varchar";
        case TypeId::kDate:
          return "date";
        case TypeId::kTime:
          return "time";
        case TypeId::kTimestamp:
          return "timestamp";
        case TypeId::kTimestampTz:
          return "timestamptz";
        case TypeId::kInterval:
          return "interval";
        case TypeId::kNumeric:
          return "numeric";
        case TypeId::kBytea:
          return "bytea";
        case TypeId::kJsonb:
          return "jsonb";
        default:
          return "?column?";
      }
    }
    case ExprKind::kArrayConstructor:
      return "array";
    case ExprKind::kSubscript: {
      // Named after what it subscripts: `a[1]` is a, `(ARRAY[…])[1]` is array.
      return DefaultColumnName(*static_cast<const parser::SubscriptExpr&>(expr).array);
    }
    case ExprKind::kCase:
      return "case";
    default:
      return "?column?";
  }
}

std::optional<size_t> ExpressionBinder::ResolveColumn(const parser::QualifiedName& names,
                                                      int position) const {
  if (!scope_->sources.empty()) return ResolveJoinedColumn(*scope_, names, position);
  std::string column;
  if (names.size() == 1) {
    column = names[0];
  } else {
    // Accept `t.c`, `public.t.c`, `stave.public.t.c` for the scope's table (or its alias).
    const std::string& qualifier = names[names.size() - 2];
    bool matches =
        scope_->alias.empty() ? qualifier == scope_->table_name : qualifier == scope_->alias;
    if (names.size() > 4 || !matches) {
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("missing FROM-clause entry for table \"{}\"", qualifier),
                     position);
    }
    column = names.back();
  }
  for (size_t i = 0; i < scope_->columns.size(); ++i) {
    if (scope_->columns[i].name == column) return i;
  }
  return std::nullopt;
}

BoundExprPtr ExpressionBinder::BindColumnRef(const parser::ColumnRefExpr& expr) {
  std::optional<size_t> index;
  try {
    index = ResolveColumn(expr.names, expr.position);
  } catch (const SqlError& error) {
    // Another query's table: the scope of a query around this subquery may have it.
    if (error.sqlstate() != sqlstate::kUndefinedTable) throw;
    if (std::optional<BoundExprPtr> outer = ResolveOuterColumn(expr)) return *outer;
    throw;
  }
  if (!index) {
    if (std::optional<BoundExprPtr> outer = ResolveOuterColumn(expr)) return *outer;
    throw SqlError(sqlstate::kUndefinedColumn,
                   fmt::format("column \"{}\" does not exist", JoinName(expr.names)),
                   expr.position);
  }
  return BoundExpr::MakeColumn(*index, scope_->columns[*index].type);
}

BoundExprPtr ExpressionBinder::Bind(const Expr& expr) {
  if (std::optional<BoundExprPtr> intercepted = Intercept(expr)) return *intercepted;
  switch (expr.kind) {
    case ExprKind::kLiteral:
      return BindLiteral(static_cast<const parser::LiteralExpr&>(expr));
    case ExprKind::kParameter:
      return BindParameter(static_cast<const parser::ParameterExpr&>(expr));
    case ExprKind::kColumnRef: {
      const auto& column = static_cast<const parser::ColumnRefExpr&>(expr);
      // current_timestamp, current_date, ... are keywords in PostgreSQL, never columns.
      if (column.names.size() == 1) {
        if (std::optional<BoundExprPtr> now = BindCurrentTimeName(column.names[0], expr.position))
          return *now;
        // current_user, user, ... : keywords in PostgreSQL; a column only when quoted, which
        // the parser no longer tells, so a column of that name wins.
        if (std::optional<BoundExprPtr> value = BindSessionValueName(column.names[0])) {
          try {
            return BindColumnRef(column);
          } catch (const SqlError& error) {
            if (error.sqlstate() != sqlstate::kUndefinedColumn) throw;
            return *value;
          }
        }
      }
      return BindColumnRef(column);
    }
    case ExprKind::kStar:
      throw SqlError(sqlstate::kSyntaxError, "\"*\" is not allowed here", expr.position);
    case ExprKind::kSubquery:
      return BindSubquery(static_cast<const parser::SubqueryExpr&>(expr));
    case ExprKind::kUnary:
      return BindUnary(static_cast<const parser::UnaryExpr&>(expr));
    case ExprKind::kBinary:
      return BindBinary(static_cast<const parser::BinaryExpr&>(expr));
    case ExprKind::kFunctionCall:
      return BindFunction(static_cast<const parser::FunctionCallExpr&>(expr));
    case ExprKind::kCase:
      return BindCase(static_cast<const parser::CaseExpr&>(expr));
    case ExprKind::kCast:
      return BindCast(static_cast<const parser::CastExpr&>(expr));
    case ExprKind::kIsNull: {
      const auto& is_null = static_cast<const parser::IsNullExpr&>(expr);
      BoundExprPtr operand = Bind(*is_null.operand);
      return BoundExpr::MakeFunction(
          is_null.negated ? ScalarFunction::kIsNotNull : ScalarFunction::kIsNull, TypeId::kBoolean,
          {operand});
    }
    case ExprKind::kBetween: {
      const auto& between = static_cast<const parser::BetweenExpr&>(expr);
      BoundExprPtr operand = Bind(*between.operand);
      BoundExprPtr low = BindComparison(ScalarFunction::kGreaterEqual, operand,
                                        Bind(*between.lower), ">=", between.position);
      BoundExprPtr high = BindComparison(ScalarFunction::kLessEqual, operand, Bind(*between.upper),
                                         "<=", between.position);
      BoundExprPtr both =
          BoundExpr::MakeFunction(ScalarFunction::kAnd, TypeId::kBoolean, {low, high});
      if (!between.negated) return both;
      return BoundExpr::MakeFunction(ScalarFunction::kNot, TypeId::kBoolean, {both});
    }
    case ExprKind::kInList: {
      // x IN (a, b) is x = a OR x = b, which has the same three-valued result.
      const auto& in = static_cast<const parser::InListExpr&>(expr);
      BoundExprPtr operand = Bind(*in.operand);
      std::vector<BoundExprPtr> terms;
      for (const auto& item : in.list) {
        terms.push_back(
            BindComparison(ScalarFunction::kEqual, operand, Bind(*item), "=", item->position));
      }
      // A balanced tree of ORs: a list of any length stays a few levels deep, so evaluating
      // it cannot run out of stack.
      while (terms.size() > 1) {
        std::vector<BoundExprPtr> paired;
        for (size_t i = 0; i + 1 < terms.size(); i += 2) {
          paired.push_back(BoundExpr::MakeFunction(ScalarFunction::kOr, TypeId::kBoolean,
                                                   {terms[i], terms[i + 1]}));
        }
        if (terms.size() % 2 == 1) paired.push_back(terms.back());
        terms = std::move(paired);
      }
      BoundExprPtr any = terms.front();
      if (!in.negated) return any;
      return BoundExpr::MakeFunction(ScalarFunction::kNot, TypeId::kBoolean, {any});
    }
    case ExprKind::kLike: {
      const auto& like = static_cast<const parser::LikeExpr&>(expr);
      BoundExprPtr operand = Coerce(Bind(*like.operand), TypeId::kVarchar, like.position);
      BoundExprPtr pattern = Coerce(Bind(*like.pattern), TypeId::kVarchar, like.position);
      if (!operand->type.IsString() || !pattern->type.IsString()) {
        ThrowNoOperator(like.case_insensitive ? "~~*" : "~~", operand->type, pattern->type,
                        like.position);
      }
      if (like.escape) pattern = WithBackslashEscape(pattern, Bind(*like.escape), like);
      BoundExprPtr match = BoundExpr::MakeFunction(
          like.case_insensitive ? ScalarFunction::kILike : ScalarFunction::kLike, TypeId::kBoolean,
          {operand, pattern});
      if (!like.negated) return match;
      return BoundExpr::MakeFunction(ScalarFunction::kNot, TypeId::kBoolean, {match});
    }
    case ExprKind::kArrayConstructor:
      return BindArrayConstructor(static_cast<const parser::ArrayConstructorExpr&>(expr));
    case ExprKind::kSubscript:
      return BindSubscript(static_cast<const parser::SubscriptExpr&>(expr));
    case ExprKind::kQuantifiedComparison:
      return BindQuantifiedComparison(static_cast<const parser::QuantifiedComparisonExpr&>(expr));
  }
  throw SqlError(sqlstate::kInternalError, "unknown expression kind", expr.position);
}

BoundExprPtr ExpressionBinder::BindPredicate(const Expr& expr, std::string_view what) {
  BoundExprPtr bound = Coerce(Bind(expr), TypeId::kBoolean, expr.position);
  if (bound->type.id != TypeId::kBoolean) {
    throw SqlError(
        sqlstate::kDatatypeMismatch,
        fmt::format("argument of {} must be type boolean, not type {}", what, bound->type.Name()),
        expr.position);
  }
  return bound;
}

BoundExprPtr ExpressionBinder::Coerce(BoundExprPtr expr, DataType target, int position) {
  // Only an explicit cast cuts text to a varchar's length; a table checks it on writes.
  target.length = 0;
  if (expr->type == target) return expr;
  if (expr->parameter != nullptr && expr->parameter->type.id == TypeId::kUnknown) {
    // As PostgreSQL does, an untyped parameter takes the type its context asks for first.
    expr->parameter->type = target;
  }
  if (expr->kind == BoundExpr::Kind::kConstant && expr->constant.is_null()) {
    return BoundExpr::MakeConstant(Value::Null(), target);
  }
  if (IsUntypedLiteral(expr)) {
    try {
      return BoundExpr::MakeConstant(CastValue(expr->constant, TypeId::kVarchar, target), target);
    } catch (SqlError& error) {
      throw error.WithPositionIfUnset(position);
    }
  }
  bool allowed = (expr->type.IsNumeric() && target.IsNumeric()) ||
                 (expr->type.IsString() && target.IsString()) ||
                 IsImplicitTemporalCast(expr->type, target);
  if (!allowed) return expr;  // The caller reports the mismatch in its own words.
  if (expr->kind == BoundExpr::Kind::kConstant) {
    try {
      return BoundExpr::MakeConstant(CastValue(expr->constant, expr->type, target), target);
    } catch (SqlError& error) {
      throw error.WithPositionIfUnset(position);
    }
  }
  return BoundExpr::MakeFunction(ScalarFunction::kCast, target, {expr});
}

BoundExprPtr ExpressionBinder::BindParameter(const parser::ParameterExpr& expr) {
  const parser::ParameterSlot& slot = *expr.slot;
  switch (slot.mode) {
    case parser::ParameterSlot::Mode::kNoValue:
      throw SqlError("42P02", fmt::format("there is no parameter ${}", expr.number), expr.position);
    case parser::ParameterSlot::Mode::kBound:
      return BoundExpr::MakeConstant(slot.value, slot.type);
    case parser::ParameterSlot::Mode::kDescribe:
      break;
  }
  // Described only: a NULL of the parameter's type stands for any value it may take.
  if (slot.type.id != TypeId::kUnknown) return BoundExpr::MakeConstant(Value::Null(), slot.type);
  auto untyped = std::make_shared<BoundExpr>();
  untyped->kind = BoundExpr::Kind::kConstant;
  untyped->type = TypeId::kUnknown;
  untyped->constant = Value::Null();
  untyped->parameter = expr.slot;
  return untyped;
}

namespace {

// A numeric literal (one with a point or an exponent, or too large for bigint): numeric, as
// in PostgreSQL, whatever its size.
BoundExprPtr BindNumericLiteral(const parser::LiteralExpr& expr) {
  try {
    return BoundExpr::MakeConstant(Value::Numeric(decimal::Parse(expr.value)), TypeId::kNumeric);
  } catch (SqlError& error) {
    throw error.WithPositionIfUnset(expr.position);
  }
}

}  // namespace

BoundExprPtr ExpressionBinder::BindLiteral(const parser::LiteralExpr& expr) {
  switch (expr.literal_kind) {
    case parser::LiteralKind::kNull:
      return BoundExpr::MakeConstant(Value::Null(), TypeId::kUnknown);
    case parser::LiteralKind::kBoolean:
      return BoundExpr::MakeConstant(Value::Boolean(expr.value == "true"), TypeId::kBoolean);
    case parser::LiteralKind::kInteger: {
      int64_t value = 0;
      auto [end, error] =
          std::from_chars(expr.value.data(), expr.value.data() + expr.value.size(), value);
      if (error != std::errc() || end != expr.value.data() + expr.value.size()) {
        // Beyond bigint an integer literal is a numeric, as in PostgreSQL.
        return BindNumericLiteral(expr);
      }
      bool fits_int32 = value >= std::numeric_limits<int32_t>::min() &&
                        value <= std::numeric_limits<int32_t>::max();
      return BoundExpr::MakeConstant(Value::Int(value),
                                     fits_int32 ? TypeId::kInt32 : TypeId::kInt64);
    }
    case parser::LiteralKind::kDecimal:
      // A number with a point or an exponent is a numeric, as in PostgreSQL: 1.50 keeps its
      // scale, 1e3 is 1000.
      return BindNumericLiteral(expr);
    case parser::LiteralKind::kString:
      return BoundExpr::MakeConstant(Value::String(expr.value), TypeId::kUnknown);
  }
  throw SqlError(sqlstate::kInternalError, "unknown literal", expr.position);
}

BoundExprPtr ExpressionBinder::BindUnary(const parser::UnaryExpr& expr) {
  BoundExprPtr operand = Bind(*expr.operand);
  switch (expr.op) {
    case parser::UnaryOp::kNot: {
      BoundExprPtr boolean = Coerce(operand, TypeId::kBoolean, expr.position);
      if (boolean->type.id != TypeId::kBoolean) {
        throw SqlError(
            sqlstate::kDatatypeMismatch,
            fmt::format("argument of NOT must be type boolean, not type {}", boolean->type.Name()),
            expr.operand->position);
      }
      return BoundExpr::MakeFunction(ScalarFunction::kNot, TypeId::kBoolean, {boolean});
    }
    case parser::UnaryOp::kPlus:
    case parser::UnaryOp::kNegate: {
      if (IsUntypedLiteral(operand)) operand = Coerce(operand, TypeId::kFloat64, expr.position);
      if (operand->type.id == TypeId::kInterval) {
        if (expr.op == parser::UnaryOp::kPlus) return operand;
        if (operand->kind == BoundExpr::Kind::kConstant && !operand->constant.is_null()) {
          try {
            return BoundExpr::MakeConstant(
                Value::String(temporal::EncodeInterval(temporal::NegateInterval(
                    temporal::DecodeInterval(operand->constant.string_value())))),
                operand->type);
          } catch (SqlError& error) {
            throw error.WithPositionIfUnset(expr.position);
          }
        }
        return BoundExpr::MakeFunction(ScalarFunction::kNegate, operand->type, {operand});
      }
      if (!operand->type.IsNumeric()) {
        throw SqlError(
            sqlstate::kUndefinedFunction,
            fmt::format("operator does not exist: {} {}",
                        expr.op == parser::UnaryOp::kPlus ? "+" : "-", operand->type.Name()),
            expr.position);
      }
      if (expr.op == parser::UnaryOp::kPlus) return operand;
      if (operand->kind == BoundExpr::Kind::kConstant && !operand->constant.is_null()) {
        if (operand->type.IsFloat()) {
          return BoundExpr::MakeConstant(Value::Double(-operand->constant.double_value()),
                                         operand->type);
        }
        if (operand->type.IsDecimal()) {
          return BoundExpr::MakeConstant(
              Value::Numeric(decimal::Negate(operand->constant.decimal_value())), operand->type);
        }
        int64_t value = operand->constant.int_value();
        if (value == std::numeric_limits<int64_t>::min()) {
          throw SqlError(sqlstate::kNumericValueOutOfRange, "bigint out of range", expr.position);
        }
        return BoundExpr::MakeConstant(Value::Int(-value), operand->type);
      }
      return BoundExpr::MakeFunction(ScalarFunction::kNegate, operand->type, {operand});
    }
  }
  throw SqlError(sqlstate::kInternalError, "unknown unary operator", expr.position);
}

BoundExprPtr ExpressionBinder::BindComparison(ScalarFunction function, BoundExprPtr left,
                                              BoundExprPtr right, std::string_view op,
                                              int position) {
  if (IsUntypedLiteral(left) && IsUntypedLiteral(right)) {
    left = Coerce(left, TypeId::kVarchar, position);
    right = Coerce(right, TypeId::kVarchar, position);
  } else if (IsUntypedLiteral(left)) {
    left = Coerce(left, right->type, position);
  } else if (IsUntypedLiteral(right)) {
    right = Coerce(right, left->type, position);
  }
  if (left->type.IsNumeric() && right->type.IsNumeric()) {
    DataType common = CommonNumericType(left->type, right->type);
    left = Coerce(left, common, position);
    right = Coerce(right, common, position);
  } else if (left->type.IsString() && right->type.IsString()) {
    // varchar and text compare alike.
  } else if (IsImplicitTemporalCast(left->type, right->type)) {
    left = Coerce(left, right->type, position);  // date < timestamp compares as timestamps.
  } else if (IsImplicitTemporalCast(right->type, left->type)) {
    right = Coerce(right, left->type, position);
  } else if (left->type != right->type) {
    ThrowNoOperator(op, left->type, right->type, position);
  }
  // jsonb values are held as canonical text, whose byte order is not jsonb's order.
  if (left->type.id == TypeId::kJsonb && function != ScalarFunction::kEqual &&
      function != ScalarFunction::kNotEqual) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("operator {} is not supported for type jsonb yet", op), position);
  }
  return BoundExpr::MakeFunction(function, TypeId::kBoolean, {left, right});
}

BoundExprPtr ExpressionBinder::BindArithmetic(const parser::BinaryExpr& expr, BoundExprPtr left,
                                              BoundExprPtr right) {
  static constexpr std::string_view kSymbols[] = {"+", "-", "*", "/", "%"};
  std::string_view symbol =
      kSymbols[static_cast<int>(expr.op) - static_cast<int>(parser::BinaryOp::kAdd)];
  if ((left->type.IsTemporal() || right->type.IsTemporal()) &&
      expr.op != parser::BinaryOp::kModulo) {
    return BindTemporalArithmetic(symbol, left, right, expr.position);
  }
  // An untyped literal takes the other operand's type, as PostgreSQL resolves 'unknown'.
  if (IsUntypedLiteral(left) && !IsUntypedLiteral(right))
    left = Coerce(left, right->type, expr.position);
  if (IsUntypedLiteral(right) && !IsUntypedLiteral(left))
    right = Coerce(right, left->type, expr.position);
  if (!left->type.IsNumeric() || !right->type.IsNumeric()) {
    ThrowNoOperator(symbol, left->type, right->type, expr.position);
  }
  DataType common = CommonNumericType(left->type, right->type);
  if (expr.op == parser::BinaryOp::kModulo && common.IsFloat()) {
    ThrowNoOperator(symbol, left->type, right->type, expr.position);
  }
  left = Coerce(left, common, expr.position);
  right = Coerce(right, common, expr.position);
  ScalarFunction function = ScalarFunction::kAdd;
  switch (expr.op) {
    case parser::BinaryOp::kAdd:
      function = ScalarFunction::kAdd;
      break;
    case parser::BinaryOp::kSubtract:
      function = ScalarFunction::kSubtract;
      break;
    case parser::BinaryOp::kMultiply:
      function = ScalarFunction::kMultiply;
      break;
    case parser::BinaryOp::kDivide:
      function = ScalarFunction::kDivide;
      break;
    default:
      function = ScalarFunction::kModulo;
      break;
  }
  return BoundExpr::MakeFunction(function, common, {left, right});
}

BoundExprPtr ExpressionBinder::BindBinary(const parser::BinaryExpr& expr) {
  if (std::optional<BoundExprPtr> compared = BindObjectIdentifierComparison(expr)) {
    return *compared;
  }
  BoundExprPtr left = Bind(*expr.left);
  BoundExprPtr right = Bind(*expr.right);
  switch (expr.op) {
    case parser::BinaryOp::kAdd:
    case parser::BinaryOp::kSubtract:
    case parser::BinaryOp::kMultiply:
    case parser::BinaryOp::kDivide:
    case parser::BinaryOp::kModulo:
      return BindArithmetic(expr, left, right);
    case parser::BinaryOp::kJsonGet:
    case parser::BinaryOp::kJsonGetText:
    case parser::BinaryOp::kJsonPath:
    case parser::BinaryOp::kJsonPathText:
    case parser::BinaryOp::kContains:
    case parser::BinaryOp::kContainedBy:
      return BindJsonbOrContainment(expr, left, right);
    case parser::BinaryOp::kPower: {
      // As power(): numeric when a side is numeric and neither is a float, else double
      // precision (integers too, as PostgreSQL resolves 2 ^ 3).
      for (BoundExprPtr* side : {&left, &right}) {
        if (IsUntypedLiteral(*side)) *side = Coerce(*side, TypeId::kFloat64, expr.position);
      }
      if (!left->type.IsNumeric() || !right->type.IsNumeric()) {
        ThrowNoOperator("^", left->type, right->type, expr.position);
      }
      bool numeric = (left->type.IsDecimal() || right->type.IsDecimal()) && !left->type.IsFloat() &&
                     !right->type.IsFloat();
      DataType type = numeric ? DataType(TypeId::kNumeric) : DataType(TypeId::kFloat64);
      left = Coerce(left, type, expr.position);
      right = Coerce(right, type, expr.position);
      return BoundExpr::MakeFunction(ScalarFunction::kPower, type, {left, right});
    }
    case parser::BinaryOp::kConcat: {
      if (std::optional<BoundExprPtr> bound = BindByteaOrArrayConcat(left, right, expr.position)) {
        return *bound;
      }
      // PostgreSQL's anynonarray || text: the non-text side is converted to text.
      auto to_text = [&](BoundExprPtr side) {
        if (IsUntypedLiteral(side)) return Coerce(side, TypeId::kVarchar, expr.position);
        if (side->type.IsString()) return side;
        return BoundExpr::MakeFunction(ScalarFunction::kCast, TypeId::kVarchar, {side});
      };
      if (!left->type.IsString() && !right->type.IsString() && !IsUntypedLiteral(left) &&
          !IsUntypedLiteral(right)) {
        ThrowNoOperator("||", left->type, right->type, expr.position);
      }
      return BoundExpr::MakeFunction(ScalarFunction::kConcat, TypeId::kVarchar,
                                     {to_text(left), to_text(right)});
    }
    case parser::BinaryOp::kEqual:
      return BindComparison(ScalarFunction::kEqual, left, right, "=", expr.position);
    case parser::BinaryOp::kNotEqual:
      return BindComparison(ScalarFunction::kNotEqual, left, right, "<>", expr.position);
    case parser::BinaryOp::kLess:
      return BindComparison(ScalarFunction::kLess, left, right, "<", expr.position);
    case parser::BinaryOp::kLessEqual:
      return BindComparison(ScalarFunction::kLessEqual, left, right, "<=", expr.position);
    case parser::BinaryOp::kGreater:
      return BindComparison(ScalarFunction::kGreater, left, right, ">", expr.position);
    case parser::BinaryOp::kGreaterEqual:
      return BindComparison(ScalarFunction::kGreaterEqual, left, right, ">=", expr.position);
    case parser::BinaryOp::kAnd:
    case parser::BinaryOp::kOr: {
      std::string_view word = expr.op == parser::BinaryOp::kAnd ? "AND" : "OR";
      left = Coerce(left, TypeId::kBoolean, expr.left->position);
      right = Coerce(right, TypeId::kBoolean, expr.right->position);
      for (const auto& [side, position] :
           {std::pair{left, expr.left->position}, std::pair{right, expr.right->position}}) {
        if (side->type.id != TypeId::kBoolean) {
          throw SqlError(sqlstate::kDatatypeMismatch,
                         fmt::format("argument of {} must be type boolean, not type {}", word,
                                     side->type.Name()),
                         position);
        }
      }
      return BoundExpr::MakeFunction(
          expr.op == parser::BinaryOp::kAnd ? ScalarFunction::kAnd : ScalarFunction::kOr,
          TypeId::kBoolean, {left, right});
    }
  }
  throw SqlError(sqlstate::kInternalError, "unknown binary operator", expr.position);
}

BoundExprPtr ExpressionBinder::BindFunction(const parser::FunctionCallExpr& expr) {
  std::string name = FunctionName(expr.name);
  // Window functions are bound by WindowExpressionBinder where they are allowed: in the
  // select list and ORDER BY of a query without grouping.
  if (expr.over) {
    throw SqlError("42P20", "window functions are not allowed here", expr.position);
  }
  if (!expr.order_by.empty()) {
    throw SqlError("42809",
                   fmt::format("ORDER BY specified, but {} is not an aggregate function", name),
                   expr.position);
  }
  if (IsSetReturningFunction(expr.name)) {
    // Select lists without grouping bind unnest through SelectListUnnests.
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("set-returning function {}() is not allowed here", name),
                   expr.position)
        .WithHint(
            "unnest() works in FROM, and in the select list of a query without GROUP BY, "
            "aggregates or window functions.");
  }
  if (IsWindowOnlyFunction(expr.name)) {
    throw SqlError("42809", fmt::format("window function {} requires an OVER clause", name),
                   expr.position);
  }
  if (IsAggregateFunction(expr.name)) {
    throw SqlError(sqlstate::kGroupingError,
                   fmt::format("aggregate function {} is not allowed here", name), expr.position);
  }
  if (expr.filter) {
    throw SqlError(sqlstate::kWrongObjectType,
                   fmt::format("FILTER specified, but {} is not an aggregate function", name),
                   expr.position);
  }
  if (std::optional<BoundExprPtr> bound = BindByteaJsonbArrayFunction(name, expr)) return *bound;
  if (std::optional<BoundExprPtr> bound = BindPgCatalogFunction(name, expr)) return *bound;
  if (std::optional<BoundExprPtr> bound = BindSessionFunction(name, expr)) return *bound;
  if (name == "information_schema._pg_expandarray_field") return BindFieldSelection(expr);
  auto expect_args = [&](size_t count) {
    if (expr.args.size() != count || expr.star || expr.distinct) {
      throw SqlError(
          sqlstate::kUndefinedFunction,
          fmt::format("function {}() with {} argument(s) does not exist", name, expr.args.size()),
          expr.position)
          .WithHint("No function matches the given name and argument types.");
    }
  };
  if (name == "version") {
    expect_args(0);
    return BoundExpr::MakeConstant(Value::String(std::string(kVersionString)), TypeId::kVarchar);
  }
  if (name == "current_database") {
    expect_args(0);
    return BoundExpr::MakeConstant(Value::String("stave"), TypeId::kVarchar);
  }
  if (name == "abs") {
    expect_args(1);
    BoundExprPtr arg = Bind(*expr.args[0]);
    if (IsUntypedLiteral(arg)) arg = Coerce(arg, TypeId::kFloat64, expr.position);
    if (!arg->type.IsNumeric()) {
      throw SqlError(sqlstate::kUndefinedFunction,
                     fmt::format("function abs({}) does not exist", arg->type.Name()),
                     expr.position);
    }
    if (arg->type.IsDecimal()) arg = Coerce(arg, TypeId::kNumeric, expr.position);
    return BoundExpr::MakeFunction(ScalarFunction::kAbs, arg->type, {arg});
  }
  if (name == "lower" || name == "upper" || name == "length" || name == "char_length") {
    expect_args(1);
    BoundExprPtr arg = Coerce(Bind(*expr.args[0]), TypeId::kVarchar, expr.position);
    if (!arg->type.IsString()) {
      throw SqlError(sqlstate::kUndefinedFunction,
                     fmt::format("function {}({}) does not exist", name, arg->type.Name()),
                     expr.position);
    }
    if (name == "lower")
      return BoundExpr::MakeFunction(ScalarFunction::kLower, TypeId::kVarchar, {arg});
    if (name == "upper")
      return BoundExpr::MakeFunction(ScalarFunction::kUpper, TypeId::kVarchar, {arg});
    return BoundExpr::MakeFunction(ScalarFunction::kLength, TypeId::kInt32, {arg});
  }
  if (name == "coalesce" || name == "greatest" || name == "least" || name == "nullif") {
    if (name == "nullif") expect_args(2);
    if (expr.args.empty()) expect_args(1);
    std::vector<BoundExprPtr> args;
    for (const auto& arg : expr.args) args.push_back(Bind(*arg));
    DataType type = CommonType(args, name, expr.position);
    for (auto& arg : args) arg = Coerce(arg, type, expr.position);
    ScalarFunction function = name == "coalesce"   ? ScalarFunction::kCoalesce
                              : name == "greatest" ? ScalarFunction::kGreatest
                              : name == "least"    ? ScalarFunction::kLeast
                                                   : ScalarFunction::kNullIf;
    return BoundExpr::MakeFunction(function, type, std::move(args));
  }
  if (name == "concat") {
    if (expr.args.empty()) expect_args(1);
    std::vector<BoundExprPtr> args;
    // Every argument as text, as PostgreSQL's concat takes "any".
    for (const auto& arg : expr.args) args.push_back(AsText(Bind(*arg), arg->position));
    return BoundExpr::MakeFunction(ScalarFunction::kConcatFunction, TypeId::kVarchar,
                                   std::move(args));
  }
  if (const StringFunction* string = FindStringFunction(name)) {
    if (expr.args.size() < string->signature.size() - string->optional ||
        expr.args.size() > string->signature.size() || expr.star || expr.distinct) {
      expect_args(string->signature.size());
    }
    std::vector<BoundExprPtr> args;
    for (size_t i = 0; i < expr.args.size(); ++i) {
      DataType want = string->signature[i] == 's' ? TypeId::kVarchar : TypeId::kInt32;
      BoundExprPtr arg = Coerce(Bind(*expr.args[i]), want, expr.args[i]->position);
      bool fits = string->signature[i] == 's' ? arg->type.IsString() : arg->type.IsInteger();
      if (!fits) {
        std::vector<std::string> types;
        for (const auto& each : expr.args) types.push_back(Bind(*each)->type.Name());
        throw SqlError(sqlstate::kUndefinedFunction,
                       fmt::format("function {}({}) does not exist", name, fmt::join(types, ", ")),
                       expr.position)
            .WithHint("No function matches the given name and argument types.");
      }
      args.push_back(std::move(arg));
    }
    return BoundExpr::MakeFunction(string->function, string->result, std::move(args));
  }
  if (const MathFunction* math = FindMathFunction(name)) {
    // log(b, x): the logarithm to a base, numeric only (as in PostgreSQL).
    const bool log_to_base =
        math->function == ScalarFunction::kLog10 && name == "log" && expr.args.size() == 2;
    if (!(math->optional_digits && expr.args.size() == 2) && !log_to_base) {
      expect_args(math->arity);
    }
    std::vector<BoundExprPtr> args;
    for (const auto& each : expr.args) {
      BoundExprPtr arg = Bind(*each);
      if (IsUntypedLiteral(arg)) arg = Coerce(arg, TypeId::kFloat64, each->position);
      if (!arg->type.IsNumeric()) {
        throw SqlError(sqlstate::kUndefinedFunction,
                       fmt::format("function {}({}) does not exist", name, arg->type.Name()),
                       expr.position)
            .WithHint("No function matches the given name and argument types.");
      }
      args.push_back(std::move(arg));
    }
    auto no_function = [&] {
      std::vector<std::string> types;
      for (const auto& arg : args) types.push_back(arg->type.Name());
      throw SqlError(sqlstate::kUndefinedFunction,
                     fmt::format("function {}({}) does not exist", name, fmt::join(types, ", ")),
                     expr.position)
          .WithHint("No function matches the given name and argument types.");
    };
    if (math->function == ScalarFunction::kModulo) {
      // mod exists for integers and numeric in PostgreSQL, not for floats.
      DataType type = CommonNumericType(args[0]->type, args[1]->type);
      if (type.IsFloat()) no_function();
      for (auto& arg : args) arg = Coerce(arg, type, expr.position);
      return BoundExpr::MakeFunction(ScalarFunction::kModulo, type, std::move(args));
    }
    if (math->optional_digits && args.size() == 2) {
      // round(numeric, int) and trunc(numeric, int); integers widen to numeric, floats do
      // not (PostgreSQL has no round(double precision, integer)).
      if (args[0]->type.IsFloat() || !args[1]->type.IsInteger()) no_function();
      args[0] = Coerce(args[0], TypeId::kNumeric, expr.position);
      args[1] = Coerce(args[1], TypeId::kInt32, expr.position);
      return BoundExpr::MakeFunction(math->function, TypeId::kNumeric, std::move(args));
    }
    bool exact =
        math->function == ScalarFunction::kRound || math->function == ScalarFunction::kTrunc ||
        math->function == ScalarFunction::kFloor || math->function == ScalarFunction::kCeil ||
        math->function == ScalarFunction::kSign || math->function == ScalarFunction::kSqrt;
    if (exact && args[0]->type.IsDecimal()) {
      args[0] = Coerce(args[0], TypeId::kNumeric, expr.position);
      return BoundExpr::MakeFunction(math->function, TypeId::kNumeric, std::move(args));
    }
    // exp, ln, log and power: numeric when an argument is numeric and none is a float (PostgreSQL
    // picks its numeric version then), else double precision.
    bool any_float = false, any_numeric = false;
    for (const auto& arg : args) {
      any_float = any_float || arg->type.IsFloat();
      any_numeric = any_numeric || arg->type.IsDecimal();
    }
    if (log_to_base && any_float) no_function();
    DataType type = (any_numeric || log_to_base) && !any_float ? DataType(TypeId::kNumeric)
                                                               : DataType(TypeId::kFloat64);
    for (auto& arg : args) arg = Coerce(arg, type, expr.position);
    return BoundExpr::MakeFunction(math->function, type, std::move(args));
  }
  if (IsTemporalFunction(name) && expr.name.size() <= 2) {
    std::vector<BoundExprPtr> args;
    for (const auto& arg : expr.args) args.push_back(Bind(*arg));
    return BindTemporalFunction(name, std::move(args), expr);
  }
  throw SqlError(sqlstate::kUndefinedFunction,
                 fmt::format("function {} does not exist", JoinName(expr.name)), expr.position)
      .WithHint("No function matches the given name and argument types.");
}

BoundExprPtr ExpressionBinder::BindCase(const parser::CaseExpr& expr) {
  std::vector<BoundExprPtr> args;
  BoundExprPtr operand = expr.operand ? Bind(*expr.operand) : nullptr;
  std::vector<BoundExprPtr> results;
  for (const auto& [when, then] : expr.when_then) {
    BoundExprPtr condition =
        operand ? BindComparison(ScalarFunction::kEqual, operand, Bind(*when), "=", when->position)
                : Coerce(Bind(*when), TypeId::kBoolean, when->position);
    if (condition->type.id != TypeId::kBoolean) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("argument of CASE/WHEN must be type boolean, not type {}",
                                 condition->type.Name()),
                     when->position);
    }
    args.push_back(condition);
    results.push_back(Bind(*then));
  }
  results.push_back(expr.else_result ? Bind(*expr.else_result)
                                     : BoundExpr::MakeConstant(Value::Null(), TypeId::kUnknown));
  // The result type: the first typed branch, widened over numeric branches.
  DataType type = TypeId::kUnknown;
  for (const auto& result : results) {
    DataType branch = result->type;
    if (branch.id == TypeId::kUnknown) continue;
    if (type.id == TypeId::kUnknown) {
      type = branch;
    } else if (type.IsNumeric() && branch.IsNumeric()) {
      type = CommonNumericType(type, branch);
    } else if (IsImplicitTemporalCast(type, branch)) {
      type = branch;
    } else if (IsImplicitTemporalCast(branch, type)) {
      // Already the wider type.
    } else if (!(type.IsString() && branch.IsString()) && type != branch) {
      throw SqlError(
          sqlstate::kDatatypeMismatch,
          fmt::format("CASE types {} and {} cannot be matched", type.Name(), branch.Name()),
          expr.position);
    }
  }
  if (type.id == TypeId::kUnknown) type = TypeId::kVarchar;
  std::vector<BoundExprPtr> ordered;
  for (size_t i = 0; i < args.size(); ++i) {
    ordered.push_back(args[i]);
    ordered.push_back(Coerce(results[i], type, expr.position));
  }
  ordered.push_back(Coerce(results.back(), type, expr.position));
  return BoundExpr::MakeFunction(ScalarFunction::kCase, type, std::move(ordered));
}

BoundExprPtr ExpressionBinder::BindCast(const parser::CastExpr& expr) {
  if (std::optional<BoundExprPtr> bound = BindObjectIdentifierCast(expr)) return *bound;
  DataType target = ResolveType(expr.type);
  // ARRAY[] has no type of its own; a cast gives it one.
  if (expr.operand->kind == ExprKind::kArrayConstructor && target.IsArray() &&
      static_cast<const parser::ArrayConstructorExpr&>(*expr.operand).elements.empty()) {
    return BoundExpr::MakeConstant(Value::String(array::Encode({}, target.ElementType())), target);
  }
  BoundExprPtr operand = Bind(*expr.operand);
  // `$1::int`: an untyped parameter is of the cast's type, as in PostgreSQL.
  if (operand->parameter != nullptr) return Coerce(operand, target, expr.position);
  if (!expr.type.interval_field.empty()) {
    if (target.id != TypeId::kInterval) {
      throw SqlError(sqlstate::kSyntaxError,
                     fmt::format("syntax error at or near \"{}\"", expr.type.interval_field),
                     expr.position);
    }
    static const std::map<std::string, temporal::IntervalField, std::less<>> kFields = {
        {"year", temporal::IntervalField::kYear},     {"month", temporal::IntervalField::kMonth},
        {"day", temporal::IntervalField::kDay},       {"hour", temporal::IntervalField::kHour},
        {"minute", temporal::IntervalField::kMinute}, {"second", temporal::IntervalField::kSecond}};
    try {
      return BoundExpr::MakeConstant(
          Value::String(temporal::EncodeInterval(temporal::ParseInterval(
              operand->constant.string_value(), kFields.at(expr.type.interval_field)))),
          target);
    } catch (SqlError& error) {
      throw error.WithPositionIfUnset(expr.operand->position);
    }
  }
  // To varchar(n), even from varchar: the cast keeps the first n characters.
  if (operand->type == target && !(target.IsString() && target.length > 0)) return operand;
  if (!CanCast(operand->type, target)) {
    throw SqlError("42846",
                   fmt::format("cannot cast type {} to {}", operand->type.Name(), target.Name()),
                   expr.position);
  }
  if (operand->kind == BoundExpr::Kind::kConstant) {
    try {
      DataType from =
          operand->type.id == TypeId::kUnknown ? DataType(TypeId::kVarchar) : operand->type;
      return BoundExpr::MakeConstant(
          CutToLength(CastValue(operand->constant, from, target), target), target);
    } catch (SqlError& error) {
      throw error.WithPositionIfUnset(expr.operand->position);
    }
  }
  return BoundExpr::MakeFunction(ScalarFunction::kCast, target, {operand});
}

}  // namespace stave::planner
