#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "planner/bound_expression.h"
#include "planner/catalog.h"

namespace stave::planner {

enum class PlanNodeKind {
  kScan,
  kValues,
  kFilter,
  kProject,
  kTimeWindow,
  kAggregate,
  kSort,
  kLimit,
  kJoin,
  kUnion,
  kTemporalFilter,
  kWindow,
  kTopN,
  kRepeat,
  kUnnest
};

struct PlanNode;
using PlanNodePtr = std::shared_ptr<const PlanNode>;

/// A node of a logical plan. Nodes are immutable and form a tree from the output down to
/// the scans; every node knows its output columns.
struct PlanNode {
  explicit PlanNode(PlanNodeKind k) : kind(k) {}
  virtual ~PlanNode() = default;

  const PlanNodeKind kind;
  std::vector<Column> output;
  PlanNodePtr input;  ///< Null for leaves; a join's left input.
};

/// Reads a stream (as a changelog from its start), a table or a materialized view (its
/// rows), or a system table (`system_rows`, computed when the query was bound).
struct ScanNode : PlanNode {
  ScanNode() : PlanNode(PlanNodeKind::kScan) {}
  CatalogObjectPtr object;
  std::shared_ptr<const std::vector<std::vector<Value>>> system_rows;
  /// Per output column, whether anything above the scan reads it (set by PruneColumns;
  /// empty: every column is). A source may leave the unread ones empty: nothing keeps,
  /// shows or computes with them.
  std::vector<bool> read_columns;
};

/// Constant rows: `rows` (each of the output's width; expressions over no columns, computed
/// when the plan runs), or, when `rows` is empty, one row with no columns (the input of a
/// SELECT without FROM). In a view, the rows enter once, when it is created.
struct ValuesNode : PlanNode {
  ValuesNode() : PlanNode(PlanNodeKind::kValues) {}
  std::vector<std::vector<BoundExprPtr>> rows;
  /// generate_series(start, stop, step) in a batch query's FROM: `rows` holds one row of
  /// those three (bigint; they may read the enclosing query's row), and the node yields one
  /// row per number instead.
  bool series = false;
};

/// Keeps rows for which `predicate` is true.
struct FilterNode : PlanNode {
  FilterNode() : PlanNode(PlanNodeKind::kFilter) {}
  BoundExprPtr predicate;
};

/// Computes one output column per expression.
struct ProjectNode : PlanNode {
  ProjectNode() : PlanNode(PlanNodeKind::kProject) {}
  std::vector<BoundExprPtr> expressions;
};

/// Assigns rows to the event-time windows their time falls in (TUMBLE, HOP): one output row
/// per window — the input's first `visible_columns` columns, window_start, window_end, then
/// the input's remaining (hidden) columns. Windows are [start, start + size), starting at
/// `origin` plus multiples of `slide` (TUMBLE: slide = size). A row whose time is NULL is in
/// no window.
struct TimeWindowNode : PlanNode {
  TimeWindowNode() : PlanNode(PlanNodeKind::kTimeWindow) {}
  size_t time_column = 0;
  size_t visible_columns = 0;
  int64_t slide = 0;  ///< In the time column's physical units (microseconds for timestamps).
  int64_t size = 0;
  /// Windows start at `origin` plus multiples of the slide: 1970-01-01 for timestamps (as in
  /// Flink and RisingWave; weekly windows start on Thursdays), 0 for bigint times.
  int64_t origin = 0;
};

/// Groups by `group_keys` and computes `aggregates`; output = keys, then aggregates. With
/// no keys there is exactly one group, present even for empty input (count = 0).
struct AggregateNode : PlanNode {
  AggregateNode() : PlanNode(PlanNodeKind::kAggregate) {}
  std::vector<BoundExprPtr> group_keys;
  std::vector<AggregateCall> aggregates;

  /// For a group key that is a window's bound over event time (TUMBLE or HOP over a stream's
  /// watermark column or a view's event-time column): a group closes once the watermark
  /// reaches the key's value plus `offset` (over a stream's watermark column, the window's
  /// size for window_start, 0 for window_end). No row of a closed
  /// group can arrive any more, so its state is dropped.
  struct WindowClose {
    size_t key = 0;  ///< Index into group_keys.
    int64_t offset = 0;
  };
  std::optional<WindowClose> window_close;
  /// EMIT ON WINDOW CLOSE: each group's row is emitted once, final, when its window closes,
  /// instead of being updated as rows arrive. REQUIRES: window_close.
  bool emit_on_window_close = false;
};

/// kSemi and kAnti output the left's columns only: a left row while at least one (semi) or
/// no (anti) right row meets it. They come from EXISTS, IN, NOT EXISTS (subquery_planner.h).
enum class JoinType { kInner, kLeft, kRight, kFull, kSemi, kAnti };

/// "INNER", "LEFT", "RIGHT", "FULL", "SEMI", "ANTI".
std::string_view JoinTypeName(JoinType type);

/// Joins `input` (the left side) with `right`. Output: the left's columns, then the right's.
/// Rows meet where every `left_keys[i]` (over the left's columns) equals `right_keys[i]`
/// (over the right's; NULL never equals anything) and `residual`, if any (over the output
/// row), is true. An outer join also emits each unmatched row of its preserved side(s),
/// padded with NULLs. Without keys (a cross join, or only non-equality conditions) every
/// pair is tested: batch queries only.
struct JoinNode : PlanNode {
  JoinNode() : PlanNode(PlanNodeKind::kJoin) {}
  JoinType join_type = JoinType::kInner;
  PlanNodePtr right;
  std::vector<BoundExprPtr> left_keys;
  std::vector<BoundExprPtr> right_keys;
  BoundExprPtr residual;  ///< Null: none.
  /// The right side is an uncorrelated scalar subquery's one row (or none), met on a
  /// constant key: a change of that row re-evaluates every left row (a dynamic filter).
  bool scalar_subquery = false;

