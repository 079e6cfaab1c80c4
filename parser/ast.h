#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/data_type.h"
#include "common/value.h"

/// The typed syntax tree the parser produces. Plain data: no name resolution, no types
/// beyond what the text says. Identifiers are already case-folded (unquoted → lower case,
/// "quoted" → as written). Every node carries `position`: the 1-based character offset of
/// its first character in the whole query string (as PostgreSQL reports it), 0 if unknown.
namespace stave::parser {

/// A possibly qualified name: `foo` → {"foo"}, `public.foo` → {"public", "foo"}.
using QualifiedName = std::vector<std::string>;

/// A type as written: `name` is the normalized lower-case spelling with single spaces
/// ("bigint", "double precision", "character varying", "int"); `modifiers` holds the
/// numbers in parentheses (varchar(20) → {20}).
struct TypeName {
  std::string name;
  std::vector<int64_t> modifiers;
  int position = 0;
  /// The qualifier of `INTERVAL '5' SECOND` ("year" ... "second"), "" if none.
  std::string interval_field;
  /// The number of `[]` after the name: 1 for `int[]`.
  int array_dimensions = 0;
};

// ---------------------------------------------------------------------------------------
// Expressions

enum class ExprKind {
  kLiteral,
  kColumnRef,
  kStar,
  kUnary,
  kBinary,
  kFunctionCall,
  kCase,
  kCast,
  kIsNull,
  kBetween,
  kInList,
  kLike,
  kParameter,
  kSubquery,
  kArrayConstructor,
  kSubscript,
  kQuantifiedComparison,
};

/// The deepest expression tree the parser produces: a chain of 4999 operators over one leaf is
/// 5000 levels deep. Deeper input fails with SQLSTATE 54001, so code that walks expressions
/// recursively (including their destructors) can rely on this bound.
inline constexpr int kMaxExpressionDepth = 5000;

struct Expr {
  explicit Expr(ExprKind k) : kind(k) {}
  virtual ~Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;

