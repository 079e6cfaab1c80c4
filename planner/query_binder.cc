#include "planner/query_binder.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/sql_error.h"
#include "planner/aggregate_call_binder.h"
#include "planner/column_pruning.h"
#include "planner/expression_binder.h"
#include "planner/from_binder.h"
#include "planner/growing_join_sides.h"
#include "planner/shared_subplans.h"
#include "planner/subquery_binder.h"
#include "planner/subquery_planner.h"
#include "planner/temporal_binding.h"
#include "planner/temporal_filter.h"
#include "planner/top_n_rewrite.h"
#include "planner/window_binder.h"

namespace stave::planner {
namespace {

using parser::ExprKind;

// Binds the select list, HAVING and ORDER BY of a grouped query over the Aggregate node's
// output: a group key expression becomes a reference to its key column, an aggregate call
// becomes a reference to its result column, and any other column is an error.
class GroupedExpressionBinder : public ExpressionBinder {
 public:
  GroupedExpressionBinder(const BindScope* input_scope, const std::vector<BoundExprPtr>* group_keys,
                          std::vector<AggregateCall>* aggregates)
      : ExpressionBinder(input_scope), group_keys_(group_keys), aggregates_(aggregates) {}

  /// The aggregate node's output column of aggregate `index`.
  size_t AggregateColumn(size_t index) const { return group_keys_->size() + index; }

 protected:
  bool AllowsOuterReferences() const override { return false; }

  std::optional<BoundExprPtr> Intercept(const parser::Expr& expr) override {
    if (expr.kind == ExprKind::kFunctionCall) {
      const auto& call = static_cast<const parser::FunctionCallExpr&>(expr);
      if (call.over) RefuseWindowFunctionInGroupedQuery(call);
      if (IsAggregateFunction(call.name)) return BindAggregate(call);
    }
    if (expr.kind == ExprKind::kLiteral || ContainsAggregate(expr)) return std::nullopt;
    // Try the expression as a whole against the group keys: `GROUP BY a % 2` lets the
    // select list say `a % 2`, though `a` alone is not grouped.
    ExpressionBinder input_binder(scope_);
    BoundExprPtr bound;
    try {
      bound = input_binder.Bind(expr);
    } catch (const SqlError&) {
      return std::nullopt;  // Bound again piece by piece below, which reports the error.
    }
    std::string text = bound->ToString();
    for (size_t i = 0; i < group_keys_->size(); ++i) {
      if ((*group_keys_)[i]->ToString() == text) return BoundExpr::MakeColumn(i, bound->type);
    }
    if (bound->kind == BoundExpr::Kind::kConstant) return bound;
    return std::nullopt;
  }

  BoundExprPtr BindColumnRef(const parser::ColumnRefExpr& expr) override {
    std::optional<size_t> index;
    try {
      index = ResolveColumn(expr.names, expr.position);
    } catch (const SqlError&) {
      return ExpressionBinder::BindColumnRef(expr);  // An outer query's column, or the error.
    }
    if (!index) return ExpressionBinder::BindColumnRef(expr);  // Reports "does not exist".
    std::string name = expr.names.back();
    std::string qualifier = scope_->alias.empty() ? scope_->table_name : scope_->alias;
    if (!scope_->sources.empty()) qualifier = scope_->sources[*index].qualifier;
    throw SqlError(sqlstate::kGroupingError,
                   fmt::format("column \"{}\" must appear in the GROUP BY clause or be used "
                               "in an aggregate function",
                               qualifier.empty() ? name : qualifier + "." + name),
                   expr.position);
  }

 private:
  BoundExprPtr BindAggregate(const parser::FunctionCallExpr& call) {
    AggregateCall aggregate = BindAggregateCall(call, scope_);
    std::string text = aggregate.ToString();
    for (size_t i = 0; i < aggregates_->size(); ++i) {
      if ((*aggregates_)[i].ToString() == text) {
        return BoundExpr::MakeColumn(AggregateColumn(i), aggregate.result_type);
      }
    }
    aggregates_->push_back(aggregate);
    return BoundExpr::MakeColumn(AggregateColumn(aggregates_->size() - 1), aggregate.result_type);
  }

  const std::vector<BoundExprPtr>* group_keys_;
  std::vector<AggregateCall>* aggregates_;
};

std::shared_ptr<ProjectNode> MakeProject(PlanNodePtr input, std::vector<BoundExprPtr> expressions,
                                         std::vector<Column> output) {
  auto project = std::make_shared<ProjectNode>();
  project->input = std::move(input);
  project->expressions = std::move(expressions);
  project->output = std::move(output);
  return project;
}

std::vector<Column> ColumnsOf(const std::vector<BoundExprPtr>& expressions,
                              const std::vector<std::string>& names) {
  std::vector<Column> columns;
  for (size_t i = 0; i < expressions.size(); ++i) {
    DataType type = expressions[i]->type;
    columns.push_back({names[i], type.id == TypeId::kUnknown ? DataType(TypeId::kVarchar) : type});
  }
  return columns;
}

int64_t BindCount(const parser::Expr& expr, std::string_view what) {
  BindScope empty;
  ExpressionBinder binder(&empty);
  BoundExprPtr bound = ExpressionBinder::Coerce(binder.Bind(expr), TypeId::kInt64, expr.position);
  if (bound->kind != BoundExpr::Kind::kConstant || !bound->type.IsInteger()) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("argument of {} must be an integer constant", what), expr.position);
  }
  if (bound->constant.is_null()) return -1;
  int64_t value = bound->constant.int_value();
  if (value < 0) {
    throw SqlError(what == "LIMIT" ? "2201W" : "2201X",
                   fmt::format("{} must not be negative", what), expr.position);
  }
  return value;
}