  /// One term of when a stored row of a side can no longer meet any row still to come from
  /// the other side: once the other side's watermark reaches the row's value in `column`
  /// (of the side's own input) plus `offset`. Found from time bounds between the two sides
  /// (planner/join_state_cleaning.h). A NULL in `column` never meets anything.
  struct Expiry {
    size_t column = 0;
    int64_t offset = 0;
    std::string bound;  ///< The condition it comes from, for EXPLAIN.
  };
  /// Per side (0 left, 1 right): a stored row expires at the earliest of its terms, and is
  /// then dropped from state (its joined and NULL-padded rows stay in the result). Empty:
  /// the side's rows are kept for good.
  std::vector<Expiry> expiry[2];
  /// Per side (0 left, 1 right): whether the side's input only grows, so that every row it
  /// sends is a row of its own, never a copy the side already holds: stored under a suffix
  /// that makes it unique, it is inserted without reading the side's state. Set from
  /// planner revision 5 (MarkGrowingJoinSides).
  bool appends[2] = {false, false};

  bool PadsLeft() const { return join_type == JoinType::kLeft || join_type == JoinType::kFull; }
  bool PadsRight() const { return join_type == JoinType::kRight || join_type == JoinType::kFull; }
  /// A semi or anti join: emits left rows only, by whether they have a match.
  bool FiltersLeft() const { return join_type == JoinType::kSemi || join_type == JoinType::kAnti; }
};

/// All rows of `input` and of `right` (UNION ALL): both have the output's columns and types.
/// UNION, INTERSECT and EXCEPT are built from it with an aggregate over the rows.
struct UnionNode : PlanNode {
  UnionNode() : PlanNode(PlanNodeKind::kUnion) {}
  PlanNodePtr right;
};

/// A filter over the current time in a streaming definition (`WHERE ts > now() - INTERVAL
/// '1' HOUR`): a row is in the result while now() < `time + offset` (`<=` when
/// `inclusive`), now() being the processing time of the epoch (storage::EpochBatch::time).
/// As now() only grows, a row leaves once and for good: the operator retracts it when an
/// epoch's time passes it. A row whose time is NULL is never in.
struct TemporalFilterNode : PlanNode {
  TemporalFilterNode() : PlanNode(PlanNodeKind::kTemporalFilter) {}
  BoundExprPtr time;  ///< Over the input: a timestamptz (or timestamp) per row.
  int64_t offset = 0;
  bool inclusive = false;
  BoundExprPtr condition;  ///< As written, for EXPLAIN.
};

/// Each input row `count_column` times (a row whose count is NULL or below 1: not at all),
/// without that column, which is the input's last. INTERSECT ALL and EXCEPT ALL emit each
/// distinct row as many times as their counts say.
struct RepeatNode : PlanNode {
  RepeatNode() : PlanNode(PlanNodeKind::kRepeat) {}
  size_t count_column = 0;
};

/// PostgreSQL's `unnest`, in FROM or in a select list: for each input row, one row per
/// element of the arrays `arrays` (expressions over the input), which are read side by side,
/// the shorter ones padded with NULLs (a NULL array has no elements). Output: the input's
/// columns, one element column per array, then with `with_ordinality` the element's number
/// (bigint, from 1). An input row whose arrays are all empty or NULL yields no row.
struct UnnestNode : PlanNode {
  UnnestNode() : PlanNode(PlanNodeKind::kUnnest) {}
  std::vector<BoundExprPtr> arrays;
  /// Per array (empty: none): whether its column yields each element's subscript (int, from
  /// 1) instead of the element, as generate_subscripts(array, 1) in a select list does.
  std::vector<bool> subscripts;
  bool with_ordinality = false;
};

/// What a subquery in an expression computes for a row of the enclosing query.
enum class SubqueryKind {
  kScalar,  ///< The value of its one row; NULL without rows; 21000 with more than one.
  kExists,  ///< Whether it has rows.
  kAny,     ///< Whether `operand comparison value` holds for some row (SQL's three values).
  kAll,     ///< Whether it holds for every row.
  kArray,   ///< Its rows' values as an array (ARRAY(SELECT ...)).
};

/// A subquery used as an expression (BoundExpr::Kind::kSubquery). Its plan's first column
/// is its value (already of the comparison's type for kAny and kAll). A correlated
/// subquery reads columns of enclosing queries' rows (BoundExpr::Kind::kOuterColumn) and
/// runs once per row; an uncorrelated one runs once per query.
struct BoundSubquery {
  SubqueryKind kind = SubqueryKind::kScalar;
  ScalarFunction comparison = ScalarFunction::kEqual;  ///< kAny, kAll.
  PlanNodePtr plan;
  bool correlated = false;
  std::string text;  ///< The subquery as written, for EXPLAIN.
};

/// A node's second input (a join's right side, a union's second operand), or null.
inline const PlanNodePtr* SecondInput(const PlanNode& node) {
  if (node.kind == PlanNodeKind::kJoin) return &static_cast<const JoinNode&>(node).right;
  if (node.kind == PlanNodeKind::kUnion) return &static_cast<const UnionNode&>(node).right;
  return nullptr;
}

/// A copy of `node` (of any kind) with `input`, and `second` as its second input (a join's or
/// a union's; ignored by other kinds).
PlanNodePtr WithInputs(const PlanNode& node, PlanNodePtr input, PlanNodePtr second);

struct SortKey {
  size_t column = 0;
  bool descending = false;
  bool nulls_first = false;
};

/// Orders rows (batch queries only).
struct SortNode : PlanNode {
  SortNode() : PlanNode(PlanNodeKind::kSort) {}
  std::vector<SortKey> keys;
};

/// Skips `offset` rows, then keeps at most `limit` (-1: no limit). Batch queries only.
struct LimitNode : PlanNode {
  LimitNode() : PlanNode(PlanNodeKind::kLimit) {}
  int64_t limit = -1;
  int64_t offset = 0;
};

/// One sort key of a window: an expression over the window node's input.
struct WindowOrderKey {
  BoundExprPtr expr;
  bool descending = false;
  bool nulls_first = false;
};

enum class WindowFunctionKind { kRowNumber, kRank, kDenseRank, kAggregate };

/// One window function call: its partition, its order and what it computes. Without ORDER
/// BY an aggregate covers the whole partition; with it, the rows up to the current row and
/// its peers (PostgreSQL's default frame, RANGE UNBOUNDED PRECEDING).
struct WindowFunction {
  WindowFunctionKind kind = WindowFunctionKind::kRowNumber;
  std::vector<BoundExprPtr> partition_keys;
  std::vector<WindowOrderKey> order_keys;
  AggregateCall aggregate;  ///< kAggregate only.
  DataType result_type = TypeId::kInt64;

