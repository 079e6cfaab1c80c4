#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parser/ast.h"
#include "planner/bound_expression.h"

// Binding of the temporal operators and functions (date, time, timestamp, timestamptz,
// interval): which operand combinations exist and what they return, with PostgreSQL's
// resolution of untyped literals; date_trunc, extract, date_part, to_timestamp, make_*, and
// the current-time functions.

namespace stave::planner {

/// Set while a query is bound (by BindQuery). Gives every current-time function of one
/// statement the same value (the statement's start, as PostgreSQL's now() is constant within
/// a statement), and tells whether the query defines a materialized view or sink: there
/// now() and current_timestamp bind to ScalarFunction::kNow, which only a temporal filter may
/// take (planner/temporal_filter.h), and the other current-time functions are refused with
/// 0A000 (a view runs forever, so they have no single value there).
class ScopedTemporalContext {
 public:
  explicit ScopedTemporalContext(bool streaming);
  ~ScopedTemporalContext();
  ScopedTemporalContext(const ScopedTemporalContext&) = delete;
  ScopedTemporalContext& operator=(const ScopedTemporalContext&) = delete;

  /// Throws 0A000 at the first now() of this query beyond the `taken` ones temporal filters
  /// took.
  void CheckNowTaken(size_t taken) const;

 private:
  bool streaming_;
  std::optional<int64_t> statement_time_;
  std::vector<int> now_positions_;  // Of the now() calls bound as kNow.
  ScopedTemporalContext* previous_;
  friend int64_t StatementTimestamp(std::string_view function, int position);
  friend std::optional<BoundExprPtr> StreamingNow(int position);
};

/// now() in a streaming definition (ScalarFunction::kNow); nullopt elsewhere.
std::optional<BoundExprPtr> StreamingNow(int position);

/// The statement's start as a timestamptz; throws 0A000 inside a streaming definition.
int64_t StatementTimestamp(std::string_view function, int position);

/// `left op right` where at least one side is temporal (op is + - * /); `symbol` for errors.
/// Untyped literals resolve as PostgreSQL's operator resolution does: `ts - '…'` is a
/// timestamp, `ts + '…'` an interval, `interval * '2'` a number.
BoundExprPtr BindTemporalArithmetic(std::string_view symbol, BoundExprPtr left, BoundExprPtr right,
                                    int position);

/// The keyword-like current-time names PostgreSQL writes without parentheses
/// (current_timestamp, current_date, localtimestamp, localtime); nullopt for other names.
std::optional<BoundExprPtr> BindCurrentTimeName(std::string_view name, int position);

/// Whether `name` is a temporal function this file binds.
bool IsTemporalFunction(std::string_view name);

/// Binds a call of a temporal function over its already bound arguments.
BoundExprPtr BindTemporalFunction(const std::string& name, std::vector<BoundExprPtr> args,
                                  const parser::FunctionCallExpr& call);

}  // namespace stave::planner
