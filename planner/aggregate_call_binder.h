#pragma once

#include "parser/ast.h"
#include "planner/bound_expression.h"
#include "planner/expression_binder.h"

namespace stave::planner {

/// Binds an aggregate call (`count(*)`, `sum(x)`, `count(DISTINCT x)`, …) whose argument is
/// over `scope`: checks the argument count and types and picks the result type. Used for
/// grouped queries and for aggregates as window functions. Throws SqlError: 42883 for an
/// unknown signature, 42803 for a nested aggregate, 42601 for `f(*)` other than count.
AggregateCall BindAggregateCall(const parser::FunctionCallExpr& call, const BindScope* scope);

}  // namespace stave::planner