// An ORDER BY item that names a result column: by position (1-based; 42P10 when out of
// range) or by a bare output name. Nullopt for anything else.
std::optional<size_t> ResultColumnOf(const parser::Expr& expr,
                                     const std::vector<std::string>& names) {
  if (expr.kind == ExprKind::kLiteral &&
      static_cast<const parser::LiteralExpr&>(expr).literal_kind == parser::LiteralKind::kInteger) {
    int64_t ordinal = std::stoll(static_cast<const parser::LiteralExpr&>(expr).value);
    if (ordinal < 1 || ordinal > static_cast<int64_t>(names.size())) {
      throw SqlError("42P10", fmt::format("ORDER BY position {} is not in select list", ordinal),
                     expr.position);
    }
    return static_cast<size_t>(ordinal - 1);
  }
  if (expr.kind == ExprKind::kColumnRef &&
      static_cast<const parser::ColumnRefExpr&>(expr).names.size() == 1) {
    const std::string& name = static_cast<const parser::ColumnRefExpr&>(expr).names[0];
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return i;
    }
  }
  return std::nullopt;
}

// `plan` sorted by `keys` (if any), then cut by the query's LIMIT and OFFSET (if
// `with_limit` and given).
PlanNodePtr SortAndLimit(PlanNodePtr plan, const std::vector<SortKey>& keys,
                         const parser::SelectStatement& select, bool with_limit) {
  if (!keys.empty()) {
    auto sort = std::make_shared<SortNode>();
    sort->keys = keys;
    sort->input = plan;
    sort->output = plan->output;
    plan = sort;
  }
  if (with_limit && (select.limit || select.offset)) {
    auto limit = std::make_shared<LimitNode>();
    limit->limit = select.limit ? BindCount(*select.limit, "LIMIT") : -1;
    limit->offset = select.offset ? std::max<int64_t>(BindCount(*select.offset, "OFFSET"), 0) : 0;
    limit->input = plan;
    limit->output = plan->output;
    plan = limit;
  }
  return plan;
}

// DISTINCT ON's expressions as columns of the projection (an output name or position, a
// select expression, or else a new hidden column), checked against ORDER BY as PostgreSQL
// does: the ORDER BY items that are DISTINCT ON expressions must come first, and if ORDER BY
// goes on past them, every DISTINCT ON expression must be among them (42P10).
std::vector<size_t> BindDistinctOn(const parser::SelectStatement& select,
                                   const std::vector<std::string>& names, ExpressionBinder& binder,
                                   std::vector<BoundExprPtr>* projection,
                                   std::vector<std::string>* projection_names,
                                   const std::vector<SortKey>& sort_keys) {
  std::vector<size_t> columns;
  for (const parser::ExprPtr& expr : select.distinct_on) {
    std::optional<size_t> column = ResultColumnOf(*expr, names);
    if (!column) {
      BoundExprPtr bound = binder.Bind(*expr);
      std::string text = bound->ToString();
      for (size_t i = 0; i < projection->size() && !column; ++i) {
        if ((*projection)[i]->ToString() == text) column = i;
      }
      if (!column) {
        column = projection->size();
        projection->push_back(bound);
        projection_names->push_back(fmt::format("_distinct_key_{}", columns.size()));
      }
    }
    if (std::find(columns.begin(), columns.end(), *column) == columns.end()) {
      columns.push_back(*column);
    }
  }
  bool skipped = false;
  size_t matched = 0;
  for (const SortKey& key : sort_keys) {
    bool in_distinct_on = std::find(columns.begin(), columns.end(), key.column) != columns.end();
    if (in_distinct_on && skipped) matched = SIZE_MAX;
    if (in_distinct_on && !skipped) ++matched;
    if (!in_distinct_on) skipped = true;
  }
  if (skipped && matched != columns.size()) {
    throw SqlError("42P10",
                   "SELECT DISTINCT ON expressions must match initial ORDER BY expressions",
                   select.distinct_on[0]->position);
  }
  return columns;
}

bool HasOuterJoin(const PlanNodePtr& plan) {
  if (!plan) return false;
  if (plan->kind == PlanNodeKind::kJoin &&
      static_cast<const JoinNode&>(*plan).join_type != JoinType::kInner) {
    return true;
  }
  if (const PlanNodePtr* second = SecondInput(*plan); second && HasOuterJoin(*second)) return true;
  return HasOuterJoin(plan->input);
}

BoundQuery Bind(const parser::SelectStatement& select, const Catalog& catalog, QueryPurpose purpose,
                bool nested);

}  // namespace

