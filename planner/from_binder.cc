#include "planner/from_binder.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/sql_error.h"
#include "common/temporal.h"
#include "planner/event_time.h"
#include "planner/join_state_cleaning.h"
#include "planner/stream_watermark.h"
#include "planner/unnest_binding.h"

namespace stave::planner {

std::string_view JoinTypeName(JoinType type) {
  switch (type) {
    case JoinType::kInner:
      return "INNER";
    case JoinType::kLeft:
      return "LEFT";
    case JoinType::kRight:
      return "RIGHT";
    case JoinType::kFull:
      return "FULL";
    case JoinType::kSemi:
      return "SEMI";
    case JoinType::kAnti:
      return "ANTI";
  }
  return "?";
}

std::optional<size_t> ResolveJoinedColumn(const BindScope& scope,
                                          const parser::QualifiedName& names, int position) {
  const std::string& column = names.back();
  std::string qualifier;
  if (names.size() > 1) {
    qualifier = names[names.size() - 2];
    if (names.size() > 4 || std::find(scope.relations.begin(), scope.relations.end(), qualifier) ==
                                scope.relations.end()) {
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("missing FROM-clause entry for table \"{}\"", qualifier),
                     position);
    }
  }
  std::optional<size_t> found;
  for (size_t i = 0; i < scope.columns.size(); ++i) {
    const ScopeColumn& source = scope.sources[i];
    if (source.hidden || scope.columns[i].name != column) continue;
    if (names.size() > 1 ? source.qualifier != qualifier : !source.unqualified) continue;
    if (found) {
      throw SqlError(sqlstate::kAmbiguousColumn,
                     fmt::format("column reference \"{}\" is ambiguous", column), position);
    }
    found = i;
  }
  return found;
}

