#include "executor/subquery_evaluation.h"

#include "common/array_value.h"
#include "common/sql_error.h"
#include "executor/expression_evaluator.h"

namespace stave::executor {
namespace {

thread_local ScopedSubqueryRunner* current_runner = nullptr;
/// The rows of the enclosing queries of the subquery running now, innermost last.
thread_local std::vector<std::vector<Value>> outer_rows;

// `x op v` over two non-NULL values of one type.
bool Compare(planner::ScalarFunction comparison, const Column& left, size_t i, const Column& right,
             size_t j) {
  int c = CompareRows(left, i, right, j);
  switch (comparison) {
    case planner::ScalarFunction::kEqual:
      return c == 0;
    case planner::ScalarFunction::kNotEqual:
      return c != 0;
    case planner::ScalarFunction::kLess:
      return c < 0;
    case planner::ScalarFunction::kLessEqual:
      return c <= 0;
    case planner::ScalarFunction::kGreater:
      return c > 0;
    default:
      return c >= 0;
  }
}

// The value of a subquery over `values` (its rows' first column), for an operand value at
// `row` of `operand` (ANY, ALL).
Value Reduce(const planner::BoundExpr& expr, const std::vector<Value>& values,
             const Column* operand, size_t row) {
  const planner::BoundSubquery& subquery = *expr.subquery;
  switch (subquery.kind) {
    case planner::SubqueryKind::kScalar:
      if (values.size() > 1) {
        throw SqlError("21000", "more than one row returned by a subquery used as an expression");
      }
      return values.empty() ? Value::Null() : values[0];
    case planner::SubqueryKind::kExists:
      return Value::Boolean(!values.empty());
    case planner::SubqueryKind::kArray:
      return Value::String(array::Encode(values, expr.type.ElementType()));
    case planner::SubqueryKind::kAny:
    case planner::SubqueryKind::kAll:
      break;
  }
  // SQL's three-valued ANY / ALL: ANY is true if some comparison is true, else NULL if some
  // is NULL, else false; ALL is false if some is false, else NULL if some is NULL, else true.
  bool any = subquery.kind == planner::SubqueryKind::kAny;
  if (values.empty()) return Value::Boolean(!any);
  if (operand->IsNull(row)) return Value::Null();
  Column value(operand->type);
  bool saw_null = false;
  for (const Value& v : values) {
    if (v.is_null()) {
      saw_null = true;
      continue;
    }
    value.AppendValue(v);
    bool holds = Compare(subquery.comparison, *operand, row, value, value.size() - 1);
    if (holds == any) return Value::Boolean(any);
  }
  return saw_null ? Value::Null() : Value::Boolean(!any);
}

}  // namespace

ScopedSubqueryRunner::ScopedSubqueryRunner(SubqueryRunner* runner)
    : runner_(runner), previous_(current_runner) {
  current_runner = this;
}

ScopedSubqueryRunner::~ScopedSubqueryRunner() { current_runner = previous_; }

Column EvaluateSubquery(const planner::BoundExpr& expr, const Chunk& chunk) {
  if (!current_runner) {
    throw SqlError(sqlstate::kInternalError, "a subquery expression outside a batch query");
  }
  const planner::BoundSubquery& subquery = *expr.subquery;
  std::optional<Column> operand;
  if (!expr.args.empty()) operand = Evaluate(*expr.args[0], chunk);
  Column out(expr.type);
  out.Reserve(chunk.size());
  if (!subquery.correlated) {
    auto& cache = current_runner->cache();
    auto it = cache.find(&subquery);
    if (it == cache.end()) {
      it = cache.emplace(&subquery, current_runner->runner()->FirstColumn(*subquery.plan)).first;
    }
    for (size_t r = 0; r < chunk.size(); ++r) {
      out.AppendValue(Reduce(expr, it->second, operand ? &*operand : nullptr, r));
    }
    return out;
  }
  for (size_t r = 0; r < chunk.size(); ++r) {
    outer_rows.push_back(chunk.GetRow(r));
    std::vector<Value> values;
    try {
      values = current_runner->runner()->FirstColumn(*subquery.plan);
    } catch (...) {
      outer_rows.pop_back();
      throw;
    }
    outer_rows.pop_back();
    out.AppendValue(Reduce(expr, values, operand ? &*operand : nullptr, r));
  }
  return out;
}

Column EvaluateOuterColumn(const planner::BoundExpr& expr, const Chunk& chunk) {
  if (expr.outer_depth == 0 || expr.outer_depth > outer_rows.size()) {
    throw SqlError(sqlstate::kInternalError, "an outer column without its row");
  }
  const Value& value = outer_rows[outer_rows.size() - expr.outer_depth][expr.column];
  Column out(expr.type);
  out.Reserve(chunk.size());
  for (size_t r = 0; r < chunk.size(); ++r) out.AppendValue(value);
  return out;
}

}  // namespace stave::executor