  /// "row_number", "rank", "dense_rank", or the aggregate's name.
  std::string Name() const;
  /// Whether the function numbers rows (row_number, rank, dense_rank).
  bool IsRanking() const { return kind != WindowFunctionKind::kAggregate; }
};

/// Computes window functions (batch queries only): output = the input's columns, then one
/// column per function. A materialized view runs only the top-N form (TopNNode).
struct WindowNode : PlanNode {
  WindowNode() : PlanNode(PlanNodeKind::kWindow) {}
  std::vector<WindowFunction> functions;
  /// Whether the input only ever grows (carried over to a TopNNode made from this node).
  bool append_only_input = false;
};

/// The rows whose ranking function `function` is at most `limit`: a WindowNode of one
/// ranking function under a filter that bounds it (`WHERE rn <= N`), and DISTINCT ON (the
/// first row per key). Output: the input's columns, then the rank. In a materialized view it
/// is a streaming, retracting operator keyed by the partition (TopNOperator).
struct TopNNode : PlanNode {
  TopNNode() : PlanNode(PlanNodeKind::kTopN) {}
  WindowFunction function;
  int64_t limit = 1;
  /// Whether the input only ever grows: a row ranked past the limit can never come back,
  /// so the streaming operator keeps only the rows of rank up to the limit.
  bool append_only_input = false;
};

/// A bound SELECT: a plan whose first `visible_columns` output columns are the result. Any
/// further columns are hidden helpers: for a grouped query, the group keys (they identify a
/// row of a materialized view, which is keyed by them); then sort keys not in the select
/// list.
struct BoundQuery {
  PlanNodePtr root;
  size_t visible_columns = 0;
  /// Whether result rows are identified by `key_columns` (grouped and DISTINCT queries;
  /// a global aggregate's one row has an empty key). Otherwise rows have no key and an
  /// append-only view numbers them.
  bool keyed = false;
  /// Positions (in root->output) of the columns that identify a result row.
  std::vector<size_t> key_columns;
  /// Whether the result only ever grows (no grouping over an append-only input; inner joins
  /// only, as an outer join retracts its NULL-padded rows).
  bool append_only = false;
  /// Whether the plan joins (or unions with UNION ALL). An unkeyed, retracting result of
  /// either is kept as a multiset of whole rows (see MaterializeOperator): its rows have no
  /// identity of their own.
  bool has_join = false;
  /// The objects the query reads.
  std::vector<CatalogObjectPtr> inputs;
};

}  // namespace stave::planner