namespace {

struct PendingJoin {
  std::shared_ptr<JoinNode> node;
  size_t offset = 0;         // Of the join's output within the whole FROM clause's output.
  size_t left_width = 0;     // Columns of the left input.
  size_t right_width = 0;    // Columns of the right input.
  bool takes_where = false;  // WHERE equalities may become its keys (inner, not nullable).
  // Per side (0 left, 1 right): WHERE conditions over that side alone may filter its input
  // instead of the join's output (the side is not NULL-padded by this join or one above).
  bool side_takes_where[2] = {false, false};
  int position = 0;
  std::vector<std::string> qualified_names;  // For EXPLAIN of state cleaning.  // Of the join's
                                             // output columns, for EXPLAIN.
};

struct FromContext {
  const Catalog* catalog;
  QueryPurpose purpose;
  std::vector<PendingJoin> joins;  // Children before their parents.
};

BoundExprPtr Shift(const BoundExprPtr& expr, int64_t delta) {
  if (expr->kind == BoundExpr::Kind::kColumn) {
    return BoundExpr::MakeColumn(static_cast<size_t>(static_cast<int64_t>(expr->column) + delta),
                                 expr->type);
  }
  if (expr->kind == BoundExpr::Kind::kConstant || expr->kind == BoundExpr::Kind::kOuterColumn) {
    return expr;
  }
  std::vector<BoundExprPtr> args;
  for (const auto& arg : expr->args) args.push_back(Shift(arg, delta));
  if (expr->kind == BoundExpr::Kind::kSubquery) {
    return BoundExpr::MakeSubquery(expr->subquery, expr->type, std::move(args));
  }
  return BoundExpr::MakeFunction(expr->function, expr->type, std::move(args));
}

bool Within(const std::set<size_t>& columns, size_t begin, size_t end) {
  return !columns.empty() && *columns.begin() >= begin && *columns.rbegin() < end;
}

/// Makes `left` and `right` comparable as hash keys (one type, so that equal values encode
/// equally); false if they are of different kinds.
bool UnifyKeyTypes(BoundExprPtr* left, BoundExprPtr* right, int position) {
  DataType a = (*left)->type;
  DataType b = (*right)->type;
  if (a.id == b.id) return true;
  DataType target;
  if (a.IsInteger() && b.IsInteger()) {
    target = DataType(TypeId::kInt64);
  } else if (a.IsNumeric() && b.IsNumeric()) {
    // Integers meet numeric exactly, as PostgreSQL compares them; floats make both floats.
    target = a.IsFloat() || b.IsFloat() ? DataType(TypeId::kFloat64) : DataType(TypeId::kNumeric);
  } else if (a.IsString() && b.IsString()) {
    target = DataType(TypeId::kVarchar);
  } else {
    return false;
  }
  *left = ExpressionBinder::Coerce(*left, target, position);
  *right = ExpressionBinder::Coerce(*right, target, position);
  return true;
}

/// Tries to make `conjunct` (over the columns from `offset` on) a key pair of `join`.
bool TakeEquality(const BoundExprPtr& conjunct, size_t offset, PendingJoin* join) {
  if (conjunct->kind != BoundExpr::Kind::kFunction ||
      conjunct->function != ScalarFunction::kEqual || conjunct->args.size() != 2) {
    return false;
  }
  std::set<size_t> first;
  std::set<size_t> second;
  CollectColumns(*conjunct->args[0], &first);
  CollectColumns(*conjunct->args[1], &second);
  size_t left_begin = join->offset - offset;
  size_t right_begin = left_begin + join->left_width;
  size_t right_end = right_begin + join->right_width;
  BoundExprPtr left;
  BoundExprPtr right;
  if (Within(first, left_begin, right_begin) && Within(second, right_begin, right_end)) {
    left = conjunct->args[0];
    right = conjunct->args[1];
  } else if (Within(second, left_begin, right_begin) && Within(first, right_begin, right_end)) {
    left = conjunct->args[1];
    right = conjunct->args[0];
  } else {
    return false;
  }
  left = Shift(left, -static_cast<int64_t>(left_begin));
  right = Shift(right, -static_cast<int64_t>(right_begin));
  if (!UnifyKeyTypes(&left, &right, join->position)) return false;
  join->node->left_keys.push_back(left);
  join->node->right_keys.push_back(right);
  return true;
}

BoundFrom BindItem(const parser::TableRef& ref, size_t offset, bool takes_where,
                   FromContext* context);

/// Whether a condition gives the same answer evaluated below a join as above it: built of
/// the row's columns, constants and functions alone (no subquery, no outer column), and no
/// now(), which a view's WHERE turns into a temporal filter.
bool EvaluatesAnywhere(const BoundExpr& expr) {
  switch (expr.kind) {
    case BoundExpr::Kind::kConstant:
    case BoundExpr::Kind::kColumn:
      return true;
    case BoundExpr::Kind::kFunction:
      if (expr.function == ScalarFunction::kNow) return false;
      for (const auto& arg : expr.args) {
        if (!EvaluatesAnywhere(*arg)) return false;
      }
      return true;
    default:
      return false;
  }
}

/// Moves a WHERE condition over one side of a join alone below the join, as a filter of
/// that side's input, as deep as it goes: rows it drops are neither kept in the join's state
/// nor joined. The same rows result, as the side is not NULL-padded (an inner join, or the
/// preserved side of an outer one): a row the condition drops would have made only joined
/// rows the WHERE drops.
bool TakeSideFilter(const BoundExprPtr& conjunct, FromContext* context) {
  if (!EvaluatesAnywhere(*conjunct)) return false;
  std::set<size_t> columns;
  CollectColumns(*conjunct, &columns);
  for (PendingJoin& join : context->joins) {  // Innermost first.
    size_t begins[3] = {join.offset, join.offset + join.left_width,
                        join.offset + join.left_width + join.right_width};
    for (size_t side = 0; side < 2; ++side) {
      if (!join.side_takes_where[side] || !Within(columns, begins[side], begins[side + 1])) {
        continue;
      }
      PlanNodePtr& input = side == 0 ? join.node->input : join.node->right;
      auto filter = std::make_shared<FilterNode>();
      filter->predicate = Shift(conjunct, -static_cast<int64_t>(begins[side]));
      filter->input = input;
      filter->output = input->output;
      input = filter;
      return true;
    }
  }
  return false;
}

/// Moves a WHERE comparison between the two sides of an inner join into the join's
/// condition, where it can bound the join's state (see join_state_cleaning.h): the result
/// is the same, as an inner join's condition and a WHERE over it filter the same pairs.
bool TakeTimeBound(const BoundExprPtr& conjunct, FromContext* context) {
  if (conjunct->kind != BoundExpr::Kind::kFunction || conjunct->args.size() != 2) return false;
  switch (conjunct->function) {
    case ScalarFunction::kLess:
    case ScalarFunction::kLessEqual:
    case ScalarFunction::kGreater:
    case ScalarFunction::kGreaterEqual:
      break;
    default:
      return false;
  }
  std::set<size_t> first;
  std::set<size_t> second;
  CollectColumns(*conjunct->args[0], &first);
  CollectColumns(*conjunct->args[1], &second);
  for (PendingJoin& join : context->joins) {  // Innermost first.
    if (!join.takes_where) continue;
    size_t left_begin = join.offset;
    size_t right_begin = left_begin + join.left_width;
    size_t right_end = right_begin + join.right_width;
    bool spans =
        (Within(first, left_begin, right_begin) && Within(second, right_begin, right_end)) ||
        (Within(second, left_begin, right_begin) && Within(first, right_begin, right_end));
    if (!spans) continue;
    std::vector<BoundExprPtr> conjuncts;
    if (join.node->residual) conjuncts.push_back(join.node->residual);
    conjuncts.push_back(Shift(conjunct, -static_cast<int64_t>(left_begin)));
    join.node->residual = AndOf(conjuncts);
    return true;
  }
  return false;
}

BoundFrom BindTable(const parser::TableRef& from, FromContext* context) {
  const Catalog& catalog = *context->catalog;
  BoundFrom bound;
  // A system table: schema-qualified (stave.pg_catalog.pg_class names the database too), or
  // a pg_catalog table by its bare name when no user object has that name.
  const SystemTable* system_table = nullptr;
  size_t parts = from.name.size();
  if ((parts == 2 || (parts == 3 && from.name[0] == "stave")) &&
      catalog.IsSystemSchema(from.name[parts - 2])) {
    system_table = catalog.FindSystemTable(from.name[parts - 2], from.name[parts - 1]);
    if (!system_table) {
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("relation \"{}.{}\" does not exist", from.name[parts - 2],
                                 from.name[parts - 1]),
                     from.position);
    }
  } else if (parts == 1 && !catalog.Find(from.name[0])) {
    system_table = catalog.FindSystemTable(kPgCatalogSchema, from.name[0]);
  }
  if (system_table) {
    const SystemTable* table = system_table;
    if (context->purpose == QueryPurpose::kMaterializedView) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "a materialized view cannot read a system table", from.position);
    }
    auto object = std::make_shared<CatalogObject>();
    object->type = ObjectType::kSystemTable;
    object->name = table->name;
    object->columns = table->columns;
    auto scan = std::make_shared<ScanNode>();
    scan->object = object;
    scan->output = object->columns;
    scan->system_rows = std::make_shared<const std::vector<std::vector<Value>>>(table->rows());
    bound.plan = scan;
    bound.scope.table_name = object->name;
    bound.scope.alias = from.alias;
    bound.scope.columns = object->columns;
    for (size_t i = 0; i < object->columns.size(); ++i) bound.star.push_back(i);
    return bound;
  }
  std::string name = ResolveObjectName(from.name, from.position);
  CatalogObjectPtr object = catalog.Find(name);
  if (!object) {
    throw SqlError(sqlstate::kUndefinedTable, fmt::format("relation \"{}\" does not exist", name),
                   from.position);
  }
  if (!object->Readable()) {
    throw SqlError(sqlstate::kWrongObjectType,
                   fmt::format("\"{}\" is a sink; a sink holds no rows to read", name),
                   from.position)
        .WithHint("Query the sink's input, or its target, instead.");
  }
  if (context->purpose == QueryPurpose::kBatch && object->type == ObjectType::kStream) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("cannot read stream \"{}\" directly", name), from.position)
        .WithHint(
            "A stream has no stored rows. Create a materialized view over it and query "
            "the view.");
  }
  auto scan = std::make_shared<ScanNode>();
  scan->object = object;
  scan->output = object->ChangelogColumns();
  // A non-grouped view over a table or a view keeps its input's row identity: the
  // table's key or hidden row id, or the view's row key.
  if (object->type == ObjectType::kTable) {
    if (object->HasRowId()) {
      bound.input_key.push_back(object->columns.size());
    } else {
      bound.input_key = object->primary_key;
    }
  } else if (object->type == ObjectType::kMaterializedView) {
    bound.input_key.push_back(object->columns.size());
  }
  bound.retracting = object->Retracting();
  bound.plan = scan;
  bound.inputs.push_back(object);
  bound.scope.table_name = object->name;
  bound.scope.alias = from.alias;
  bound.scope.columns = object->columns;
  for (size_t i = 0; i < object->columns.size(); ++i) bound.star.push_back(i);
  return bound;
}

