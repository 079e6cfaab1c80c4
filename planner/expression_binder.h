#pragma once

#include <optional>
#include <string>
#include <vector>

#include "parser/ast.h"
#include "planner/bound_expression.h"
#include "planner/catalog.h"

namespace stave::planner {

/// Where a column of a scope over several FROM items comes from.
struct ScopeColumn {
  std::string qualifier;    ///< The FROM item's alias or name; "" for a USING column.
  bool unqualified = true;  ///< Whether a bare name finds it (not the sides of USING).
  bool hidden = false;      ///< A helper column (row ids, keys) no name finds.
};

/// The columns an expression may reference, and the name(s) that qualify them.
struct BindScope {
  std::string table_name;  ///< The object's name ("" without FROM).
  std::string alias;       ///< The FROM alias, "" if none.
  std::vector<Column> columns;
  /// For a FROM clause of several items (joins, subqueries): one entry per column. Empty
  /// when every column belongs to `table_name`/`alias`.
  std::vector<ScopeColumn> sources;
  /// With `sources`: the names of the FROM items (what a qualifier may say).
  std::vector<std::string> relations;
};

/// Binds parsed expressions to typed BoundExprs over one scope: resolves columns, picks
/// operators, coerces types (untyped literals take the type of the other side), folds
/// constant functions such as version(). Throws SqlError with the expression's position.
/// Subclasses intercept nodes (the grouped-query binder replaces aggregates and group keys).
class ExpressionBinder {
 public:
  explicit ExpressionBinder(const BindScope* scope) : scope_(scope) {}
  virtual ~ExpressionBinder() = default;

  BoundExprPtr Bind(const parser::Expr& expr);

  /// `what` names the clause for errors: "WHERE", "HAVING".
  BoundExprPtr BindPredicate(const parser::Expr& expr, std::string_view what);

  /// Resolves a column reference in the scope; nullopt if it names no column.
  std::optional<size_t> ResolveColumn(const parser::QualifiedName& names, int position) const;

  /// Converts `expr` to `target` (an implicit, assignment-like coercion): untyped literals
  /// are parsed, numeric types widen or narrow. Throws 42804 when types cannot meet.
  static BoundExprPtr Coerce(BoundExprPtr expr, DataType target, int position);

 protected:
  /// Called before binding any node; a value replaces the node's normal binding.
  virtual std::optional<BoundExprPtr> Intercept(const parser::Expr&) { return std::nullopt; }
  /// Binds a column reference (the grouped binder refuses columns outside GROUP BY).
  virtual BoundExprPtr BindColumnRef(const parser::ColumnRefExpr& expr);
  /// Whether a subquery bound here may read this scope's row (not over a grouped query's
  /// input, whose rows are gone when the select list is computed).
  virtual bool AllowsOuterReferences() const { return true; }

  const BindScope* scope_;

