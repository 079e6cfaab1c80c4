#pragma once

#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/data_type.h"
#include "common/value.h"

namespace stave::parser {
struct ParameterSlot;
}  // namespace stave::parser

namespace stave::planner {

/// Scalar functions and operators the executor evaluates over chunks. The binder has
/// already coerced the arguments: arithmetic and comparison arguments share one type.
enum class ScalarFunction {
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kModulo,
  kNegate,
  kEqual,
  kNotEqual,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kAnd,
  kOr,
  kNot,
  kIsNull,
  kIsNotNull,
  kConcat,
  kLike,
  kILike,
  /// args[0] converted to the expression's type.
  kCast,
  /// args = when1, then1, when2, then2, ..., else (always present; NULL if not written).
  kCase,
  kCoalesce,
  kAbs,
  kLower,
  kUpper,
  kLength,
  // Conditional: nullif(a, b); greatest and least skip NULLs, as PostgreSQL's do.
  kNullIf,
  kGreatest,
  kLeast,
  // Strings (executor/scalar_functions.cc). concat skips NULLs; the others are strict.
  kConcatFunction,
  kSubstr,
  kTrim,
  kLTrim,
  kRTrim,
  kReplace,
  kSplitPart,
  kStrPos,
  kLeft,
  kRight,
  kRepeat,
  kReverse,
  kStartsWith,
  kChr,
  kAscii,
  kLPad,
  kRPad,
  kRegexpReplace,
  kRegexpMatch,  ///< regexp_match(text, pattern[, flags]): the first match's groups, text[].
  kRegexMatch,   ///< text ~ pattern.
  kRegexMatchInsensitive,     ///< text ~* pattern.
  kRegexNotMatch,             ///< text !~ pattern.
  kRegexNotMatchInsensitive,  ///< text !~* pattern.
  // Math over double precision (and mod over integers).
  kRound,
  kFloor,
  kCeil,
  kTrunc,
  kSqrt,
  kPower,
  kExp,
  kLn,
  kLog10,
  kSign,
  // Temporal (executor/temporal_functions.cc). The arithmetic operators above also take
  // temporal operands; the binder has checked which combinations exist.
  kDateTrunc,      ///< date_trunc(unit, timestamp | timestamptz | interval).
  kDatePart,       ///< date_part(field, x): a date is taken as a timestamp.
  kExtract,        ///< extract(field FROM x): a date refuses time-of-day fields.
  kToTimestamp,    ///< to_timestamp(double precision seconds since 1970).
  kMakeDate,       ///< make_date(year, month, day).
  kMakeTime,       ///< make_time(hour, min, sec).
  kMakeTimestamp,  ///< make_timestamp(year, month, day, hour, min, sec).
  kMakeInterval,   ///< make_interval(years, months, weeks, days, hours, mins, secs).
  kToChar,         ///< to_char(timestamp | timestamptz | interval, template) → text.
  /// now() in a streaming definition: only a temporal filter may hold it (TemporalFilterNode);
  /// never evaluated.
  kNow,
  // bytea (executor/bytea_functions.cc). `||` of two bytea is kConcat typed bytea.
  kOctetLength,  ///< length(bytea), octet_length(bytea).
  kEncode,       ///< encode(bytea, format) → text.
  kDecode,       ///< decode(text, format) → bytea.
  kMd5,          ///< md5(text | bytea) → text.
  // jsonb (executor/jsonb_functions.cc).
  kJsonbField,        ///< jsonb -> text.
  kJsonbFieldText,    ///< jsonb ->> text.
  kJsonbElement,      ///< jsonb -> integer.
  kJsonbElementText,  ///< jsonb ->> integer.
  kJsonbPath,         ///< jsonb #> text[].
  kJsonbPathText,     ///< jsonb #>> text[].
  kJsonbContains,     ///< jsonb @> jsonb (`<@` with the arguments swapped).
  kJsonbTypeof,
  kJsonbArrayLength,
  // Arrays (executor/array_functions.cc).
  kArrayConstruct,  ///< ARRAY[args...]; the binder has coerced them to the element type.
  kArraySubscript,  ///< array[index], 1-based, NULL out of range.
  kArrayLength,     ///< array_length(array, dimension).
  kCardinality,
  kArrayAppend,    ///< array_append(array, element) and array || element.
  kArrayPrepend,   ///< array_prepend(element, array) and element || array.
  kArrayCat,       ///< array_cat(a, b) and array || array.
  kArrayContains,  ///< array @> array (`<@` with the arguments swapped).
  kArrayToString,  ///< array_to_string(array, delimiter[, null_string]).
  kStringToArray,  ///< string_to_array(text, delimiter[, null_string]) → text[].
  /// An array of OIDs as a text[] of names (oid[]::regtype[]): args = the array, then constant
  /// bigint[] OIDs and text[] names side by side; an OID not among them prints as its number.
  kOidArrayNames,
  /// x op ANY (array), x op ALL (array): args = x, array, and a constant integer holding
  /// the comparison's ScalarFunction (kEqual ... kGreaterEqual).
  kAnyCompare,
  kAllCompare,
};

std::string_view ScalarFunctionName(ScalarFunction function);

struct BoundExpr;
using BoundExprPtr = std::shared_ptr<const BoundExpr>;
struct BoundSubquery;  // planner/logical_plan.h

/// A typed expression over the columns of one input (by position). Immutable, shared.
struct BoundExpr {
  /// kOuterColumn and kSubquery appear only in batch plans once the planner is done
  /// (planner/subquery_planner.h turns what a view may hold into joins).
  enum class Kind {
    kConstant,
    kColumn,
    kFunction,
    /// A column of an enclosing query's current row, inside a correlated subquery.
    kOuterColumn,
    /// A subquery's value for the current row (scalar, EXISTS, ANY or ALL).
    kSubquery,
  };