/// Turns a single relation's scope into the general form: every plan column, qualified by
/// the relation's name, hidden columns marked.
void Generalize(BoundFrom* bound, const std::string& qualifier, size_t visible) {
  BindScope& scope = bound->scope;
  if (!scope.sources.empty()) return;
  scope.columns = bound->plan->output;
  for (size_t i = 0; i < scope.columns.size(); ++i) {
    scope.sources.push_back(ScopeColumn{qualifier, true, i >= visible});
  }
  scope.relations = {qualifier};
}

/// The size or slide of a window: a positive constant, in the time column's physical units.
int64_t WindowLength(const parser::Expr& expr, DataType time_type, std::string_view what) {
  BindScope no_columns;
  BoundExprPtr length = ExpressionBinder(&no_columns).Bind(expr);
  if (length->kind != BoundExpr::Kind::kConstant || length->constant.is_null()) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("a window's {} must be a constant", what), expr.position);
  }
  std::optional<int64_t> units;
  if (time_type.IsInteger() && length->type.IsInteger()) units = length->constant.int_value();
  if (time_type.IsTimestamp() && length->type.id == TypeId::kInterval) {
    temporal::Interval interval = temporal::DecodeInterval(length->constant.string_value());
    // A month has no fixed length, so windows could not be cut at fixed offsets.
    if (interval.months != 0) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("a window's {} cannot be in months or years", what), expr.position)
          .WithHint("Use days, hours, minutes or seconds.");
    }
    units = interval.days * temporal::kMicrosPerDay + interval.micros;
  }
  if (!units) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("a window's {} over a {} column must be {}", what, time_type.Name(),
                               time_type.IsInteger() ? "an integer" : "an interval"),
                   expr.position);
  }
  if (*units <= 0) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("a window's {} must be positive", what), expr.position);
  }
  return *units;
}