  const ExprKind kind;
  int position = 0;
};
using ExprPtr = std::unique_ptr<Expr>;

enum class LiteralKind { kNull, kBoolean, kInteger, kDecimal, kString };

/// `NULL`, `TRUE`/`FALSE`, `42`, `4.2` / `1e3`, `'text'`. `value` holds the text: digits as
/// written for numbers, the unescaped contents for strings ('it''s' → it's), "true"/"false".
struct LiteralExpr : Expr {
  LiteralExpr() : Expr(ExprKind::kLiteral) {}
  LiteralKind literal_kind = LiteralKind::kNull;
  std::string value;
};

/// What a parameter placeholder `$n` of a prepared statement stands for. One slot per
/// parameter number, shared by every `$n` of the statement with that number. The server fills
/// it in: `type` from the Parse message or from what the binder inferred when the statement
/// was described (kUnknown until then), `value` from the Bind message before the statement
/// runs. Not thread-safe: a prepared statement belongs to one connection.
struct ParameterSlot {
  enum class Mode {
    kNoValue,   ///< A simple query: `$n` has no value (42P02).
    kDescribe,  ///< Being described: the binder infers `type` where it is still kUnknown.
    kBound,     ///< Running with `value`.
  };
  Mode mode = Mode::kNoValue;
  DataType type;
  Value value;  ///< With kBound: the value, already of `type`.
};

/// The highest parameter number: a Bind message counts its values in 16 bits.
inline constexpr int kMaxParameterNumber = 65535;

/// `$1`, `$2`, ...: a parameter of a prepared statement (extended query protocol).
struct ParameterExpr : Expr {
  ParameterExpr() : Expr(ExprKind::kParameter) {}
  int number = 0;  ///< 1-based, as written.
  std::shared_ptr<ParameterSlot> slot;
};

/// `col`, `t.col`, `schema.t.col`.
struct ColumnRefExpr : Expr {
  ColumnRefExpr() : Expr(ExprKind::kColumnRef) {}
  QualifiedName names;
};

/// `*` or `t.*` in a select list.
struct StarExpr : Expr {
  StarExpr() : Expr(ExprKind::kStar) {}
  QualifiedName qualifier;  ///< Empty for a bare `*`.
};

enum class UnaryOp { kNegate, kPlus, kNot };

struct UnaryExpr : Expr {
  UnaryExpr() : Expr(ExprKind::kUnary) {}
  UnaryOp op = UnaryOp::kNegate;
  ExprPtr operand;
};

enum class BinaryOp {
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kModulo,
  kConcat,  ///< `||`
  kEqual,
  kNotEqual,  ///< `<>` and `!=`
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kAnd,
  kOr,
  kJsonGet,       ///< `->`
  kJsonGetText,   ///< `->>`
  kJsonPath,      ///< `#>`
  kJsonPathText,  ///< `#>>`
  kContains,      ///< `@>`
  kContainedBy,   ///< `<@`
  kPower,         ///< `^`
};

struct BinaryExpr : Expr {
  BinaryExpr() : Expr(ExprKind::kBinary) {}
  BinaryOp op = BinaryOp::kAdd;
  ExprPtr left;
  ExprPtr right;
};

struct WindowSpec;

/// One key of an ORDER BY (of a query, a window, or an aggregate call).
struct OrderItem {
  ExprPtr expr;
  bool descending = false;
  std::optional<bool> nulls_first;  ///< Unset: PostgreSQL's default (NULLS LAST for ASC).
};

/// `f(a, b)`, `count(*)`, `count(DISTINCT a)`, `pg_catalog.version()`, and window function
/// calls `row_number() OVER (PARTITION BY a ORDER BY b)`.
struct FunctionCallExpr : Expr {
  FunctionCallExpr() : Expr(ExprKind::kFunctionCall) {}
  QualifiedName name;
  std::vector<ExprPtr> args;
  bool distinct = false;
  bool star = false;                       ///< `count(*)`: args is empty.
  std::shared_ptr<const WindowSpec> over;  ///< The OVER clause; null for a plain call.
  /// An aggregate's own order: `array_agg(x ORDER BY x DESC)`.
  std::vector<OrderItem> order_by;
  /// `count(*) FILTER (WHERE price > 10)`: the aggregate sees only the rows for which this is
  /// true. Null without FILTER.
  ExprPtr filter;
};

/// `CASE [operand] WHEN w THEN t ... [ELSE e] END`.
struct CaseExpr : Expr {
  CaseExpr() : Expr(ExprKind::kCase) {}
  ExprPtr operand;  ///< Null for a searched CASE.
  std::vector<std::pair<ExprPtr, ExprPtr>> when_then;
  ExprPtr else_result;  ///< Null when there is no ELSE.
};

/// `CAST(x AS t)` and `x::t`.
struct CastExpr : Expr {
  CastExpr() : Expr(ExprKind::kCast) {}
  ExprPtr operand;
  TypeName type;
};

/// `x IS [NOT] NULL`.
struct IsNullExpr : Expr {
  IsNullExpr() : Expr(ExprKind::kIsNull) {}
  ExprPtr operand;
  bool negated = false;
};

/// `x [NOT] BETWEEN lower AND upper`.
struct BetweenExpr : Expr {
  BetweenExpr() : Expr(ExprKind::kBetween) {}
  ExprPtr operand;
  ExprPtr lower;
  ExprPtr upper;
  bool negated = false;
};

/// `x [NOT] IN (a, b, ...)`.
struct InListExpr : Expr {
  InListExpr() : Expr(ExprKind::kInList) {}
  ExprPtr operand;
  std::vector<ExprPtr> list;
  bool negated = false;
};

/// `x [NOT] LIKE p`, `x [NOT] ILIKE p`.
struct LikeExpr : Expr {
  LikeExpr() : Expr(ExprKind::kLike) {}
  ExprPtr operand;
  ExprPtr pattern;
  ExprPtr escape;  ///< `ESCAPE 'c'`; null: the backslash escapes.
  bool negated = false;
  bool case_insensitive = false;
};

struct SelectStatement;

/// What a subquery in an expression computes.
enum class SubqueryKind {
  kScalar,  ///< `(SELECT ...)`: its one value (NULL without rows).
  kExists,  ///< `EXISTS (SELECT ...)`.
  kIn,      ///< `x [NOT] IN (SELECT ...)`: `x = ANY (...)`, negated for NOT IN.
  kAny,     ///< `x op ANY|SOME (SELECT ...)`.
  kAll,     ///< `x op ALL (SELECT ...)`.
  kArray,   ///< `ARRAY(SELECT ...)`: its rows' values as an array, in the subquery's order.
};

/// A subquery used as an expression.
struct SubqueryExpr : Expr {
  SubqueryExpr() : Expr(ExprKind::kSubquery) {}
  SubqueryKind subquery_kind = SubqueryKind::kScalar;
  ExprPtr operand;                 ///< kIn, kAny, kAll.
  BinaryOp op = BinaryOp::kEqual;  ///< The comparison of kAny and kAll (kEqual for kIn).
  bool negated = false;            ///< NOT IN.
  std::shared_ptr<const SelectStatement> query;
};

/// `ARRAY[a, b, ...]`.
struct ArrayConstructorExpr : Expr {
  ArrayConstructorExpr() : Expr(ExprKind::kArrayConstructor) {}
  std::vector<ExprPtr> elements;
};

/// `array[index]`.
struct SubscriptExpr : Expr {
  SubscriptExpr() : Expr(ExprKind::kSubscript) {}
  ExprPtr array;
  ExprPtr index;
};

/// `x op ANY (array)` (also SOME) and `x op ALL (array)`; `op` is a comparison.
struct QuantifiedComparisonExpr : Expr {
  QuantifiedComparisonExpr() : Expr(ExprKind::kQuantifiedComparison) {}
  BinaryOp op = BinaryOp::kEqual;
  bool all = false;
  ExprPtr operand;
  ExprPtr array;
};

// ---------------------------------------------------------------------------------------
// Statements

enum class StatementKind {
  kSelect,
  kCreateStream,
  kCreateMaterializedView,
  kDrop,
  kShowObjects,
  kShowVariable,
  kSetVariable,
  kResetVariable,
  kTransaction,
  kCheckpoint,
  kCreateTable,
  kInsert,
  kUpdate,
  kDelete,
  kCreateSink,
  kExplain,
  kAlterSink,
  kShowSystemTable,
  kRole,
  kBackup,
};

struct Statement {
  explicit Statement(StatementKind k) : kind(k) {}
  virtual ~Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  const StatementKind kind;
  int position = 0;  ///< Where the statement starts in the query string.
  std::string text;  ///< The statement's own text, without the trailing ';'.
  /// The slots of `$1` ... `$n` for the highest n written (numbers not written get a slot
  /// too, as PostgreSQL counts them). Only on top-level statements; empty without `$n`.
  std::vector<std::shared_ptr<ParameterSlot>> parameters;
};
using StatementPtr = std::unique_ptr<Statement>;

struct SelectItem {
  ExprPtr expr;       ///< A StarExpr for `*` / `t.*`.
  std::string alias;  ///< Empty when none was written.
};

/// The window of a window function call: `OVER (PARTITION BY … ORDER BY …)`.
struct WindowSpec {
  std::vector<ExprPtr> partition_by;
  std::vector<OrderItem> order_by;
};

struct SelectStatement;

enum class FromKind { kTable, kSubquery, kJoin, kWindow, kFunction };

/// The window table functions of a FROM clause.
enum class WindowFunction { kTumble, kHop };

/// `[INNER] JOIN`, `LEFT|RIGHT|FULL [OUTER] JOIN`, `CROSS JOIN` (and the comma of a FROM list).
enum class JoinKind { kInner, kLeft, kRight, kFull, kCross };

/// One item of a FROM clause: a named relation (`name [AS] alias`), a subquery
/// (`(SELECT ...) [AS] alias`), a window table function over a named relation, or a join of
/// two items. A FROM list `a, b, c` is the
/// left-deep tree of cross joins ((a × b) × c).
struct TableRef {
  QualifiedName name;  ///< kTable.
  std::string alias;   ///< Empty when none was written (kTable, kSubquery).
  /// kSubquery: `AS alias(a, b)` renames the subquery's first columns.
  std::vector<std::string> column_aliases;
  int position = 0;
  FromKind from_kind = FromKind::kTable;
  std::shared_ptr<const SelectStatement> subquery;  ///< kSubquery.
  JoinKind join_kind = JoinKind::kInner;            ///< kJoin.
  std::shared_ptr<const TableRef> left;             ///< kJoin.
  std::shared_ptr<const TableRef> right;            ///< kJoin.
  std::shared_ptr<const Expr> condition;            ///< kJoin with ON; null otherwise.
  std::vector<std::string> using_columns;           ///< kJoin with USING (names lower-cased).
  int using_position = 0;                           ///< Where the USING list starts.
  /// kWindow: `TUMBLE(name, time_column, size)` or `HOP(name, time_column, slide, size)`.
  WindowFunction window_function = WindowFunction::kTumble;
  std::string time_column;
  int time_column_position = 0;
  std::vector<std::shared_ptr<const Expr>> window_arguments;  ///< size, or slide and size.
  /// kFunction: a set-returning function (`unnest(a, b) WITH ORDINALITY AS u(x, y, n)`),
  /// whose arguments may name columns of the FROM items before it; `column_aliases` names
  /// its columns.
  std::string function_name;
  std::vector<std::shared_ptr<const Expr>> function_arguments;
  bool with_ordinality = false;
};

/// The set operations that combine two queries.
enum class SetOperator { kNone, kUnion, kExcept, kIntersect };

/// `SELECT [DISTINCT] items [FROM t] [WHERE] [GROUP BY] [HAVING] [ORDER BY] [LIMIT] [OFFSET]`,
/// or a set operation of two queries (`set_operator` set: then only the operands, ORDER BY,
/// LIMIT and OFFSET are).
struct SelectStatement : Statement {
  SelectStatement() : Statement(StatementKind::kSelect) {}
  bool distinct = false;
  /// `DISTINCT ON (exprs)`: one row per distinct value of these (`distinct` is false then).
  std::vector<ExprPtr> distinct_on;
  std::vector<SelectItem> items;
  std::optional<TableRef> from;
  ExprPtr where;
  std::vector<ExprPtr> group_by;
  ExprPtr having;
  std::vector<OrderItem> order_by;
  ExprPtr limit;   ///< Null when absent; `LIMIT ALL` is absent too.
  ExprPtr offset;  ///< Null when absent.
  /// `EMIT ON WINDOW CLOSE` after a view's or sink's query.
  bool emit_on_window_close = false;
  SetOperator set_operator = SetOperator::kNone;
  bool set_all = false;  ///< UNION ALL (and EXCEPT ALL, INTERSECT ALL, refused for now).
  std::shared_ptr<const SelectStatement> set_left;
  std::shared_ptr<const SelectStatement> set_right;
  /// `VALUES (a, b), (c, d)`: one vector per row (then `items` and `from` are empty).
  std::vector<std::vector<ExprPtr>> values;
};

struct ColumnDef {
  std::string name;
  TypeName type;
  bool not_null = false;
  bool primary_key = false;
  int position = 0;
};

/// One `key = value` of a WITH clause. `key` is lower-cased and dotted as written
/// (`properties.bootstrap.server`, or the contents of a quoted key such as
/// 'fields.id.kind'); `value` is the string contents, or the text of a number, identifier or
/// TRUE/FALSE.
struct Option {
  std::string key;
  std::string value;
  int position = 0;
};

/// `WATERMARK FOR column AS expression` in a stream's column list.
struct WatermarkDef {
  std::string column;
  ExprPtr expression;
  int position = 0;
};

/// `CREATE STREAM [IF NOT EXISTS] name (cols [, WATERMARK FOR …]) [WITH (options)] [FORMAT f]`.
struct CreateStreamStatement : Statement {
  CreateStreamStatement() : Statement(StatementKind::kCreateStream) {}
  QualifiedName name;
  bool if_not_exists = false;
  std::vector<ColumnDef> columns;
  std::optional<WatermarkDef> watermark;
  std::vector<Option> options;
  std::string format;  ///< Lower-case (e.g. "json"); empty when absent.
};

/// `CREATE MATERIALIZED VIEW [IF NOT EXISTS] name AS query`.
struct CreateMaterializedViewStatement : Statement {
  CreateMaterializedViewStatement() : Statement(StatementKind::kCreateMaterializedView) {}
  QualifiedName name;
  bool if_not_exists = false;
  std::unique_ptr<SelectStatement> query;
};

enum class ObjectKind { kStream, kMaterializedView, kTable, kSink, kView };

/// `DROP STREAM|MATERIALIZED VIEW|TABLE|SINK|VIEW [IF EXISTS] name [CASCADE|RESTRICT]`.
struct DropStatement : Statement {
  DropStatement() : Statement(StatementKind::kDrop) {}
  ObjectKind object_kind = ObjectKind::kStream;
  QualifiedName name;
  bool if_exists = false;
  bool cascade = false;
};

/// `SHOW STREAMS | MATERIALIZED VIEWS | TABLES | SINKS | VIEWS`.
struct ShowObjectsStatement : Statement {
  ShowObjectsStatement() : Statement(StatementKind::kShowObjects) {}
  ObjectKind object_kind = ObjectKind::kStream;
};

/// `SHOW JOBS` and `SHOW CHECKPOINTS`: shorthands for reading the system table of that
/// name, `stave_catalog.jobs` or `stave_catalog.checkpoints`.
struct ShowSystemTableStatement : Statement {
  ShowSystemTableStatement() : Statement(StatementKind::kShowSystemTable) {}
  std::string table;  ///< "jobs" or "checkpoints".
};

/// `SHOW name`, `SHOW ALL` (name "all"), `SHOW TIME ZONE` (name "timezone"),
/// `SHOW TRANSACTION ISOLATION LEVEL` (name "transaction_isolation").
struct ShowVariableStatement : Statement {
  ShowVariableStatement() : Statement(StatementKind::kShowVariable) {}
  std::string name;  ///< Lower-cased.
};

/// `SET [SESSION|LOCAL] name {=|TO} value[, ...]`, `SET name TO DEFAULT`,
/// `SET TIME ZONE value` (name "timezone"), `SET SESSION CHARACTERISTICS ...` is not here.
struct SetVariableStatement : Statement {
  SetVariableStatement() : Statement(StatementKind::kSetVariable) {}
  std::string name;                 ///< Lower-cased, dotted names kept ("a.b").
  std::vector<std::string> values;  ///< String contents or the text of numbers/identifiers.
  bool is_default = false;          ///< `TO DEFAULT`: values is empty.
  bool local = false;
  bool system = false;  ///< `ALTER SYSTEM SET`: a server-wide setting.
};

/// `RESET name`, `RESET ALL` (name "all").
struct ResetVariableStatement : Statement {
  ResetVariableStatement() : Statement(StatementKind::kResetVariable) {}
  std::string name;
};

enum class TransactionKind { kBegin, kCommit, kRollback };

/// `BEGIN [WORK|TRANSACTION] [modes]`, `START TRANSACTION [modes]`, `COMMIT`/`END`
/// [WORK|TRANSACTION], `ROLLBACK`/`ABORT` [WORK|TRANSACTION]. Modes are accepted and ignored.
struct TransactionStatement : Statement {
  TransactionStatement() : Statement(StatementKind::kTransaction) {}
  TransactionKind transaction_kind = TransactionKind::kBegin;
};

/// `CHECKPOINT`.
struct CheckpointStatement : Statement {
  CheckpointStatement() : Statement(StatementKind::kCheckpoint) {}
};

/// `BACKUP TO 'directory'`: a consistent copy of the data directory.
struct BackupStatement : Statement {
  BackupStatement() : Statement(StatementKind::kBackup) {}
  std::string directory;
};

/// `CREATE TABLE [IF NOT EXISTS] name (col type [NOT NULL] [PRIMARY KEY], ...
/// [, PRIMARY KEY (a, b)]) [APPEND ONLY] [WITH (options)]`. A column-level PRIMARY KEY sets
/// ColumnDef::primary_key and also appears in `primary_key`; a table-level one fills
/// `primary_key` only (in the written order). Two primary keys are a syntax error (42P16
/// "multiple primary keys for table ... are not allowed").
struct CreateTableStatement : Statement {
  CreateTableStatement() : Statement(StatementKind::kCreateTable) {}
  QualifiedName name;
  bool if_not_exists = false;
  std::vector<ColumnDef> columns;
  std::vector<std::string> primary_key;  ///< Column names, lower-cased; empty: keyless.
  int primary_key_position = 0;          ///< Where the PRIMARY KEY clause starts.
  bool append_only = false;
  std::vector<Option> options;
};

/// `INSERT INTO name [(col, ...)] VALUES (expr, ...), (...)` or `INSERT INTO name [(cols)]
/// SELECT ...`. Exactly one of `values` and `query` is set.
struct InsertStatement : Statement {
  InsertStatement() : Statement(StatementKind::kInsert) {}
  QualifiedName table;
  int table_position = 0;
  std::vector<std::string> columns;  ///< Empty: all columns in order.
  std::vector<int> column_positions;
  std::vector<std::vector<ExprPtr>> values;  ///< One vector per VALUES row.
  std::unique_ptr<SelectStatement> query;
  std::vector<SelectItem> returning;  ///< RETURNING's select list; empty without it.
};

/// One `col = expr` of UPDATE ... SET.
struct Assignment {
  std::string column;
  ExprPtr value;
  int position = 0;
};

/// `UPDATE name [[AS] alias] SET col = expr [, ...] [WHERE cond]`.
struct UpdateStatement : Statement {
  UpdateStatement() : Statement(StatementKind::kUpdate) {}
  TableRef table;
  std::vector<Assignment> assignments;
  ExprPtr where;                      ///< Null: every row.
  std::vector<SelectItem> returning;  ///< RETURNING's select list; empty without it.
};

/// `DELETE FROM name [[AS] alias] [WHERE cond]`.
struct DeleteStatement : Statement {
  DeleteStatement() : Statement(StatementKind::kDelete) {}
  TableRef table;
  ExprPtr where;                      ///< Null: every row.
  std::vector<SelectItem> returning;  ///< RETURNING's select list; empty without it.
};

/// `CREATE SINK [IF NOT EXISTS] name FROM input [WITH (options)] [FORMAT f]` or
/// `CREATE SINK [IF NOT EXISTS] name [WITH (options)] [FORMAT f] AS query`. Exactly one of
/// `from` and `query` is set.
struct CreateSinkStatement : Statement {
  CreateSinkStatement() : Statement(StatementKind::kCreateSink) {}
  QualifiedName name;
  bool if_not_exists = false;
  std::optional<QualifiedName> from;       ///< The relation the sink reads (the FROM form).
  int from_position = 0;                   ///< Where `from` starts; 0 when it is unset.
  std::unique_ptr<SelectStatement> query;  ///< The sink's own query (the AS form).
  std::vector<Option> options;
  std::string format;  ///< Lower-case (e.g. "json"); empty when absent.
};

/// `EXPLAIN SINK name`, `EXPLAIN MATERIALIZED VIEW name`, or `EXPLAIN statement` for any
/// statement but EXPLAIN itself. Exactly one of `sink`, `view` and `statement` is set.
struct ExplainStatement : Statement {
  ExplainStatement() : Statement(StatementKind::kExplain) {}
  std::optional<QualifiedName> sink;
  int sink_position = 0;  ///< Where the sink's name starts; 0 when `sink` is unset.
  std::optional<QualifiedName> view;
  int view_position = 0;  ///< Where the view's name starts; 0 when `view` is unset.
  /// The explained statement, when `sink` is unset. Its `position` and `text` are its own, as
  /// if it had been written without EXPLAIN.
  StatementPtr statement;
};

/// `ALTER SINK name PAUSE | RESUME`.
struct AlterSinkStatement : Statement {
  AlterSinkStatement() : Statement(StatementKind::kAlterSink) {}
  QualifiedName name;
  bool pause = false;  ///< True for PAUSE, false for RESUME.
};

/// CREATE/ALTER/DROP USER (or ROLE). Role names are identifiers (lower-cased unless quoted).
struct RoleStatement : Statement {
  enum class Action { kCreate, kAlter, kDrop };
  RoleStatement() : Statement(StatementKind::kRole) {}
  Action action = Action::kCreate;
  bool is_user = true;             ///< USER rather than ROLE: CREATE logs in by default.
  std::vector<std::string> names;  ///< One for CREATE and ALTER.
  bool if_exists = false;          ///< DROP … IF EXISTS.
  /// PASSWORD '…' (a value) or PASSWORD NULL (nullopt inside); unset when not written.
  std::optional<std::optional<std::string>> password;
  std::optional<bool> login;  ///< LOGIN / NOLOGIN; unset when not written.
  int name_position = 0;
};

}  // namespace stave::parser