BoundQuery BindQuery(const parser::SelectStatement& select, const Catalog& catalog,
                     QueryPurpose purpose, uint32_t plan_version) {
  if (plan_version > kPlanVersion) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("the query was planned by planner revision {}, newer than this "
                               "server's ({})",
                               plan_version, kPlanVersion))
        .WithHint("Run the Stave version that created it.");
  }
  BoundQuery query = Bind(select, catalog, purpose, false);
  if (purpose == QueryPurpose::kMaterializedView) {
    query.root = RewriteTopN(query.root);
    RequireNoSubqueries(*query.root, select.position);
    if (plan_version >= 2) {
      PruningRules rules;
      rules.time_window_inputs = plan_version >= 3;
      query.root = PruneColumns(query.root, rules);
    }
    if (plan_version >= 4) query.root = ShareIdenticalSubplans(query.root);
    if (plan_version >= 5) query.root = MarkGrowingJoinSides(query.root);
  }
  return query;
}

BoundQuery BindNestedQuery(const parser::SelectStatement& select, const Catalog& catalog,
                           QueryPurpose purpose) {
  return Bind(select, catalog, purpose, true);
}

std::string ResolveObjectName(const parser::QualifiedName& name, int position) {
  if (name.size() == 1) return name[0];
  if (name.size() <= 3 && name[name.size() - 2] == "public" &&
      (name.size() == 2 || name[0] == "stave")) {
    return name.back();
  }
  std::string schema = name.size() >= 2 ? name[name.size() - 2] : "";
  throw SqlError("3F000", fmt::format("schema \"{}\" does not exist", schema), position);
}