/// The columns of `plan`'s output that bound event-time windows, as
/// BoundFrom::window_close_offsets says, found through projections, filters, UNION ALL
/// (whose watermark is the lower of its inputs': a window closes once both sides passed it)
/// and joins that equate a bound of one side with a bound of the other (a window join).
///
/// Why a window join keeps its bounds: a join emits (or retracts) a row only when a row
/// arrives on one side, and a source drops rows below its watermark, so the arriving row's
/// bound lies past its side's watermark less the offset. The equality gives the row from the
/// other side the same value. The join's watermark is the lower of its sides', so every row
/// it emits is still inside the window at the join's watermark. A join on other columns may
/// match a new row with an old window's row, after that window closed.
std::map<size_t, int64_t> WindowBounds(const PlanNode& plan) {
  switch (plan.kind) {
    case PlanNodeKind::kTimeWindow: {
      // Rows still to come have a time of at least watermark + d: a window has all its rows
      // once the watermark reaches its end less d.
      const auto& window = static_cast<const TimeWindowNode&>(plan);
      EventTimeColumns input = DeriveEventTimeColumns(*plan.input);
      auto time = input.find(window.time_column);
      if (time == input.end()) return {};
      return {{window.visible_columns, window.size - time->second},
              {window.visible_columns + 1, -time->second}};
    }
    case PlanNodeKind::kFilter:
      return WindowBounds(*plan.input);
    case PlanNodeKind::kProject:
      return ThroughColumnReferences(static_cast<const ProjectNode&>(plan).expressions,
                                     WindowBounds(*plan.input));
    case PlanNodeKind::kJoin: {
      const auto& join = static_cast<const JoinNode&>(plan);
      if (join.scalar_subquery) return {};
      std::map<size_t, int64_t> left = WindowBounds(*plan.input);
      std::map<size_t, int64_t> right = WindowBounds(*join.right);
      size_t left_width = plan.input->output.size();
      std::map<size_t, int64_t> bounds;
      for (size_t k = 0; k < join.left_keys.size(); ++k) {
        const BoundExpr& left_key = *join.left_keys[k];
        const BoundExpr& right_key = *join.right_keys[k];
        if (left_key.kind != BoundExpr::Kind::kColumn ||
            right_key.kind != BoundExpr::Kind::kColumn) {
          continue;
        }
        auto left_bound = left.find(left_key.column);
        auto right_bound = right.find(right_key.column);
        if (left_bound == left.end() || right_bound == right.end()) continue;
        // Windows of different sizes: the later close holds for both.
        int64_t offset = std::max(left_bound->second, right_bound->second);
        auto widen = [&bounds](size_t column, int64_t at_least) {
          int64_t& kept = bounds.emplace(column, at_least).first->second;
          kept = std::max(kept, at_least);
        };
        widen(left_key.column, offset);
        // A semi or anti join emits the left side's columns alone.
        if (!join.FiltersLeft()) widen(left_width + right_key.column, offset);
      }
      return bounds;
    }
    case PlanNodeKind::kUnion: {
      std::map<size_t, int64_t> left = WindowBounds(*plan.input);
      std::map<size_t, int64_t> right = WindowBounds(*static_cast<const UnionNode&>(plan).right);
      std::map<size_t, int64_t> bounds;
      for (const auto& [column, offset] : left) {
        auto it = right.find(column);
        if (it != right.end()) bounds[column] = std::max(offset, it->second);
      }
      return bounds;
    }
    default:
      return {};
  }
}

/// TUMBLE(relation, time_column, size) or HOP(relation, time_column, slide, size).
BoundFrom BindTimeWindow(const parser::TableRef& ref, FromContext* context) {
  parser::TableRef relation;
  relation.name = ref.name;
  relation.position = ref.position;
  BoundFrom input = BindTable(relation, context);
  const std::vector<Column>& visible = input.scope.columns;
  std::optional<size_t> time_column;
  for (size_t i = 0; i < visible.size(); ++i) {
    if (visible[i].name == ref.time_column) time_column = i;
  }
  if (!time_column) {
    throw SqlError(sqlstate::kUndefinedColumn,
                   fmt::format("column \"{}\" does not exist in \"{}\"", ref.time_column,
                               input.scope.table_name),
                   ref.time_column_position);
  }
  DataType time_type = visible[*time_column].type;
  if (!IsEventTimeType(time_type)) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("a window's time column must be a timestamp, a timestamp with "
                               "time zone or a bigint; \"{}\" is {}",
                               ref.time_column, time_type.Name()),
                   ref.time_column_position);
  }
  auto node = std::make_shared<TimeWindowNode>();
  node->input = input.plan;
  node->time_column = *time_column;
  node->visible_columns = visible.size();
  node->size = WindowLength(*ref.window_arguments.back(), time_type, "size");
  node->slide = ref.window_function == parser::WindowFunction::kHop
                    ? WindowLength(*ref.window_arguments.front(), time_type, "slide")
                    : node->size;
  if (time_type.IsTimestamp()) node->origin = temporal::kUnixEpochDays * temporal::kMicrosPerDay;
  if (node->size % node->slide != 0) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "a HOP window's size must be a multiple of its slide",
                   ref.window_arguments.front()->position);
  }
  const std::vector<Column>& inputs = input.plan->output;
  node->output.assign(inputs.begin(), inputs.begin() + static_cast<ptrdiff_t>(visible.size()));
  node->output.push_back({"window_start", time_type});
  node->output.push_back({"window_end", time_type});
  node->output.insert(node->output.end(), inputs.begin() + static_cast<ptrdiff_t>(visible.size()),
                      inputs.end());

  BoundFrom bound;
  bound.plan = node;
  bound.retracting = input.retracting;
  bound.inputs = input.inputs;
  // A row's identity: its input row's (hidden columns moved past the window's two), and for
  // HOP, whose rows land in several windows, the window too.
  for (size_t key : input.input_key)
    bound.input_key.push_back(key < visible.size() ? key : key + 2);
  if (!bound.input_key.empty() && node->slide != node->size) {
    bound.input_key.push_back(visible.size());
  }
  bound.window_close_offsets = WindowBounds(*node);

  bound.scope.table_name = input.scope.table_name;
  for (size_t i = 0; i < visible.size() + 2; ++i) bound.star.push_back(i);
  const std::string& qualifier = ref.alias.empty() ? input.scope.table_name : ref.alias;
  Generalize(&bound, qualifier, visible.size() + 2);
  return bound;
}

