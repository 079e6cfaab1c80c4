#include "planner/subquery_binder.h"

#include <fmt/format.h>

#include "common/sql_error.h"
#include "planner/from_binder.h"

namespace stave::planner {
namespace {

thread_local ScopedSubqueryContext* current_context = nullptr;

/// The scope of a query with a subquery being bound inside it.
struct EnclosingScope {
  const BindScope* scope;
  bool grouped;     // Bound by a grouped query's binder: its input rows are gone at run time.
  bool correlated;  // The subquery being bound reads this scope or one further out.
};

thread_local std::vector<EnclosingScope> enclosing_scopes;

std::string_view ComparisonSymbol(parser::BinaryOp op) {
  switch (op) {
    case parser::BinaryOp::kNotEqual:
      return "<>";
    case parser::BinaryOp::kLess:
      return "<";
    case parser::BinaryOp::kLessEqual:
      return "<=";
    case parser::BinaryOp::kGreater:
      return ">";
    case parser::BinaryOp::kGreaterEqual:
      return ">=";
    default:
      return "=";
  }
}

ScalarFunction ComparisonFunction(parser::BinaryOp op) {
  switch (op) {
    case parser::BinaryOp::kNotEqual:
      return ScalarFunction::kNotEqual;
    case parser::BinaryOp::kLess:
      return ScalarFunction::kLess;
    case parser::BinaryOp::kLessEqual:
      return ScalarFunction::kLessEqual;
    case parser::BinaryOp::kGreater:
      return ScalarFunction::kGreater;
    case parser::BinaryOp::kGreaterEqual:
      return ScalarFunction::kGreaterEqual;
    default:
      return ScalarFunction::kEqual;
  }
}

}  // namespace

ScopedSubqueryContext::ScopedSubqueryContext(const Catalog* catalog, QueryPurpose purpose)
    : catalog_(catalog), purpose_(purpose), previous_(current_context) {
  current_context = this;
}

ScopedSubqueryContext::~ScopedSubqueryContext() { current_context = previous_; }

const Catalog* CurrentBindingCatalog() {
  return current_context ? current_context->catalog() : nullptr;
}

std::optional<BoundExprPtr> ResolveOuterColumn(const parser::ColumnRefExpr& expr) {
  for (size_t depth = 1; depth <= enclosing_scopes.size(); ++depth) {
    EnclosingScope& enclosing = enclosing_scopes[enclosing_scopes.size() - depth];
    std::optional<size_t> index;
    try {
      index = ExpressionBinder(enclosing.scope).ResolveColumn(expr.names, expr.position);
    } catch (const SqlError& error) {
      if (error.sqlstate() != sqlstate::kUndefinedTable) throw;
    }
    if (!index) continue;
    if (enclosing.grouped) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "a subquery in the select list or HAVING of a grouped query cannot read "
                     "the outer query's columns",
                     expr.position)
          .WithHint("Move the subquery into WHERE, or into a subquery in FROM.");
    }
    for (size_t i = enclosing_scopes.size() - depth; i < enclosing_scopes.size(); ++i) {
      enclosing_scopes[i].correlated = true;
    }
    return BoundExpr::MakeOuterColumn(*index, depth, enclosing.scope->columns[*index].type);
  }
  return std::nullopt;
}

BoundExprPtr ExpressionBinder::BindSubquery(const parser::SubqueryExpr& expr) {
  if (!current_context) {
    throw SqlError(sqlstate::kFeatureNotSupported, "subqueries are not supported here",
                   expr.position);
  }
  BoundExprPtr operand = expr.operand ? Bind(*expr.operand) : nullptr;
  BoundQuery query;
  enclosing_scopes.push_back(EnclosingScope{scope_, !AllowsOuterReferences(), false});
  bool correlated = false;
  try {
    query = BindNestedQuery(*expr.query, *current_context->catalog(), current_context->purpose());
    correlated = enclosing_scopes.back().correlated;
  } catch (...) {
    enclosing_scopes.pop_back();
    throw;
  }
  enclosing_scopes.pop_back();

  auto subquery = std::make_shared<BoundSubquery>();
  subquery->text = expr.query->text;
  subquery->correlated = correlated;
  subquery->plan = query.root;
  if (expr.subquery_kind == parser::SubqueryKind::kExists) {
    subquery->kind = SubqueryKind::kExists;
    return BoundExpr::MakeSubquery(subquery, TypeId::kBoolean, {});
  }
  if (query.visible_columns != 1) {
    throw SqlError(sqlstate::kSyntaxError,
                   expr.subquery_kind == parser::SubqueryKind::kScalar
                       ? "subquery must return only one column"
                       : (query.visible_columns > 1 ? "subquery has too many columns"
                                                    : "subquery has too few columns"),
                   expr.query->position);
  }
  const Column& value = query.root->output[0];
  if (expr.subquery_kind == parser::SubqueryKind::kScalar) {
    subquery->kind = SubqueryKind::kScalar;
    return BoundExpr::MakeSubquery(subquery, value.type, {});
  }
  if (expr.subquery_kind == parser::SubqueryKind::kArray) {
    if (value.type.IsArray()) {
      throw SqlError(sqlstate::kFeatureNotSupported, "multidimensional arrays are not supported",
                     expr.position);
    }
    subquery->kind = SubqueryKind::kArray;
    return BoundExpr::MakeSubquery(subquery, DataType::ArrayOf(value.type.id), {});
  }
  // x op ANY|ALL (subquery): both sides take one type as in a comparison; the subquery's
  // column is converted by a projection over its plan.
  subquery->kind =
      expr.subquery_kind == parser::SubqueryKind::kAll ? SubqueryKind::kAll : SubqueryKind::kAny;
  subquery->comparison = ComparisonFunction(expr.op);
  BoundExprPtr comparison =
      BindComparison(subquery->comparison, operand, BoundExpr::MakeColumn(0, value.type),
                     ComparisonSymbol(expr.op), expr.position);
  if (comparison->kind != BoundExpr::Kind::kFunction || comparison->args.size() != 2 ||
      comparison->function != subquery->comparison) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("this comparison with {} (subquery) is not supported",
                               expr.subquery_kind == parser::SubqueryKind::kAll ? "ALL" : "ANY"),
                   expr.position);
  }
  auto project = std::make_shared<ProjectNode>();
  project->input = query.root;
  project->expressions = {comparison->args[1]};
  project->output = {{value.name, comparison->args[1]->type}};
  subquery->plan = project;
  BoundExprPtr bound = BoundExpr::MakeSubquery(subquery, TypeId::kBoolean, {comparison->args[0]});
  if (expr.negated)
    bound = BoundExpr::MakeFunction(ScalarFunction::kNot, TypeId::kBoolean, {bound});
  return bound;
}

std::string SubqueryText(const BoundExpr& expr, const std::string& operand) {
  const BoundSubquery& subquery = *expr.subquery;
  switch (subquery.kind) {
    case SubqueryKind::kScalar:
      return fmt::format("({})", subquery.text);
    case SubqueryKind::kExists:
      return fmt::format("EXISTS ({})", subquery.text);
    case SubqueryKind::kArray:
      return fmt::format("ARRAY({})", subquery.text);
    case SubqueryKind::kAny:
    case SubqueryKind::kAll:
      break;
  }
  return fmt::format("{} {} {} ({})", operand, ScalarFunctionName(subquery.comparison),
                     subquery.kind == SubqueryKind::kAny ? "ANY" : "ALL", subquery.text);
}

}  // namespace stave::planner