namespace {

std::string_view SetOperatorName(parser::SetOperator op) {
  switch (op) {
    case parser::SetOperator::kUnion:
      return "UNION";
    case parser::SetOperator::kExcept:
      return "EXCEPT";
    default:
      return "INTERSECT";
  }
}

// The type a column of a set operation takes from its two operands' types, as PostgreSQL
// resolves them: an untyped literal takes the other side's, numbers widen, timestamps meet.
DataType SetOperationType(DataType a, DataType b, std::string_view op, int position) {
  if (a == b) return a.id == TypeId::kUnknown ? DataType(TypeId::kVarchar) : a;
  if (a.id == TypeId::kUnknown) return b;
  if (b.id == TypeId::kUnknown) return a;
  if (a.IsNumeric() && b.IsNumeric()) {
    if (a.IsFloat() || b.IsFloat()) return TypeId::kFloat64;
    if (a.IsDecimal() || b.IsDecimal()) return TypeId::kNumeric;  // without a precision
    return a.id > b.id ? a : b;                                   // kInt16 < kInt32 < kInt64.
  }
  if ((a.IsTimestamp() || a.id == TypeId::kDate) && (b.IsTimestamp() || b.id == TypeId::kDate)) {
    if (a.id == TypeId::kTimestampTz || b.id == TypeId::kTimestampTz) return TypeId::kTimestampTz;
    return TypeId::kTimestamp;
  }
  throw SqlError(sqlstate::kDatatypeMismatch,
                 fmt::format("{} types {} and {} cannot be matched", op, a.Name(), b.Name()),
                 position);
}

// Appends to each row of `plan` (a UNION ALL operand) the constants `in_left`, `in_right`.
PlanNodePtr WithSideMarks(PlanNodePtr plan, size_t columns, int64_t in_left, int64_t in_right) {
  std::vector<BoundExprPtr> expressions;
  std::vector<Column> output;
  for (size_t i = 0; i < columns; ++i) {
    expressions.push_back(BoundExpr::MakeColumn(i, plan->output[i].type));
    output.push_back(plan->output[i]);
  }
  expressions.push_back(BoundExpr::MakeConstant(Value::Int(in_left), TypeId::kInt64));
  expressions.push_back(BoundExpr::MakeConstant(Value::Int(in_right), TypeId::kInt64));
  output.push_back({"_in_left", TypeId::kInt64});
  output.push_back({"_in_right", TypeId::kInt64});
  return MakeProject(std::move(plan), std::move(expressions), std::move(output));
}

// `left UNION [ALL] right`, `left INTERSECT right`, `left EXCEPT right`. UNION ALL is a Union
// node; the others group the union's rows by every column: UNION keeps each group,
// INTERSECT those with rows from both sides, EXCEPT those with rows from the left only
// (each side's rows are marked, and the groups count them).
BoundQuery BindSetOperation(const parser::SelectStatement& select, const Catalog& catalog,
                            QueryPurpose purpose) {
  std::string_view op = SetOperatorName(select.set_operator);
  if (select.emit_on_window_close) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "EMIT ON WINDOW CLOSE needs a GROUP BY of a window's bound, not a set operation",
                   select.position);
  }
  BoundQuery left = Bind(*select.set_left, catalog, purpose, true);
  BoundQuery right = Bind(*select.set_right, catalog, purpose, true);
  size_t columns = left.visible_columns;
  if (right.visible_columns != columns) {
    throw SqlError(sqlstate::kSyntaxError,
                   fmt::format("each {} query must have the same number of columns", op),
                   select.set_right->position);
  }
  std::vector<Column> output;
  std::vector<BoundExprPtr> left_exprs;
  std::vector<BoundExprPtr> right_exprs;
  for (size_t i = 0; i < columns; ++i) {
    const Column& a = left.root->output[i];
    const Column& b = right.root->output[i];
    DataType type = SetOperationType(a.type, b.type, op, select.set_right->position);
    output.push_back({a.name, type});
    left_exprs.push_back(ExpressionBinder::Coerce(BoundExpr::MakeColumn(i, a.type), type,
                                                  select.set_left->position));
    right_exprs.push_back(ExpressionBinder::Coerce(BoundExpr::MakeColumn(i, b.type), type,
                                                   select.set_right->position));
  }
  PlanNodePtr left_plan = MakeProject(left.root, left_exprs, output);
  PlanNodePtr right_plan = MakeProject(right.root, right_exprs, output);
  bool distinct = !select.set_all;
  bool marks = select.set_operator != parser::SetOperator::kUnion;
  // INTERSECT ALL and EXCEPT ALL count each side's copies of a row as the distinct forms do,
  // then repeat the row min(left, right) or max(left - right, 0) times.
  bool counted = marks && select.set_all;
  if (marks) {
    left_plan = WithSideMarks(left_plan, columns, 1, 0);
    right_plan = WithSideMarks(right_plan, columns, 0, 1);
  }
  auto union_node = std::make_shared<UnionNode>();
  union_node->input = left_plan;
  union_node->right = right_plan;
  union_node->output = left_plan->output;
  PlanNodePtr plan = union_node;

  BoundQuery query;
  query.inputs = left.inputs;
  query.inputs.insert(query.inputs.end(), right.inputs.begin(), right.inputs.end());
  query.visible_columns = columns;
  if (distinct || counted) {
    auto aggregate = std::make_shared<AggregateNode>();
    aggregate->input = plan;
    for (size_t i = 0; i < columns; ++i) {
      aggregate->group_keys.push_back(BoundExpr::MakeColumn(i, output[i].type));
      aggregate->output.push_back(output[i]);
    }
    if (marks) {
      for (size_t side = 0; side < 2; ++side) {
        AggregateCall sum;
        sum.kind = AggregateKind::kSum;
        sum.arg = BoundExpr::MakeColumn(columns + side, TypeId::kInt64);
        sum.result_type = TypeId::kInt64;
        aggregate->aggregates.push_back(sum);
        aggregate->output.push_back({side == 0 ? "_left_rows" : "_right_rows", TypeId::kInt64});
      }
    }
    plan = aggregate;
    if (counted) {
      BoundExprPtr left_rows = BoundExpr::MakeColumn(columns, TypeId::kInt64);
      BoundExprPtr right_rows = BoundExpr::MakeColumn(columns + 1, TypeId::kInt64);
      BoundExprPtr times = select.set_operator == parser::SetOperator::kIntersect
                               ? BoundExpr::MakeFunction(ScalarFunction::kLeast, TypeId::kInt64,
                                                         {left_rows, right_rows})
                               : BoundExpr::MakeFunction(ScalarFunction::kSubtract, TypeId::kInt64,
                                                         {left_rows, right_rows});
      std::vector<BoundExprPtr> expressions;
      std::vector<Column> projected;
      for (size_t i = 0; i < columns; ++i) {
        expressions.push_back(BoundExpr::MakeColumn(i, output[i].type));
        projected.push_back(output[i]);
      }
      expressions.push_back(times);
      projected.push_back({"_copies", TypeId::kInt64});
      plan = MakeProject(plan, std::move(expressions), std::move(projected));
      auto repeat = std::make_shared<RepeatNode>();
      repeat->count_column = columns;
      repeat->input = plan;
      repeat->output = output;
      plan = repeat;
    } else if (marks) {
      auto positive = [](size_t column) {
        return BoundExpr::MakeFunction(ScalarFunction::kGreater, TypeId::kBoolean,
                                       {BoundExpr::MakeColumn(column, TypeId::kInt64),
                                        BoundExpr::MakeConstant(Value::Int(0), TypeId::kInt64)});
      };
      BoundExprPtr right_test = positive(columns + 1);
      if (select.set_operator == parser::SetOperator::kExcept) {
        right_test = BoundExpr::MakeFunction(ScalarFunction::kNot, TypeId::kBoolean, {right_test});
      }
      auto filter = std::make_shared<FilterNode>();
      filter->predicate = BoundExpr::MakeFunction(ScalarFunction::kAnd, TypeId::kBoolean,
                                                  {positive(columns), right_test});
      filter->input = plan;
      filter->output = plan->output;
      plan = filter;
    }
  }
  if (distinct) {
    query.keyed = true;
    for (size_t i = 0; i < columns; ++i) query.key_columns.push_back(columns + i);
    query.append_only = false;
  } else if (counted) {
    query.has_join = true;  // Rows have no identity of their own: kept as a multiset.
  } else {
    query.append_only = left.append_only && right.append_only;
    query.has_join = true;  // Rows have no identity of their own: kept as a multiset.
  }
  // The result: the columns, then (for the distinct forms) the same columns as the row key.
  std::vector<BoundExprPtr> projection;
  std::vector<Column> projected;
  for (size_t i = 0; i < columns; ++i) {
    projection.push_back(BoundExpr::MakeColumn(i, output[i].type));
    projected.push_back(output[i]);
  }
  for (size_t i = 0; distinct && i < columns; ++i) {
    projection.push_back(BoundExpr::MakeColumn(i, output[i].type));
    projected.push_back({fmt::format("_group_key_{}", i), output[i].type});
  }
  plan = MakeProject(plan, std::move(projection), std::move(projected));

  // ORDER BY an output column (by position or name), then LIMIT and OFFSET: batch only.
  if (purpose == QueryPurpose::kMaterializedView &&
      (!select.order_by.empty() || select.limit || select.offset)) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "ORDER BY, LIMIT and OFFSET in a materialized view are not supported yet",
                   select.position);
  }
  std::vector<std::string> names;
  for (const Column& column : output) names.push_back(column.name);
  std::vector<SortKey> sort_keys;
  for (const parser::OrderItem& order : select.order_by) {
    SortKey key;
    key.descending = order.descending;
    key.nulls_first = order.nulls_first.value_or(order.descending);
    const parser::Expr& expr = *order.expr;
    std::optional<size_t> column = ResultColumnOf(expr, names);
    if (!column) {
      throw SqlError(sqlstate::kFeatureNotSupported, fmt::format("invalid {} ORDER BY clause", op),
                     expr.position)
          .WithDetail("Only result column names can be used, not expressions or functions.");
    }
    key.column = *column;
    sort_keys.push_back(key);
  }
  query.root = SortAndLimit(plan, sort_keys, select, true);
  return query;
}