BoundFrom BindSubquery(const parser::TableRef& ref, FromContext* context) {
  BoundQuery query = BindNestedQuery(*ref.subquery, *context->catalog, context->purpose);
  BoundFrom bound;
  bound.plan = query.root;
  // A subquery passes on the window bounds it selects as they are: a GROUP BY over them
  // outside still closes its windows.
  for (const auto& [column, offset] : WindowBounds(*query.root)) {
    if (column < query.visible_columns) bound.window_close_offsets.emplace(column, offset);
  }
  bound.retracting = !query.append_only;
  bound.has_join = query.has_join;
  bound.inputs = query.inputs;
  if (query.keyed && !query.has_join) bound.input_key = query.key_columns;
  bound.scope.table_name = ref.alias;
  for (size_t i = 0; i < query.visible_columns; ++i) bound.star.push_back(i);
  // `AS alias(a, b)` names the first columns: a projection renames them, so that joins over
  // the subquery see the new names too.
  if (ref.column_aliases.size() > query.visible_columns) {
    throw SqlError("42P10",
                   fmt::format("table \"{}\" has {} columns available but {} columns specified",
                               ref.alias, query.visible_columns, ref.column_aliases.size()),
                   ref.position);
  }
  if (!ref.column_aliases.empty()) {
    auto project = std::make_shared<ProjectNode>();
    project->input = bound.plan;
    project->output = bound.plan->output;
    for (size_t i = 0; i < project->output.size(); ++i) {
      project->expressions.push_back(BoundExpr::MakeColumn(i, project->output[i].type));
      if (i < ref.column_aliases.size()) project->output[i].name = ref.column_aliases[i];
    }
    bound.plan = project;
  }
  Generalize(&bound, ref.alias, query.visible_columns);
  return bound;
}

// A set-returning function in FROM (`unnest(a, …) [WITH ORDINALITY] [AS u(x, …)]`) over
// `left`: the FROM items before it, whose columns its arguments may name (PostgreSQL's
// implied LATERAL), or, first in FROM, one row without columns. Its rows are those of
// `left`, each expanded once per element, with the element columns after left's.
BoundFrom BindFunctionItem(const parser::TableRef& ref, BoundFrom left) {
  if (ref.function_name != "unnest") {
    throw SqlError(sqlstate::kUndefinedFunction,
                   fmt::format("table function {} does not exist", ref.function_name), ref.position)
        .WithHint(
            "Stave's table functions are unnest(array, …), TUMBLE(relation, time_column, size) "
            "and HOP(relation, time_column, slide, size).");
  }
  if (ref.function_arguments.empty()) {
    throw SqlError(sqlstate::kUndefinedFunction, "function unnest() does not exist", ref.position);
  }
  std::string qualifier = ref.alias.empty() ? "unnest" : ref.alias;
  size_t width = ref.function_arguments.size() + (ref.with_ordinality ? 1 : 0);
  if (ref.column_aliases.size() > width) {
    throw SqlError("42P10",
                   fmt::format("table \"{}\" has {} columns available but {} columns specified",
                               qualifier, width, ref.column_aliases.size()),
                   ref.position);
  }
  // PostgreSQL's names: the alias for a single array, else "unnest"; then "ordinality".
  std::vector<std::string> names(ref.function_arguments.size(),
                                 ref.function_arguments.size() == 1 ? qualifier : "unnest");
  if (ref.with_ordinality) names.push_back("ordinality");
  for (size_t i = 0; i < ref.column_aliases.size(); ++i) names[i] = ref.column_aliases[i];

  ExpressionBinder binder(&left.scope);
  std::vector<BoundExprPtr> arrays;
  std::vector<int> positions;
  for (const auto& argument : ref.function_arguments) {
    if (ContainsAggregate(*argument)) {
      throw SqlError(sqlstate::kGroupingError,
                     "aggregate functions are not allowed in functions in FROM",
                     argument->position);
    }
    arrays.push_back(binder.Bind(*argument));
    positions.push_back(argument->position);
  }
  size_t left_width = left.plan->output.size();
  auto node = MakeUnnestNode(left.plan, std::move(arrays), positions, ref.with_ordinality, names);

  BoundFrom bound = std::move(left);
  if (std::find(bound.scope.relations.begin(), bound.scope.relations.end(), qualifier) !=
      bound.scope.relations.end()) {
    throw SqlError("42712", fmt::format("table name \"{}\" specified more than once", qualifier),
                   ref.position);
  }
  bound.plan = node;
  // An input row expands to several rows: they have no key of their own, and a view keeps
  // them as a multiset.
  bound.input_key.clear();
  bound.has_join = true;
  bound.scope.table_name = bound.scope.relations.empty() ? qualifier : bound.scope.table_name;
  bound.scope.relations.push_back(qualifier);
  for (size_t i = left_width; i < node->output.size(); ++i) {
    bound.scope.columns.push_back(node->output[i]);
    bound.scope.sources.push_back(ScopeColumn{qualifier, true, false});
    bound.star.push_back(i);
  }
  return bound;
}

// `unnest(…)` first in FROM: over one row without columns.
BoundFrom BindStandaloneFunction(const parser::TableRef& ref) {
  BoundFrom empty;
  empty.plan = std::make_shared<ValuesNode>();
  return BindFunctionItem(ref, std::move(empty));
}