  Kind kind = Kind::kConstant;
  DataType type;
  Value constant;                                  ///< kConstant.
  size_t column = 0;                               ///< kColumn, kOuterColumn: its position.
  ScalarFunction function = ScalarFunction::kAdd;  ///< kFunction.
  /// An untyped parameter `$n` of a statement being described (a NULL kConstant of
  /// kUnknown): the first coercion of it decides the parameter's type (see
  /// ExpressionBinder::Coerce).
  std::shared_ptr<parser::ParameterSlot> parameter;
  std::vector<BoundExprPtr> args;  ///< kFunction; kSubquery: ANY/ALL's operand.
  /// kOuterColumn: how many queries out the row is (1: the query right around the subquery).
  size_t outer_depth = 0;
  std::shared_ptr<const BoundSubquery> subquery;  ///< kSubquery.

  static BoundExprPtr MakeConstant(Value value, DataType type);
  static BoundExprPtr MakeColumn(size_t column, DataType type);
  static BoundExprPtr MakeFunction(ScalarFunction function, DataType type,
                                   std::vector<BoundExprPtr> args);
  static BoundExprPtr MakeOuterColumn(size_t column, size_t depth, DataType type);
  static BoundExprPtr MakeSubquery(std::shared_ptr<const BoundSubquery> subquery, DataType type,
                                   std::vector<BoundExprPtr> operand);

  /// A canonical text form: equal texts mean equal expressions (used to match GROUP BY
  /// expressions in the select list, and by EXPLAIN).
  std::string ToString() const;
};

/// Adds the positions of the columns `expr` reads (kColumn) to `columns`.
void CollectColumns(const BoundExpr& expr, std::set<size_t>* columns);

/// Appends the conjuncts of `expr` (the arguments of nested ANDs, else `expr` itself).
void SplitConjuncts(const BoundExprPtr& expr, std::vector<BoundExprPtr>* conjuncts);
/// The AND of `conjuncts`, left-deep; null when there are none.
BoundExprPtr AndOf(const std::vector<BoundExprPtr>& conjuncts);

/// The text of a kSubquery expression, `operand` being its operand's (ANY, ALL). Defined in
/// subquery_binder.cc, which sees BoundSubquery.
std::string SubqueryText(const BoundExpr& expr, const std::string& operand);

enum class AggregateKind { kCountStar, kCount, kSum, kMin, kMax, kAvg, kArrayAgg, kStringAgg };

std::string_view AggregateKindName(AggregateKind kind);

/// One aggregate call of an Aggregate node; `arg` is bound over the node's input.
struct AggregateCall {
  AggregateKind kind = AggregateKind::kCountStar;
  BoundExprPtr arg;  ///< Null for count(*).
  DataType result_type;
  /// `count(DISTINCT x)`, `sum(DISTINCT x)`, `avg(DISTINCT x)`: each distinct value of `arg`
  /// counts once.
  bool distinct = false;
  /// min/max over an input that retracts (a view over a table that takes updates and
  /// deletes): the group keeps how many rows hold each value, so that deleting the current
  /// extreme finds the next one.
  bool keeps_values = false;
  /// array_agg, string_agg: the order of the values (by the value itself: `array_agg(x
  /// ORDER BY x DESC NULLS LAST)`, or by `order_key`; without ORDER BY, ascending).
  bool descending = false;
  bool nulls_first = false;
  /// array_agg(x ORDER BY y), string_agg(x, d ORDER BY y): `y`, bound over the node's input,
  /// when it is not the aggregated value itself; null otherwise.
  BoundExprPtr order_key;
  std::string separator;  ///< string_agg's delimiter (a constant).
  /// `FILTER (WHERE condition)`, bound over the node's input: only rows for which it is true
  /// reach the aggregate (NULL and false skip the row). Null without FILTER.
  BoundExprPtr filter;

  std::string ToString() const;
};

}  // namespace stave::planner