// `VALUES (a, b), (c, d)`: constant rows, columns named column1, column2, ... Each column
// takes one type from its rows' values as a set operation's columns do (42804 when they
// cannot meet); ORDER BY names its columns, LIMIT and OFFSET apply (batch only).
BoundQuery BindValues(const parser::SelectStatement& select, QueryPurpose purpose) {
  BindScope no_columns;
  ExpressionBinder binder(&no_columns);
  auto values = std::make_shared<ValuesNode>();
  size_t width = select.values[0].size();
  for (const std::vector<parser::ExprPtr>& row : select.values) {
    if (row.size() != width) {
      throw SqlError(sqlstate::kSyntaxError, "VALUES lists must all be the same length",
                     row.empty() ? select.position : row[0]->position);
    }
    std::vector<BoundExprPtr>& bound = values->rows.emplace_back();
    for (const parser::ExprPtr& value : row) bound.push_back(binder.Bind(*value));
  }
  for (size_t c = 0; c < width; ++c) {
    DataType type = values->rows[0][c]->type;
    for (size_t r = 1; r < values->rows.size(); ++r) {
      type =
          SetOperationType(type, values->rows[r][c]->type, "VALUES", select.values[r][c]->position);
    }
    if (type.id == TypeId::kUnknown) type = TypeId::kVarchar;
    for (size_t r = 0; r < values->rows.size(); ++r) {
      values->rows[r][c] =
          ExpressionBinder::Coerce(values->rows[r][c], type, select.values[r][c]->position);
    }
    values->output.push_back({fmt::format("column{}", c + 1), type});
  }
  if (purpose == QueryPurpose::kMaterializedView &&
      (!select.order_by.empty() || select.limit || select.offset)) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "ORDER BY, LIMIT and OFFSET in a materialized view are not supported yet",
                   select.position);
  }
  std::vector<std::string> names;
  for (const Column& column : values->output) names.push_back(column.name);
  std::vector<SortKey> sort_keys;
  for (const parser::OrderItem& order : select.order_by) {
    std::optional<size_t> column = ResultColumnOf(*order.expr, names);
    if (!column) {
      throw SqlError(sqlstate::kFeatureNotSupported, "ORDER BY of VALUES must name a column",
                     order.expr->position)
          .WithHint("Order by column1, column2, ... or by position.");
    }
    SortKey key;
    key.column = *column;
    key.descending = order.descending;
    key.nulls_first = order.nulls_first.value_or(order.descending);
    sort_keys.push_back(key);
  }
  BoundQuery query;
  query.visible_columns = width;
  query.append_only = true;
  query.root = SortAndLimit(values, sort_keys, select, purpose == QueryPurpose::kBatch);
  return query;
}