BoundFrom BindJoin(const parser::TableRef& ref, size_t offset, bool takes_where,
                   FromContext* context) {
  if (ref.right->from_kind == parser::FromKind::kFunction && ref.right->function_name == "unnest") {
    // `a, unnest(a.x)`, `a CROSS JOIN LATERAL unnest(a.x)`, `a JOIN unnest(a.x) ON …`.
    if (ref.join_kind != parser::JoinKind::kCross && ref.join_kind != parser::JoinKind::kInner) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "outer joins with a set-returning function are not supported",
                     ref.right->position)
          .WithHint("Use a comma, CROSS JOIN or an inner JOIN.");
    }
    if (!ref.using_columns.empty()) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "JOIN … USING with a set-returning function is not supported",
                     ref.using_position);
    }
    BoundFrom bound =
        BindFunctionItem(*ref.right, BindItem(*ref.left, offset, takes_where, context));
    if (ref.condition) {
      ExpressionBinder binder(&bound.scope);
      auto filter = std::make_shared<FilterNode>();
      filter->predicate = binder.BindPredicate(*ref.condition, "JOIN/ON");
      filter->input = bound.plan;
      filter->output = bound.plan->output;
      bound.plan = filter;
    }
    return bound;
  }
  JoinType type = JoinType::kInner;
  switch (ref.join_kind) {
    case parser::JoinKind::kLeft:
      type = JoinType::kLeft;
      break;
    case parser::JoinKind::kRight:
      type = JoinType::kRight;
      break;
    case parser::JoinKind::kFull:
      type = JoinType::kFull;
      break;
    default:
      break;
  }
  bool inner = type == JoinType::kInner;
  BoundFrom left =
      BindItem(*ref.left, offset, takes_where && (inner || type == JoinType::kLeft), context);
  size_t left_width = left.plan->output.size();
  BoundFrom right = BindItem(*ref.right, offset + left_width,
                             takes_where && (inner || type == JoinType::kRight), context);
  for (const std::string& name : right.scope.relations) {
    if (std::find(left.scope.relations.begin(), left.scope.relations.end(), name) !=
        left.scope.relations.end()) {
      throw SqlError("42712", fmt::format("table name \"{}\" specified more than once", name),
                     ref.right->position);
    }
  }
  auto join = std::make_shared<JoinNode>();
  join->join_type = type;
  join->input = left.plan;
  join->right = right.plan;
  for (Column column : left.plan->output) {
    if (join->PadsRight()) column.not_null = false;
    join->output.push_back(column);
  }
  for (Column column : right.plan->output) {
    if (join->PadsLeft()) column.not_null = false;
    join->output.push_back(column);
  }
  BoundFrom bound;
  bound.retracting = left.retracting || right.retracting;
  bound.has_join = true;
  bound.inputs = left.inputs;
  bound.inputs.insert(bound.inputs.end(), right.inputs.begin(), right.inputs.end());
  BindScope& scope = bound.scope;
  scope.columns = join->output;
  scope.sources = left.scope.sources;
  scope.sources.insert(scope.sources.end(), right.scope.sources.begin(), right.scope.sources.end());
  scope.relations = left.scope.relations;
  scope.relations.insert(scope.relations.end(), right.scope.relations.begin(),
                         right.scope.relations.end());

  PendingJoin pending;
  pending.node = join;
  pending.offset = offset;
  pending.left_width = left_width;
  pending.right_width = right.plan->output.size();
  pending.takes_where = takes_where && inner;
  pending.side_takes_where[0] = takes_where && (inner || type == JoinType::kLeft);
  pending.side_takes_where[1] = takes_where && (inner || type == JoinType::kRight);
  pending.position = ref.position;
  for (size_t i = 0; i < scope.columns.size(); ++i) {
    const std::string& qualifier = scope.sources[i].qualifier;
    pending.qualified_names.push_back(qualifier.empty() ? scope.columns[i].name
                                                        : qualifier + "." + scope.columns[i].name);
  }
  std::vector<BoundExprPtr> residual;
  std::vector<BoundExprPtr> merged;  // Full join USING columns: coalesce(left, right).
  std::vector<size_t> using_left;
  std::vector<size_t> using_right;
  if (ref.condition) {
    ExpressionBinder binder(&scope);
    BoundExprPtr condition = binder.BindPredicate(*ref.condition, "JOIN/ON");
    std::vector<BoundExprPtr> conjuncts;
    SplitConjuncts(condition, &conjuncts);
    for (const BoundExprPtr& conjunct : conjuncts) {
      if (!TakeEquality(conjunct, offset, &pending)) residual.push_back(conjunct);
    }
  } else if (!ref.using_columns.empty()) {
    BindScope left_scope = left.scope;
    BindScope right_scope = right.scope;
    for (const std::string& name : ref.using_columns) {
      auto find = [&](const BindScope& side, const char* which) {
        std::optional<size_t> found;
        try {
          found = ResolveJoinedColumn(side, {name}, ref.using_position);
        } catch (const SqlError&) {
          throw SqlError(sqlstate::kAmbiguousColumn,
                         fmt::format("common column name \"{}\" appears more than once in {} table",
                                     name, which),
                         ref.using_position);
        }
        if (!found) {
          throw SqlError(sqlstate::kUndefinedColumn,
                         fmt::format("column \"{}\" specified in USING clause does not exist in "
                                     "{} table",
                                     name, which),
                         ref.using_position);
        }
        return *found;
      };
      size_t l = find(left_scope, "left");
      size_t r = find(right_scope, "right");
      BoundExprPtr left_key = BoundExpr::MakeColumn(l, left.plan->output[l].type);
      BoundExprPtr right_key = BoundExpr::MakeColumn(r, right.plan->output[r].type);
      if (!UnifyKeyTypes(&left_key, &right_key, ref.using_position)) {
        throw SqlError(
            sqlstate::kDatatypeMismatch,
            fmt::format("JOIN/USING types {} and {} cannot be matched",
                        left.plan->output[l].type.Name(), right.plan->output[r].type.Name()),
            ref.using_position);
      }
      join->left_keys.push_back(left_key);
      join->right_keys.push_back(right_key);
      using_left.push_back(l);
      using_right.push_back(left_width + r);
      scope.sources[l].unqualified = false;
      scope.sources[left_width + r].unqualified = false;
    }
  }
  join->residual = AndOf(residual);
  context->joins.push_back(pending);
  bound.plan = join;

  // `*` lists USING columns first, then the other columns of each side.
  std::vector<size_t> right_star;
  for (size_t column : right.star) right_star.push_back(left_width + column);
  if (!using_left.empty()) {
    PlanNodePtr plan = join;
    if (type == JoinType::kFull) {
      // The merged column is whichever side is there: a column of its own.
      auto project = std::make_shared<ProjectNode>();
      project->input = join;
      project->output = join->output;
      for (size_t i = 0; i < join->output.size(); ++i) {
        project->expressions.push_back(BoundExpr::MakeColumn(i, join->output[i].type));
      }
      for (size_t u = 0; u < using_left.size(); ++u) {
        BoundExprPtr l = join->left_keys[u];
        BoundExprPtr r = Shift(join->right_keys[u], static_cast<int64_t>(left_width));
        project->expressions.push_back(
            BoundExpr::MakeFunction(ScalarFunction::kCoalesce, l->type, {l, r}));
        project->output.push_back({ref.using_columns[u], l->type, false});
        scope.columns.push_back(project->output.back());
        scope.sources.push_back(ScopeColumn{"", true, false});
        bound.star.push_back(project->output.size() - 1);
      }
      bound.plan = project;
    } else {
      const std::vector<size_t>& kept = type == JoinType::kRight ? using_right : using_left;
      for (size_t column : kept) {
        scope.sources[column].unqualified = true;
        bound.star.push_back(column);
      }
    }
    for (size_t column : left.star) {
      if (std::find(using_left.begin(), using_left.end(), column) == using_left.end()) {
        bound.star.push_back(column);
      }
    }
    for (size_t column : right_star) {
      if (std::find(using_right.begin(), using_right.end(), column) == using_right.end()) {
        bound.star.push_back(column);
      }
    }
  } else {
    bound.star = left.star;
    bound.star.insert(bound.star.end(), right_star.begin(), right_star.end());
  }
  return bound;
}