 private:
  BoundExprPtr BindUnary(const parser::UnaryExpr& expr);
  BoundExprPtr BindBinary(const parser::BinaryExpr& expr);
  BoundExprPtr BindComparison(planner::ScalarFunction function, BoundExprPtr left,
                              BoundExprPtr right, std::string_view op, int position);
  BoundExprPtr BindArithmetic(const parser::BinaryExpr& expr, BoundExprPtr left,
                              BoundExprPtr right);
  BoundExprPtr BindFunction(const parser::FunctionCallExpr& expr);
  BoundExprPtr BindCase(const parser::CaseExpr& expr);
  BoundExprPtr BindCast(const parser::CastExpr& expr);
  BoundExprPtr BindLiteral(const parser::LiteralExpr& expr);
  BoundExprPtr BindParameter(const parser::ParameterExpr& expr);
  /// Defined in subquery_binder.cc.
  BoundExprPtr BindSubquery(const parser::SubqueryExpr& expr);
  // bytea, jsonb and arrays (bytea_jsonb_array_binding.cc).
  BoundExprPtr BindArrayConstructor(const parser::ArrayConstructorExpr& expr);
  BoundExprPtr BindSubscript(const parser::SubscriptExpr& expr);
  /// `(record).x` and `.n` of a _pg_expandarray record, which the parser makes the call
  /// information_schema._pg_expandarray_field(record, 'x') (planner/field_selection_binding.cc).
  BoundExprPtr BindFieldSelection(const parser::FunctionCallExpr& expr);
  BoundExprPtr BindQuantifiedComparison(const parser::QuantifiedComparisonExpr& expr);
  /// `->`, `->>`, `#>`, `#>>`, `@>` and `<@`.
  BoundExprPtr BindJsonbOrContainment(const parser::BinaryExpr& expr, BoundExprPtr left,
                                      BoundExprPtr right);
  /// `||` when a side is bytea or an array; nullopt for the text concatenation.
  std::optional<BoundExprPtr> BindByteaOrArrayConcat(BoundExprPtr left, BoundExprPtr right,
                                                     int position);
  /// The functions over bytea, jsonb and arrays; nullopt if `name` is none of them.
  /// The functions clients call on PostgreSQL's catalogs (pg_table_is_visible, format_type,
  /// ...; planner/pg_catalog_functions.cc), or nullopt if `name` is none of them.
  std::optional<BoundExprPtr> BindPgCatalogFunction(const std::string& name,
                                                    const parser::FunctionCallExpr& expr);
  /// current_setting(), set_config(), pg_backend_pid(), current_schema()
  /// (planner/session_functions.cc), or nullopt if `name` is none of them.
  std::optional<BoundExprPtr> BindSessionFunction(const std::string& name,
                                                  const parser::FunctionCallExpr& expr);
  /// The keywords current_user, session_user, current_role, user, current_catalog and
  /// current_schema, or nullopt if `name` is none of them.
  std::optional<BoundExprPtr> BindSessionValueName(const std::string& name);
  /// `a::regtype = b::regtype` (any comparison of two casts to one reg type) compares the
  /// OIDs, as PostgreSQL does; nullopt for another expression.
  std::optional<BoundExprPtr> BindObjectIdentifierComparison(const parser::BinaryExpr& expr);
  /// Casts to oid, regclass, regtype and regnamespace, or nullopt for another type.
  std::optional<BoundExprPtr> BindObjectIdentifierCast(const parser::CastExpr& expr);
  std::optional<BoundExprPtr> BindByteaJsonbArrayFunction(const std::string& name,
                                                          const parser::FunctionCallExpr& expr);
};

/// ExpressionBinder::ResolveColumn over a scope with `sources`: throws 42702 for a name
/// that two FROM items share, 42P01 for an unknown qualifier.
std::optional<size_t> ResolveJoinedColumn(const BindScope& scope,
                                          const parser::QualifiedName& names, int position);

/// Whether `name` (lower-case, last part of a function name) is an aggregate function.
bool IsAggregateFunction(const parser::QualifiedName& name);
/// Whether `name` is a function that exists only as a window function (row_number, rank,
/// dense_rank).
bool IsWindowOnlyFunction(const parser::QualifiedName& name);
/// Whether the expression contains an aggregate call (not counting aggregates with OVER).
bool ContainsAggregate(const parser::Expr& expr);

/// The type COALESCE, GREATEST, LEAST, NULLIF and ARRAY[...] resolve their arguments to:
/// the first typed one, widened over numeric ones; text when all are untyped literals.
/// Throws 42804 (`what` names the construct) when two cannot meet.
DataType CommonType(const std::vector<BoundExprPtr>& args, std::string_view what, int position);

/// Resolves a type name; throws 42704 (`type "x" does not exist`) for unknown names.
DataType ResolveType(const parser::TypeName& type);

/// The output name PostgreSQL gives an unaliased select expression ("count", "?column?").
std::string DefaultColumnName(const parser::Expr& expr);

}  // namespace stave::planner