BoundQuery Bind(const parser::SelectStatement& select, const Catalog& catalog, QueryPurpose purpose,
                bool nested) {
  ScopedTemporalContext temporal_context(purpose == QueryPurpose::kMaterializedView);
  ScopedSubqueryContext subquery_context(&catalog, purpose);
  if (select.set_operator != parser::SetOperator::kNone) {
    return BindSetOperation(select, catalog, purpose);
  }
  if (!select.values.empty()) return BindValues(select, purpose);
  BoundQuery query;
  BindScope scope;
  PlanNodePtr plan;
  std::vector<size_t> input_key;  // Scan columns identifying an input row (tables only).
  bool retracting = false;        // The input has updates and deletes.

  // FROM and WHERE.
  if (select.where && ContainsAggregate(*select.where)) {
    throw SqlError(sqlstate::kGroupingError, "aggregate functions are not allowed in WHERE",
                   select.where->position);
  }
  BoundFrom from;
  if (select.from) {
    from = BindFrom(*select.from, select.where.get(), catalog, purpose);
    plan = from.plan;
    scope = from.scope;
    input_key = from.input_key;
    retracting = from.retracting;
    query.inputs = from.inputs;
    query.has_join = from.has_join;
  } else {
    if (purpose == QueryPurpose::kMaterializedView) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "a materialized view needs a FROM clause naming a stream", select.position);
    }
    plan = std::make_shared<ValuesNode>();
    if (select.where) {
      ExpressionBinder binder(&scope);
      from.where = binder.BindPredicate(*select.where, "WHERE");
    }
  }
  // Temporal filters (WHERE ts > now() - INTERVAL …) become operators of their own, over
  // the other conditions (fewer rows to keep).
  size_t now_taken = 0;
  std::vector<std::shared_ptr<TemporalFilterNode>> temporal_filters;
  if (from.where && ContainsNow(*from.where)) {
    temporal_filters = TakeTemporalFilters(&from.where, &now_taken);
  }
  if (from.where) {
    // Subqueries in WHERE may become joins: their rows then have no identity of their own.
    bool joined = false;
    plan = PlanWhere(plan, from.where, purpose, &joined);
    query.has_join = query.has_join || joined;
  }
  for (const auto& temporal_filter : temporal_filters) {
    temporal_filter->input = plan;
    temporal_filter->output = plan->output;
    plan = temporal_filter;
  }
  if (!temporal_filters.empty()) {
    // Rows leave as time passes. The filter routes rows by their whole value, so the two
    // halves of an input row's update may take different instances: the result is kept as
    // a multiset of whole rows (as a join's is), where their order does not matter.
    retracting = true;
    query.has_join = true;
    input_key.clear();
  }

  // Expand the select list.
  struct Item {
    const parser::Expr* expr;  // Null for an expanded star column.
    size_t star_column = 0;
    std::string name;
  };
  std::vector<Item> items;
  for (const parser::SelectItem& item : select.items) {
    if (item.expr->kind == ExprKind::kStar) {
      const auto& star = static_cast<const parser::StarExpr&>(*item.expr);
      if (!select.from) {
        throw SqlError(sqlstate::kSyntaxError, "SELECT * with no tables specified is not valid",
                       item.expr->position);
      }
      if (!star.qualifier.empty() && !scope.sources.empty()) {
        // `t.*`: every column of that FROM item (USING columns included).
        const std::string& qualifier = star.qualifier.back();
        if (std::find(scope.relations.begin(), scope.relations.end(), qualifier) ==
            scope.relations.end()) {
          throw SqlError(sqlstate::kUndefinedTable,
                         fmt::format("missing FROM-clause entry for table \"{}\"", qualifier),
                         item.expr->position);
        }
        for (size_t i = 0; i < scope.columns.size(); ++i) {
          if (scope.sources[i].qualifier == qualifier && !scope.sources[i].hidden) {
            items.push_back({nullptr, i, scope.columns[i].name});
          }
        }
        continue;
      }
      if (!star.qualifier.empty() &&
          star.qualifier.back() != (scope.alias.empty() ? scope.table_name : scope.alias)) {
        throw SqlError(
            sqlstate::kUndefinedTable,
            fmt::format("missing FROM-clause entry for table \"{}\"", star.qualifier.back()),
            item.expr->position);
      }
      for (size_t i : from.star) items.push_back({nullptr, i, scope.columns[i].name});
      continue;
    }
    items.push_back(
        {item.expr.get(), 0, item.alias.empty() ? DefaultColumnName(*item.expr) : item.alias});
  }

  bool grouped = !select.group_by.empty() || (select.having != nullptr) ||
                 std::any_of(items.begin(), items.end(), [](const Item& item) {
                   return item.expr && ContainsAggregate(*item.expr);
                 });

  std::vector<BoundExprPtr> select_exprs;
  std::vector<std::string> names;
  for (const Item& item : items) names.push_back(item.name);
  std::vector<BoundExprPtr> group_keys;
  std::vector<AggregateCall> aggregates;
  BoundExprPtr having;
  std::vector<WindowFunction> window_functions;
  std::unique_ptr<ExpressionBinder> output_binder;  // Binds ORDER BY like the select list.
  SelectListUnnests unnests(plan->output.size());

  if (grouped) {
    // GROUP BY: an ordinal or an output name refers to a select item, as in PostgreSQL.
    ExpressionBinder input_binder(&scope);
    for (const parser::ExprPtr& key : select.group_by) {
      const parser::Expr* key_expr = key.get();
      if (key->kind == ExprKind::kLiteral &&
          static_cast<const parser::LiteralExpr&>(*key).literal_kind ==
              parser::LiteralKind::kInteger) {
        int64_t ordinal = std::stoll(static_cast<const parser::LiteralExpr&>(*key).value);
        if (ordinal < 1 || ordinal > static_cast<int64_t>(items.size())) {
          throw SqlError("42P10",
                         fmt::format("GROUP BY position {} is not in select list", ordinal),
                         key->position);
        }
        const Item& item = items[ordinal - 1];
        if (!item.expr) {
          group_keys.push_back(
              BoundExpr::MakeColumn(item.star_column, scope.columns[item.star_column].type));
          continue;
        }
        key_expr = item.expr;
      } else if (key->kind == ExprKind::kColumnRef) {
        const auto& ref = static_cast<const parser::ColumnRefExpr&>(*key);
        if (ref.names.size() == 1 && !input_binder.ResolveColumn(ref.names, ref.position)) {
          for (const Item& item : items) {
            if (item.expr && item.name == ref.names[0]) key_expr = item.expr;
          }
        }
      }
      if (ContainsAggregate(*key_expr)) {
        throw SqlError(sqlstate::kGroupingError, "aggregate functions are not allowed in GROUP BY",
                       key_expr->position);
      }
      group_keys.push_back(input_binder.Bind(*key_expr));
    }
    GroupedExpressionBinder binder(&scope, &group_keys, &aggregates);
    for (const Item& item : items) {
      if (!item.expr) {
        parser::ColumnRefExpr ref;
        ref.names = {scope.columns[item.star_column].name};
        if (!scope.sources.empty() && !scope.sources[item.star_column].qualifier.empty()) {
          ref.names.insert(ref.names.begin(), scope.sources[item.star_column].qualifier);
        }
        select_exprs.push_back(binder.Bind(ref));
      } else {
        select_exprs.push_back(binder.Bind(*item.expr));
      }
    }
    having = select.having ? binder.BindPredicate(*select.having, "HAVING") : nullptr;
    output_binder = std::make_unique<GroupedExpressionBinder>(&scope, &group_keys, &aggregates);
  } else {
    // Window functions add their columns after the input's (a WindowNode, built below), and
    // so do unnest calls (an UnnestNode; the two are not combined).
    WindowExpressionBinder binder(&scope, plan->output.size(), &window_functions, &unnests);
    for (const Item& item : items) {
      if (!item.expr) {
        select_exprs.push_back(
            BoundExpr::MakeColumn(item.star_column, scope.columns[item.star_column].type));
      } else {
        select_exprs.push_back(binder.Bind(*item.expr));
      }
    }
    output_binder = std::make_unique<WindowExpressionBinder>(&scope, plan->output.size(),
                                                             &window_functions, &unnests);
  }

  bool has_windows = !window_functions.empty();
  if (select.emit_on_window_close) {
    // Checked before the aggregate is built, with the same rule.
    bool windowed = false;
    for (const BoundExprPtr& key : group_keys) {
      windowed |=
          key->kind == BoundExpr::Kind::kColumn && from.window_close_offsets.count(key->column) > 0;
    }
    if (!windowed) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "EMIT ON WINDOW CLOSE needs a GROUP BY of a window's bound: window_start or "
                     "window_end of TUMBLE or HOP over a stream's WATERMARK column, or over a "
                     "view's column that carries it",
                     select.position);
    }
  }

  // The projection: visible columns, then hidden group keys, then hidden sort keys.
  std::vector<BoundExprPtr> projection = select_exprs;
  std::vector<std::string> projection_names = names;
  query.visible_columns = select_exprs.size();
  query.keyed = grouped || select.distinct || !input_key.empty();
  // A join of append-only inputs only grows if it is inner: an outer join retracts a
  // NULL-padded row when its first match arrives.
  query.append_only = !grouped && !select.distinct && !retracting && !HasOuterJoin(plan);
  // Each window's rows are inserted once, final, and never change.
  if (select.emit_on_window_close && !select.distinct && !retracting) query.append_only = true;
  if (grouped && !select.distinct) {
    for (size_t i = 0; i < group_keys.size(); ++i) {
      query.key_columns.push_back(projection.size());
      projection.push_back(BoundExpr::MakeColumn(i, group_keys[i]->type));
      projection_names.push_back(fmt::format("_group_key_{}", i));
    }
  } else if (!grouped && !select.distinct && purpose == QueryPurpose::kMaterializedView) {
    for (size_t column : input_key) {
      query.key_columns.push_back(projection.size());
      projection.push_back(BoundExpr::MakeColumn(column, plan->output[column].type));
      projection_names.push_back(fmt::format("_input_key_{}", query.key_columns.size() - 1));
    }
  }

  // ORDER BY: by ordinal, by output name, or by an expression over the input. A view's rows
  // have no order, but with DISTINCT ON its ORDER BY says which row of each key it keeps.
  std::vector<SortKey> sort_keys;
  bool distinct_on = !select.distinct_on.empty();
  if (purpose == QueryPurpose::kBatch || distinct_on) {
    for (const parser::OrderItem& order : select.order_by) {
      SortKey key;
      key.descending = order.descending;
      key.nulls_first = order.nulls_first.value_or(order.descending);
      const parser::Expr& expr = *order.expr;
      std::optional<size_t> column = ResultColumnOf(expr, names);
      if (!column) {
        BoundExprPtr bound = output_binder->Bind(expr);
        std::string text = bound->ToString();
        for (size_t i = 0; i < projection.size() && !column; ++i) {
          if (projection[i]->ToString() == text) column = i;
        }
        if (!column) {
          if (select.distinct) {
            throw SqlError("42P10",
                           "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                           expr.position);
          }
          column = projection.size();
          projection.push_back(bound);
          projection_names.push_back(fmt::format("_sort_key_{}", sort_keys.size()));
        }
      }
      key.column = *column;
      sort_keys.push_back(key);
    }
  }
  if (purpose == QueryPurpose::kMaterializedView && (select.limit || select.offset)) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "LIMIT and OFFSET in a materialized view are not supported yet",
                   (select.limit ? select.limit : select.offset)->position);
  }
  std::vector<size_t> distinct_on_columns;
  if (distinct_on) {
    distinct_on_columns =
        BindDistinctOn(select, names, *output_binder, &projection, &projection_names, sort_keys);
  }

  if (grouped) {
    // Built only now: ORDER BY may have added aggregates.
    auto aggregate = std::make_shared<AggregateNode>();
    aggregate->input = plan;
    aggregate->group_keys = group_keys;
    aggregate->aggregates = aggregates;
    if (retracting && purpose == QueryPurpose::kMaterializedView) {
      // Over rows that may be deleted, min and max keep every value (with its count): the
      // next extreme must be at hand when the current one goes.
      for (AggregateCall& call : aggregate->aggregates) {
        if (call.kind == AggregateKind::kMin || call.kind == AggregateKind::kMax) {
          call.keeps_values = true;
        }
      }
    }
    for (size_t i = 0; i < group_keys.size(); ++i) {
      aggregate->output.push_back({fmt::format("_group_key_{}", i), group_keys[i]->type});
    }
    for (const AggregateCall& call : aggregates) {
      aggregate->output.push_back({std::string(AggregateKindName(call.kind)), call.result_type});
    }
    // Grouped by an event-time window's bound, a group is complete once the watermark
    // passes its window: its state can go, and EMIT ON WINDOW CLOSE emits it then.
    for (size_t k = 0; k < group_keys.size() && !aggregate->window_close; ++k) {
      if (group_keys[k]->kind != BoundExpr::Kind::kColumn) continue;
      auto bound = from.window_close_offsets.find(group_keys[k]->column);
      if (bound != from.window_close_offsets.end()) {
        aggregate->window_close = AggregateNode::WindowClose{k, bound->second};
      }
    }
    aggregate->emit_on_window_close = select.emit_on_window_close;
    plan = aggregate;
    if (having) {
      auto filter = std::make_shared<FilterNode>();
      filter->predicate = having;
      filter->input = plan;
      filter->output = plan->output;
      plan = filter;
    }
  }
  bool input_append_only = !grouped && !retracting && !HasOuterJoin(plan);
  if (!unnests.empty()) {
    if (has_windows) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "unnest() and window functions in one select list are not supported",
                     select.position)
          .WithHint("Unnest in FROM, or in a subquery.");
    }
    plan = unnests.MakeNode(plan);
    // An input row expands to several rows: they have no key of their own.
    query.keyed = false;
    query.key_columns.clear();
    query.has_join = true;
  }
  plan = MakeWindowNode(plan, std::move(window_functions), input_append_only);
  plan = MakeProject(plan, projection, ColumnsOf(projection, projection_names));
  if (has_windows && purpose == QueryPurpose::kMaterializedView) {
    // Only a top-N survives into a view (RewriteTopN), and its rows come and go as ranks
    // change: they have no key of their own, so they are kept as a multiset.
    query.keyed = false;
    query.key_columns.clear();
    query.append_only = false;
    query.has_join = true;
  }
  if (distinct_on) {
    plan = MakeDistinctOn(plan, distinct_on_columns, sort_keys, input_append_only);
    query.keyed = true;
    query.key_columns = distinct_on_columns;
    query.append_only = false;
    if (purpose == QueryPurpose::kMaterializedView) sort_keys.clear();
  }

  if (select.distinct) {
    // DISTINCT is a grouping by every output column, with no aggregates.
    auto distinct = std::make_shared<AggregateNode>();
    distinct->input = plan;
    for (size_t i = 0; i < plan->output.size(); ++i) {
      distinct->group_keys.push_back(BoundExpr::MakeColumn(i, plan->output[i].type));
    }
    distinct->output = plan->output;
    plan = distinct;
    query.key_columns.clear();
    for (size_t i = 0; i < query.visible_columns; ++i) query.key_columns.push_back(i);
  }

  plan = SortAndLimit(plan, sort_keys, select, purpose == QueryPurpose::kBatch);

  if (purpose == QueryPurpose::kMaterializedView && !nested) {
    std::set<std::string> seen;
    for (size_t i = 0; i < query.visible_columns; ++i) {
      if (!seen.insert(names[i]).second) {
        throw SqlError("42701", fmt::format("column \"{}\" specified more than once", names[i]),
                       select.position)
            .WithHint("Give the columns distinct names with AS.");
      }
    }
  }
  query.root = plan;
  // Any now() no temporal filter took is refused.
  temporal_context.CheckNowTaken(now_taken);
  return query;
}

}  // namespace

}  // namespace stave::planner
