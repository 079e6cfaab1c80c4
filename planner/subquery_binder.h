#pragma once

#include <optional>
#include <vector>

#include "parser/ast.h"
#include "planner/catalog.h"
#include "planner/expression_binder.h"
#include "planner/query_binder.h"

namespace stave::planner {

/// While alive, expressions bound on this thread may hold subqueries: they are bound against
/// `catalog` for `purpose`. The query binder opens one per SELECT; without one (DML, LIMIT
/// counts), a subquery is refused with 0A000.
/// Not copyable; contexts nest (a subquery's query opens its own) and must be destroyed in
/// reverse order of creation, on the thread that created them.
class ScopedSubqueryContext {
 public:
  ScopedSubqueryContext(const Catalog* catalog, QueryPurpose purpose);
  ~ScopedSubqueryContext();
  ScopedSubqueryContext(const ScopedSubqueryContext&) = delete;
  ScopedSubqueryContext& operator=(const ScopedSubqueryContext&) = delete;

  const Catalog* catalog() const { return catalog_; }
  QueryPurpose purpose() const { return purpose_; }

 private:
  const Catalog* catalog_;
  QueryPurpose purpose_;
  ScopedSubqueryContext* previous_;
};

/// The catalog of the innermost query being bound on this thread; nullptr outside binding.
const Catalog* CurrentBindingCatalog();

/// Resolves a column that the binder's own scope does not have against the scopes of the
/// queries around the subquery being bound: a kOuterColumn, or nullopt if no enclosing scope
/// has it. Marks every subquery between the reference and its scope as correlated. Throws
/// 0A000 for a column of a grouped query's input (its rows are gone by the time the
/// subquery runs).
std::optional<BoundExprPtr> ResolveOuterColumn(const parser::ColumnRefExpr& expr);

}  // namespace stave::planner