/// pg_options_to_table(options): one row (option_name, option_value) per 'name=value'
/// element of a text array, as PostgreSQL keeps reloptions and foreign-data options (psql's
/// \d reads them). Its argument may read the enclosing query's row.
BoundFrom BindOptionsTable(const parser::TableRef& ref) {
  BoundFrom bound;
  bound.plan = std::make_shared<ValuesNode>();
  ExpressionBinder binder(&bound.scope);
  const parser::Expr& argument = *ref.function_arguments[0];
  BoundExprPtr options = ExpressionBinder::Coerce(
      binder.Bind(argument), DataType::ArrayOf(TypeId::kVarchar), argument.position);
  if (!options->type.IsArray() || !options->type.ElementType().IsString()) {
    throw SqlError(
        sqlstate::kUndefinedFunction,
        fmt::format("function pg_options_to_table({}) does not exist", options->type.Name()),
        argument.position)
        .WithHint("pg_options_to_table takes text[].");
  }
  auto unnest = MakeUnnestNode(bound.plan, {options}, {argument.position}, false, {"option"});
  BoundExprPtr option = BoundExpr::MakeColumn(0, unnest->output[0].type);
  auto text = [](const char* value) {
    return BoundExpr::MakeConstant(Value::String(value), TypeId::kVarchar);
  };
  BoundExprPtr equals =
      BoundExpr::MakeFunction(ScalarFunction::kStrPos, TypeId::kInt32, {option, text("=")});
  BoundExprPtr after_equals =
      BoundExpr::MakeFunction(ScalarFunction::kAdd, TypeId::kInt32,
                              {equals, BoundExpr::MakeConstant(Value::Int(1), TypeId::kInt32)});
  auto project = std::make_shared<ProjectNode>();
  project->input = unnest;
  project->expressions = {
      BoundExpr::MakeFunction(
          ScalarFunction::kSplitPart, TypeId::kVarchar,
          {option, text("="), BoundExpr::MakeConstant(Value::Int(1), TypeId::kInt32)}),
      BoundExpr::MakeFunction(ScalarFunction::kSubstr, TypeId::kVarchar, {option, after_equals})};
  project->output = {{"option_name", TypeId::kVarchar}, {"option_value", TypeId::kVarchar}};
  std::string alias = ref.alias.empty() ? ref.function_name : ref.alias;
  bound.plan = project;
  bound.scope = BindScope();
  bound.scope.table_name = alias;
  bound.star = {0, 1};
  Generalize(&bound, alias, 2);
  return bound;
}

/// generate_series(start, stop[, step]) over integers, in a batch query (it may read the
/// enclosing query's row, as PostgreSQL's LATERAL function calls do).
BoundFrom BindTableFunction(const parser::TableRef& ref, FromContext* context) {
  // The parser admits no schema but pg_catalog.
  const std::string& name = ref.function_name;
  size_t arguments = ref.function_arguments.size();
  if (name == "pg_options_to_table" && arguments == 1) return BindOptionsTable(ref);
  bool known = name == "generate_series";
  if (!known || arguments < 2 || arguments > 3) {
    throw SqlError(
        sqlstate::kUndefinedFunction,
        fmt::format("function {} with {} arguments does not exist in FROM", name, arguments),
        ref.position)
        .WithHint(
            "The set-returning functions in FROM are unnest(array, …), generate_series(start, "
            "stop[, step]) and pg_options_to_table(text[]).");
  }
  if (context->purpose != QueryPurpose::kBatch) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "generate_series is supported only in queries, not in materialized views",
                   ref.position);
  }
  BindScope no_columns;
  ExpressionBinder binder(&no_columns);
  std::vector<BoundExprPtr> row;
  for (const auto& argument : ref.function_arguments) {
    BoundExprPtr bound =
        ExpressionBinder::Coerce(binder.Bind(*argument), TypeId::kInt64, argument->position);
    if (!bound->type.IsInteger()) {
      throw SqlError(sqlstate::kUndefinedFunction,
                     fmt::format("function generate_series({}) does not exist", bound->type.Name()),
                     argument->position)
          .WithHint("generate_series takes integers here.");
    }
    if (bound->type.id != TypeId::kInt64) {
      bound = BoundExpr::MakeFunction(ScalarFunction::kCast, TypeId::kInt64, {bound});
    }
    row.push_back(bound);
  }
  if (row.size() == 2) row.push_back(BoundExpr::MakeConstant(Value::Int(1), TypeId::kInt64));
  std::string alias = ref.alias.empty() ? name : ref.alias;
  auto values = std::make_shared<ValuesNode>();
  values->rows.push_back(std::move(row));
  values->series = true;
  // As in PostgreSQL, the alias names both the relation and its one column.
  values->output = {{alias, TypeId::kInt64}};
  BoundFrom bound;
  bound.plan = values;
  bound.scope.table_name = alias;
  bound.scope.columns = values->output;
  bound.star.push_back(0);
  Generalize(&bound, alias, 1);
  return bound;
}

BoundFrom BindItem(const parser::TableRef& ref, size_t offset, bool takes_where,
                   FromContext* context) {
  switch (ref.from_kind) {
    case parser::FromKind::kTable: {
      BoundFrom bound = BindTable(ref, context);
      const std::string& qualifier = ref.alias.empty() ? bound.scope.table_name : ref.alias;
      Generalize(&bound, qualifier, bound.scope.columns.size());
      return bound;
    }
    case parser::FromKind::kSubquery:
      return BindSubquery(ref, context);
    case parser::FromKind::kWindow:
      return BindTimeWindow(ref, context);
    case parser::FromKind::kJoin:
      return BindJoin(ref, offset, takes_where, context);
    case parser::FromKind::kFunction:
      return ref.function_name == "unnest" ? BindStandaloneFunction(ref)
                                           : BindTableFunction(ref, context);
  }
  throw SqlError(sqlstate::kInternalError, "unknown FROM item");
}

}  // namespace

BoundFrom BindFrom(const parser::TableRef& from, const parser::Expr* where, const Catalog& catalog,
                   QueryPurpose purpose) {
  FromContext context{&catalog, purpose, {}};
  BoundFrom bound = from.from_kind == parser::FromKind::kTable ? BindTable(from, &context)
                                                               : BindItem(from, 0, true, &context);
  if (where) {
    ExpressionBinder binder(&bound.scope);
    BoundExprPtr predicate = binder.BindPredicate(*where, "WHERE");
    std::vector<BoundExprPtr> conjuncts;
    SplitConjuncts(predicate, &conjuncts);
    std::vector<BoundExprPtr> remaining;
    for (const BoundExprPtr& conjunct : conjuncts) {
      bool taken = false;
      for (PendingJoin& join : context.joins) {
        if (join.takes_where && TakeEquality(conjunct, 0, &join)) {
          taken = true;
          break;
        }
      }
      if (!taken && purpose == QueryPurpose::kMaterializedView) {
        taken = TakeTimeBound(conjunct, &context);
      }
      if (!taken) taken = TakeSideFilter(conjunct, &context);
      if (!taken) remaining.push_back(conjunct);
    }
    bound.where = AndOf(remaining);
  }
  // A join's keys are final only now (WHERE may have added some).
  if (!context.joins.empty()) bound.window_close_offsets = WindowBounds(*bound.plan);
  if (purpose == QueryPurpose::kMaterializedView) {
    for (PendingJoin& join : context.joins) {
      PlanJoinStateCleaning(join.node.get(), join.qualified_names);
    }
    for (const PendingJoin& join : context.joins) {
      if (join.node->left_keys.empty()) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       "a streaming join needs an equality between its two sides", join.position)
            .WithHint(
                "Join ON (or, for an inner join, WHERE) a column of one side = a column of the "
                "other. Cross joins and joins on inequalities alone run in SELECT only.");
      }
    }
  }
  return bound;
}

}  // namespace stave::planner
