#include "parser/parser.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/sql_error.h"
#include "parser/ast.h"

namespace stave::parser {
namespace {

// --- Helpers ----------------------------------------------------------------------------

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string result;
  for (const std::string& part : parts) {
    if (!result.empty()) result += separator;
    result += part;
  }
  return result;
}

std::string ToString(const TypeName& type) {
  std::string result = type.name;
  if (!type.modifiers.empty()) {
    result += "(";
    for (size_t i = 0; i < type.modifiers.size(); ++i) {
      if (i > 0) result += ",";
      result += std::to_string(type.modifiers[i]);
    }
    result += ")";
  }
  for (int i = 0; i < type.array_dimensions; ++i) result += "[]";
  return result;
}

const char* BinaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSubtract:
      return "-";
    case BinaryOp::kMultiply:
      return "*";
    case BinaryOp::kDivide:
      return "/";
    case BinaryOp::kModulo:
      return "%";
    case BinaryOp::kConcat:
      return "||";
    case BinaryOp::kEqual:
      return "=";
    case BinaryOp::kNotEqual:
      return "<>";
    case BinaryOp::kLess:
      return "<";
    case BinaryOp::kLessEqual:
      return "<=";
    case BinaryOp::kGreater:
      return ">";
    case BinaryOp::kGreaterEqual:
      return ">=";
    case BinaryOp::kAnd:
      return "AND";
    case BinaryOp::kOr:
      return "OR";
    case BinaryOp::kJsonGet:
      return "->";
    case BinaryOp::kJsonGetText:
      return "->>";
    case BinaryOp::kJsonPath:
      return "#>";
    case BinaryOp::kJsonPathText:
      return "#>>";
    case BinaryOp::kContains:
      return "@>";
    case BinaryOp::kContainedBy:
      return "<@";
    case BinaryOp::kPower:
      return "^";
  }
  return "?";
}

// Renders an expression as a fully parenthesized S-expression, so that one string comparison
// checks the whole shape of a tree.
std::string ToString(const Expr* expr) {
  if (expr == nullptr) return "<null>";
  switch (expr->kind) {
    case ExprKind::kLiteral: {
      auto* literal = static_cast<const LiteralExpr*>(expr);
      switch (literal->literal_kind) {
        case LiteralKind::kNull:
          return "NULL";
        case LiteralKind::kBoolean:
          return literal->value;
        case LiteralKind::kInteger:
          return literal->value;
        case LiteralKind::kDecimal:
          return "dec:" + literal->value;
        case LiteralKind::kString:
          return "'" + literal->value + "'";
      }
      return "?";
    }
    case ExprKind::kColumnRef:
      return Join(static_cast<const ColumnRefExpr*>(expr)->names, ".");
    case ExprKind::kParameter:
      return "$" + std::to_string(static_cast<const ParameterExpr*>(expr)->number);
    case ExprKind::kStar: {
      auto* star = static_cast<const StarExpr*>(expr);
      return star->qualifier.empty() ? "*" : Join(star->qualifier, ".") + ".*";
    }
    case ExprKind::kUnary: {
      auto* unary = static_cast<const UnaryExpr*>(expr);
      const char* op = unary->op == UnaryOp::kNegate ? "-"
                       : unary->op == UnaryOp::kPlus ? "+"
                                                     : "NOT";
      return std::string("(") + op + " " + ToString(unary->operand.get()) + ")";
    }
    case ExprKind::kBinary: {
      auto* binary = static_cast<const BinaryExpr*>(expr);
      return std::string("(") + BinaryOpName(binary->op) + " " + ToString(binary->left.get()) +
             " " + ToString(binary->right.get()) + ")";
    }
    case ExprKind::kFunctionCall: {
      auto* call = static_cast<const FunctionCallExpr*>(expr);
      std::string result = Join(call->name, ".") + "(";
      if (call->star) result += "*";
      if (call->distinct) result += "DISTINCT ";
      for (size_t i = 0; i < call->args.size(); ++i) {
        if (i > 0) result += ", ";
        result += ToString(call->args[i].get());
      }
      return result + ")";
    }
    case ExprKind::kCase: {
      auto* case_expr = static_cast<const CaseExpr*>(expr);
      std::string result = "(CASE";
      if (case_expr->operand != nullptr) result += " " + ToString(case_expr->operand.get());
      for (const auto& [when, then] : case_expr->when_then) {
        result += " WHEN " + ToString(when.get()) + " THEN " + ToString(then.get());
      }
      if (case_expr->else_result != nullptr) {
        result += " ELSE " + ToString(case_expr->else_result.get());
      }
      return result + ")";
    }
    case ExprKind::kCast: {
      auto* cast = static_cast<const CastExpr*>(expr);
      return "(CAST " + ToString(cast->operand.get()) + " AS " + ToString(cast->type) + ")";
    }
    case ExprKind::kIsNull: {
      auto* is_null = static_cast<const IsNullExpr*>(expr);
      return "(" + ToString(is_null->operand.get()) +
             (is_null->negated ? " IS NOT NULL)" : " IS NULL)");
    }
    case ExprKind::kBetween: {
      auto* between = static_cast<const BetweenExpr*>(expr);
      return "(" + ToString(between->operand.get()) +
             (between->negated ? " NOT BETWEEN " : " BETWEEN ") + ToString(between->lower.get()) +
             " AND " + ToString(between->upper.get()) + ")";
    }
    case ExprKind::kSubquery: {
      auto* subquery = static_cast<const SubqueryExpr*>(expr);
      std::string query = "[" + subquery->query->text + "]";
      switch (subquery->subquery_kind) {
        case SubqueryKind::kScalar:
          return query;
        case SubqueryKind::kExists:
          return "(EXISTS " + query + ")";
        case SubqueryKind::kArray:
          return "ARRAY" + query;
        case SubqueryKind::kIn:
          return "(" + ToString(subquery->operand.get()) +
                 (subquery->negated ? " NOT IN " : " IN ") + query + ")";
        case SubqueryKind::kAny:
        case SubqueryKind::kAll:
          return "(" + ToString(subquery->operand.get()) + " " + BinaryOpName(subquery->op) +
                 (subquery->subquery_kind == SubqueryKind::kAny ? " ANY " : " ALL ") + query + ")";
      }
      return "?";
    }
    case ExprKind::kInList: {
      auto* in_list = static_cast<const InListExpr*>(expr);
      std::string result =
          "(" + ToString(in_list->operand.get()) + (in_list->negated ? " NOT IN (" : " IN (");
      for (size_t i = 0; i < in_list->list.size(); ++i) {
        if (i > 0) result += ", ";
        result += ToString(in_list->list[i].get());
      }
      return result + "))";
    }
    case ExprKind::kLike: {
      auto* like = static_cast<const LikeExpr*>(expr);
      return "(" + ToString(like->operand.get()) + (like->negated ? " NOT" : "") +
             (like->case_insensitive ? " ILIKE " : " LIKE ") + ToString(like->pattern.get()) + ")";
    }
    case ExprKind::kArrayConstructor: {
      auto* constructor = static_cast<const ArrayConstructorExpr*>(expr);
      std::string result = "ARRAY[";
      for (size_t i = 0; i < constructor->elements.size(); ++i) {
        if (i > 0) result += ", ";
        result += ToString(constructor->elements[i].get());
      }
      return result + "]";
    }
    case ExprKind::kSubscript: {
      auto* subscript = static_cast<const SubscriptExpr*>(expr);
      return "(" + ToString(subscript->array.get()) + "[" + ToString(subscript->index.get()) + "])";
    }
    case ExprKind::kQuantifiedComparison: {
      auto* quantified = static_cast<const QuantifiedComparisonExpr*>(expr);
      return std::string("(") + BinaryOpName(quantified->op) + " " +
             ToString(quantified->operand.get()) + (quantified->all ? " ALL " : " ANY ") +
             ToString(quantified->array.get()) + ")";
    }
  }
  return "?";
}

// Parses `sql`, which must hold exactly one statement of type T.
template <typename T>
std::unique_ptr<T> ParseOne(std::string_view sql) {
  std::vector<StatementPtr> statements = Parse(sql);
  EXPECT_EQ(statements.size(), 1u) << sql;
  if (statements.size() != 1) return nullptr;
  auto* typed = dynamic_cast<T*>(statements[0].get());
  EXPECT_NE(typed, nullptr) << sql;
  if (typed == nullptr) return nullptr;
  statements[0].release();
  return std::unique_ptr<T>(typed);
}

std::unique_ptr<SelectStatement> ParseSelect(std::string_view sql) {
  return ParseOne<SelectStatement>(sql);
}

// Parses "SELECT <expression>" and renders the expression.
std::string ExprString(const std::string& expression) {
  auto select = ParseSelect("SELECT " + expression);
  if (select == nullptr || select->items.size() != 1) return "<bad>";
  return ToString(select->items[0].expr.get());
}

struct ErrorInfo {
  std::string sqlstate;
  std::string message;
  int position = 0;
};

// The SqlError that parsing `sql` throws; any other exception fails the test on its own.
std::optional<ErrorInfo> ParseError(std::string_view sql) {
  try {
    Parse(sql);
  } catch (const SqlError& e) {
    return ErrorInfo{e.sqlstate(), e.what(), e.position()};
  }
  return std::nullopt;
}

#define EXPECT_SYNTAX_ERROR(sql, expected_message, expected_position) \
  do {                                                                \
    std::optional<ErrorInfo> error = ParseError(sql);                 \
    ASSERT_TRUE(error.has_value()) << "parsed: " << (sql);            \
    EXPECT_EQ(error->sqlstate, sqlstate::kSyntaxError) << (sql);      \
    EXPECT_EQ(error->message, (expected_message)) << (sql);           \
    EXPECT_EQ(error->position, (expected_position)) << (sql);         \
  } while (false)

#define EXPECT_SQL_ERROR(sql, expected_sqlstate, expected_message, expected_position) \
  do {                                                                                \
    std::optional<ErrorInfo> error = ParseError(sql);                                 \
    ASSERT_TRUE(error.has_value()) << "parsed: " << (sql);                            \
    EXPECT_EQ(error->sqlstate, (expected_sqlstate)) << (sql);                         \
    EXPECT_EQ(error->message, (expected_message)) << (sql);                           \
    EXPECT_EQ(error->position, (expected_position)) << (sql);                         \
  } while (false)

// --- SELECT -----------------------------------------------------------------------------

TEST(ParserSelectTest, MinimalSelect) {
  auto select = ParseSelect("SELECT 1");
  ASSERT_NE(select, nullptr);
  EXPECT_EQ(select->kind, StatementKind::kSelect);
  EXPECT_EQ(select->position, 1);
  EXPECT_EQ(select->text, "SELECT 1");
  EXPECT_FALSE(select->distinct);
  ASSERT_EQ(select->items.size(), 1u);
  EXPECT_EQ(ToString(select->items[0].expr.get()), "1");
  EXPECT_EQ(select->items[0].alias, "");
  EXPECT_FALSE(select->from.has_value());
  EXPECT_EQ(select->where, nullptr);
  EXPECT_TRUE(select->group_by.empty());
  EXPECT_EQ(select->having, nullptr);
  EXPECT_TRUE(select->order_by.empty());
  EXPECT_EQ(select->limit, nullptr);
  EXPECT_EQ(select->offset, nullptr);
}

TEST(ParserSelectTest, ParameterPlaceholders) {
  EXPECT_EQ(ExprString("$1 + $12"), "(+ $1 $12)");
  EXPECT_EQ(ExprString("$2::int"), "(CAST $2 AS int)");
  // One slot per number, shared by its uses; numbers not written get a slot too.
  auto select = ParseSelect("SELECT $3, $1 FROM t WHERE a = $3");
  ASSERT_NE(select, nullptr);
  ASSERT_EQ(select->parameters.size(), 3u);
  for (const auto& slot : select->parameters) EXPECT_NE(slot, nullptr);
  EXPECT_EQ(static_cast<const ParameterExpr*>(select->items[0].expr.get())->slot,
            select->parameters[2]);
  EXPECT_TRUE(ParseSelect("SELECT 1")->parameters.empty());
  // Each statement of a query string counts its own.
  auto statements = Parse("SELECT $1; SELECT $2");
  ASSERT_EQ(statements.size(), 2u);
  EXPECT_EQ(statements[0]->parameters.size(), 1u);
  EXPECT_EQ(statements[1]->parameters.size(), 2u);
  EXPECT_SQL_ERROR("SELECT $0", "42P02", "there is no parameter $0", 8);
  EXPECT_SQL_ERROR("SELECT $65536", "42P02", "there is no parameter $65536", 8);
  EXPECT_SYNTAX_ERROR("SELECT $", "syntax error at or near \"$\"", 8);
}

// `(record).field`; the fields of information_schema._pg_expandarray(a) are its definition's
// set-returning calls.
TEST(ParserSelectTest, FieldSelection) {
  auto select = ParseSelect(
      "select (information_schema._pg_expandarray(i.indkey)).n, (_pg_expandarray(k)).X, "
      "(r.keys).x, (information_schema._pg_expandarray(k)).other from t");
  ASSERT_NE(select, nullptr);
  ASSERT_EQ(select->items.size(), 4u);
  EXPECT_EQ(ToString(select->items[0].expr.get()),
            "information_schema._pg_expandarray_subscripts(i.indkey, 1)");
  EXPECT_EQ(ToString(select->items[1].expr.get()), "unnest(k)");
  EXPECT_EQ(ToString(select->items[2].expr.get()),
            "information_schema._pg_expandarray_field(r.keys, 'x')");
  EXPECT_EQ(ToString(select->items[3].expr.get()),
            "information_schema._pg_expandarray_field(information_schema._pg_expandarray(k), "
            "'other')");
}

TEST(ParserSelectTest, AllClauses) {
  auto select = ParseSelect(
      "select distinct a, b AS total, c d, count(*) from public.orders o "
      "where a > 1 group by a, b having count(*) > 2 "
      "order by a desc nulls first, b, c asc nulls last limit 10 offset 5");
  ASSERT_NE(select, nullptr);
  EXPECT_TRUE(select->distinct);
  ASSERT_EQ(select->items.size(), 4u);
  EXPECT_EQ(ToString(select->items[0].expr.get()), "a");
  EXPECT_EQ(select->items[0].alias, "");
  EXPECT_EQ(ToString(select->items[1].expr.get()), "b");
  EXPECT_EQ(select->items[1].alias, "total");
  EXPECT_EQ(select->items[2].alias, "d");
  EXPECT_EQ(ToString(select->items[3].expr.get()), "count(*)");
  ASSERT_TRUE(select->from.has_value());
  EXPECT_EQ(select->from->name, (QualifiedName{"public", "orders"}));
  EXPECT_EQ(select->from->alias, "o");
  EXPECT_EQ(ToString(select->where.get()), "(> a 1)");
  ASSERT_EQ(select->group_by.size(), 2u);
  EXPECT_EQ(ToString(select->group_by[0].get()), "a");
  EXPECT_EQ(ToString(select->group_by[1].get()), "b");
  EXPECT_EQ(ToString(select->having.get()), "(> count(*) 2)");
  ASSERT_EQ(select->order_by.size(), 3u);
  EXPECT_EQ(ToString(select->order_by[0].expr.get()), "a");
  EXPECT_TRUE(select->order_by[0].descending);
  EXPECT_EQ(select->order_by[0].nulls_first, std::optional<bool>(true));
  EXPECT_FALSE(select->order_by[1].descending);
  EXPECT_FALSE(select->order_by[1].nulls_first.has_value());
  EXPECT_FALSE(select->order_by[2].descending);
  EXPECT_EQ(select->order_by[2].nulls_first, std::optional<bool>(false));
  EXPECT_EQ(ToString(select->limit.get()), "10");
  EXPECT_EQ(ToString(select->offset.get()), "5");
}

TEST(ParserSelectTest, StarAndQualifiedStar) {
  auto select = ParseSelect("SELECT *, t.*, s.t.* FROM t");
  ASSERT_NE(select, nullptr);
  ASSERT_EQ(select->items.size(), 3u);
  EXPECT_EQ(select->items[0].expr->kind, ExprKind::kStar);
  EXPECT_EQ(ToString(select->items[0].expr.get()), "*");
  EXPECT_EQ(select->items[0].expr->position, 8);
  EXPECT_EQ(ToString(select->items[1].expr.get()), "t.*");
  EXPECT_EQ(select->items[1].expr->position, 11);
  EXPECT_EQ(ToString(select->items[2].expr.get()), "s.t.*");
}

TEST(ParserSelectTest, WindowFunctionCalls) {
  auto select = ParseSelect(
      "SELECT row_number() OVER (PARTITION BY a, b ORDER BY c DESC NULLS LAST, d), "
      "sum(x) OVER (), count(*) OVER (ORDER BY e), lower(s) FROM t");
  ASSERT_NE(select, nullptr);
  ASSERT_EQ(select->items.size(), 4u);
  auto* rank = static_cast<const FunctionCallExpr*>(select->items[0].expr.get());
  ASSERT_NE(rank->over, nullptr);
  ASSERT_EQ(rank->over->partition_by.size(), 2u);
  EXPECT_EQ(ToString(rank->over->partition_by[1].get()), "b");
  ASSERT_EQ(rank->over->order_by.size(), 2u);
  EXPECT_TRUE(rank->over->order_by[0].descending);
  EXPECT_EQ(rank->over->order_by[0].nulls_first, false);
  EXPECT_FALSE(rank->over->order_by[1].descending);
  auto* sum = static_cast<const FunctionCallExpr*>(select->items[1].expr.get());
  ASSERT_NE(sum->over, nullptr);
  EXPECT_TRUE(sum->over->partition_by.empty());
  EXPECT_TRUE(sum->over->order_by.empty());
  auto* count = static_cast<const FunctionCallExpr*>(select->items[2].expr.get());
  EXPECT_TRUE(count->star);
  ASSERT_NE(count->over, nullptr);
  EXPECT_EQ(count->over->order_by.size(), 1u);
  EXPECT_EQ(static_cast<const FunctionCallExpr*>(select->items[3].expr.get())->over, nullptr);
}

TEST(ParserSelectTest, OverAndPartitionRemainNames) {
  auto select = ParseSelect("SELECT over, partition FROM t AS over");
  ASSERT_NE(select, nullptr);
  ASSERT_EQ(select->items.size(), 2u);
  EXPECT_EQ(ToString(select->items[0].expr.get()), "over");
  EXPECT_EQ(ToString(select->items[1].expr.get()), "partition");
}

TEST(ParserSelectTest, DistinctOn) {
  auto select = ParseSelect("SELECT DISTINCT ON (a, b + 1) a, c FROM t ORDER BY a, b + 1, c");
  ASSERT_NE(select, nullptr);
  EXPECT_FALSE(select->distinct);
  ASSERT_EQ(select->distinct_on.size(), 2u);
  EXPECT_EQ(ToString(select->distinct_on[0].get()), "a");
  EXPECT_EQ(ToString(select->distinct_on[1].get()), "(+ b 1)");
  EXPECT_EQ(select->items.size(), 2u);
}

TEST(ParserSelectTest, AliasesAfterAsMayBeReservedWords) {
  auto select = ParseSelect("SELECT 1 AS from, 2 AS \"Select\", 3 kind, 4 AS Total");
  ASSERT_NE(select, nullptr);
  ASSERT_EQ(select->items.size(), 4u);
  EXPECT_EQ(select->items[0].alias, "from");
  EXPECT_EQ(select->items[1].alias, "Select");
  EXPECT_EQ(select->items[2].alias, "kind");
  EXPECT_EQ(select->items[3].alias, "total");
}

TEST(ParserSelectTest, TableAliases) {
  auto with_as = ParseSelect("SELECT 1 FROM t AS x");
  ASSERT_NE(with_as, nullptr);
  EXPECT_EQ(with_as->from->alias, "x");
  EXPECT_EQ(with_as->from->position, 15);
  auto bare = ParseSelect("SELECT 1 FROM t x WHERE true");
  ASSERT_NE(bare, nullptr);
  EXPECT_EQ(bare->from->alias, "x");
  auto none = ParseSelect("SELECT 1 FROM t");
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->from->alias, "");
}

TEST(ParserSelectTest, LimitAllOffsetOrder) {
  auto limit_all = ParseSelect("SELECT a FROM t LIMIT ALL");
  ASSERT_NE(limit_all, nullptr);
  EXPECT_EQ(limit_all->limit, nullptr);
  auto offset_first = ParseSelect("SELECT a FROM t OFFSET 3 ROWS LIMIT 7");
  ASSERT_NE(offset_first, nullptr);
  EXPECT_EQ(ToString(offset_first->limit.get()), "7");
  EXPECT_EQ(ToString(offset_first->offset.get()), "3");
  auto offset_only = ParseSelect("SELECT a FROM t OFFSET 2");
  ASSERT_NE(offset_only, nullptr);
  EXPECT_EQ(offset_only->limit, nullptr);
  EXPECT_EQ(ToString(offset_only->offset.get()), "2");
}

TEST(ParserSelectTest, SelectAllQuantifierIsNotDistinct) {
  auto select = ParseSelect("SELECT ALL a FROM t");
  ASSERT_NE(select, nullptr);
  EXPECT_FALSE(select->distinct);
  EXPECT_EQ(ToString(select->items[0].expr.get()), "a");
}

TEST(ParserSelectTest, ParenthesizedQuery) {
  auto select = ParseSelect("(SELECT 1)");
  ASSERT_NE(select, nullptr);
  EXPECT_EQ(select->text, "(SELECT 1)");
  EXPECT_EQ(select->position, 1);
}

// --- Expressions ------------------------------------------------------------------------

TEST(ParserExpressionTest, Literals) {
  EXPECT_EQ(ExprString("NULL"), "NULL");
  EXPECT_EQ(ExprString("TRUE"), "true");
  EXPECT_EQ(ExprString("false"), "false");
  EXPECT_EQ(ExprString("42"), "42");
  EXPECT_EQ(ExprString("1.5"), "dec:1.5");
  EXPECT_EQ(ExprString(".5"), "dec:.5");
  EXPECT_EQ(ExprString("1e3"), "dec:1e3");
  EXPECT_EQ(ExprString("2.5E-3"), "dec:2.5E-3");
  EXPECT_EQ(ExprString("7."), "dec:7.");
  EXPECT_EQ(ExprString("'hello'"), "'hello'");
  EXPECT_EQ(ExprString("'it''s'"), "'it's'");
  EXPECT_EQ(ExprString("''"), "''");
  EXPECT_EQ(ExprString("'a -- not a comment /* nor this */'"),
            "'a -- not a comment /* nor this */'");
  EXPECT_EQ(ExprString("'line\nbreak'"), "'line\nbreak'");
}

TEST(ParserExpressionTest, IntegerBeyondInt64StaysAnIntegerLiteral) {
  auto select = ParseSelect("SELECT 99999999999999999999999999");
  ASSERT_NE(select, nullptr);
  auto* literal = static_cast<const LiteralExpr*>(select->items[0].expr.get());
  ASSERT_EQ(literal->kind, ExprKind::kLiteral);
  EXPECT_EQ(literal->literal_kind, LiteralKind::kInteger);
  EXPECT_EQ(literal->value, "99999999999999999999999999");
}

TEST(ParserExpressionTest, ArithmeticPrecedence) {
  EXPECT_EQ(ExprString("1 + 2 * 3"), "(+ 1 (* 2 3))");
  EXPECT_EQ(ExprString("(1 + 2) * 3"), "(* (+ 1 2) 3)");
  EXPECT_EQ(ExprString("1 - 2 - 3"), "(- (- 1 2) 3)");
  EXPECT_EQ(ExprString("8 / 4 % 3 * 2"), "(* (% (/ 8 4) 3) 2)");
  EXPECT_EQ(ExprString("-a * b"), "(* (- a) b)");
  EXPECT_EQ(ExprString("- - 1"), "(- (- 1))");
  EXPECT_EQ(ExprString("+a"), "(+ a)");
  EXPECT_EQ(ExprString("a - -1"), "(- a (- 1))");
  EXPECT_EQ(ExprString("'a' || 1 + 2"), "(|| 'a' (+ 1 2))");
  EXPECT_EQ(ExprString("a || b || c"), "(|| (|| a b) c)");
}

TEST(ParserExpressionTest, BooleanPrecedence) {
  EXPECT_EQ(ExprString("a OR b AND c"), "(OR a (AND b c))");
  EXPECT_EQ(ExprString("a AND b OR c"), "(OR (AND a b) c)");
  EXPECT_EQ(ExprString("NOT a = b"), "(NOT (= a b))");
  EXPECT_EQ(ExprString("NOT a AND b"), "(AND (NOT a) b)");
  EXPECT_EQ(ExprString("NOT NOT a"), "(NOT (NOT a))");
  EXPECT_EQ(ExprString("a = 1 OR b <> 2 AND NOT c"), "(OR (= a 1) (AND (<> b 2) (NOT c)))");
  EXPECT_EQ(ExprString("a + 1 > b * 2"), "(> (+ a 1) (* b 2))");
}

TEST(ParserExpressionTest, Comparisons) {
  EXPECT_EQ(ExprString("a = b"), "(= a b)");
  EXPECT_EQ(ExprString("a <> b"), "(<> a b)");
  EXPECT_EQ(ExprString("a != b"), "(<> a b)");
  EXPECT_EQ(ExprString("a < b"), "(< a b)");
  EXPECT_EQ(ExprString("a <= b"), "(<= a b)");
  EXPECT_EQ(ExprString("a > b"), "(> a b)");
  EXPECT_EQ(ExprString("a >= b"), "(>= a b)");
  EXPECT_EQ(ExprString("a=b"), "(= a b)");
}

TEST(ParserExpressionTest, CastBindsTighterThanUnaryMinus) {
  EXPECT_EQ(ExprString("-a::int"), "(- (CAST a AS int))");
  EXPECT_EQ(ExprString("a::int + 1"), "(+ (CAST a AS int) 1)");
  EXPECT_EQ(ExprString("'1'::text::int"), "(CAST (CAST '1' AS text) AS int)");
  EXPECT_EQ(ExprString("(a + b)::bigint"), "(CAST (+ a b) AS bigint)");
}

TEST(ParserExpressionTest, ArraysAndJsonbOperators) {
  EXPECT_EQ(ExprString("ARRAY[1, a + 1]"), "ARRAY[1, (+ a 1)]");
  EXPECT_EQ(ExprString("ARRAY[]::int[]"), "(CAST ARRAY[] AS int[])");
  EXPECT_EQ(ExprString("a::varchar(3)[]"), "(CAST a AS varchar(3)[])");
  EXPECT_EQ(ExprString("a[1] + 1"), "(+ (a[1]) 1)");
  EXPECT_EQ(ExprString("(ARRAY[a])[i]"), "(ARRAY[a][i])");
  EXPECT_EQ(ExprString("x = ANY(a)"), "(= x ANY a)");
  EXPECT_EQ(ExprString("x <> ALL (a || b)"), "(<> x ALL (|| a b))");
  EXPECT_EQ(ExprString("x < SOME(a)"), "(< x ANY a)");
  // The jsonb operators share the precedence of ||: above comparisons, below + and -.
  EXPECT_EQ(ExprString("j -> 'a' ->> 0 = 'x'"), "(= (->> (-> j 'a') 0) 'x')");
  EXPECT_EQ(ExprString("j->>i + 1"), "(->> j (+ i 1))");
  EXPECT_EQ(ExprString("j #> '{a,b}' #>> '{0}'"), "(#>> (#> j '{a,b}') '{0}')");
  EXPECT_EQ(ExprString("j @> k AND k <@ j"), "(AND (@> j k) (<@ k j))");
}

TEST(ParserExpressionTest, Predicates) {
  EXPECT_EQ(ExprString("a IS NULL"), "(a IS NULL)");
  EXPECT_EQ(ExprString("a IS NOT NULL"), "(a IS NOT NULL)");
  EXPECT_EQ(ExprString("a + 1 IS NULL"), "((+ a 1) IS NULL)");
  EXPECT_EQ(ExprString("a BETWEEN 1 AND 2"), "(a BETWEEN 1 AND 2)");
  EXPECT_EQ(ExprString("a NOT BETWEEN 1 AND b + 2"), "(a NOT BETWEEN 1 AND (+ b 2))");
  EXPECT_EQ(ExprString("a IN (1, 2, 3)"), "(a IN (1, 2, 3))");
  EXPECT_EQ(ExprString("a NOT IN ('x')"), "(a NOT IN ('x'))");
  EXPECT_EQ(ExprString("a LIKE 'x%'"), "(a LIKE 'x%')");
  EXPECT_EQ(ExprString("a NOT LIKE 'x%'"), "(a NOT LIKE 'x%')");
  EXPECT_EQ(ExprString("a ILIKE 'x%'"), "(a ILIKE 'x%')");
  EXPECT_EQ(ExprString("a NOT ILIKE b || '%'"), "(a NOT ILIKE (|| b '%'))");
  EXPECT_EQ(ExprString("NOT a IS NULL"), "(NOT (a IS NULL))");
  EXPECT_EQ(ExprString("(a IS NULL) = true"), "(= (a IS NULL) true)");
}

TEST(ParserExpressionTest, Subqueries) {
  EXPECT_EQ(ExprString("(SELECT max(x) FROM t) + 1"), "(+ [SELECT max(x) FROM t] 1)");
  EXPECT_EQ(ExprString("a IN (SELECT x FROM t)"), "(a IN [SELECT x FROM t])");
  EXPECT_EQ(ExprString("a NOT IN (SELECT x FROM t)"), "(a NOT IN [SELECT x FROM t])");
  EXPECT_EQ(ExprString("NOT EXISTS (SELECT 1 FROM t WHERE t.k = k)"),
            "(NOT (EXISTS [SELECT 1 FROM t WHERE t.k = k]))");
  EXPECT_EQ(ExprString("a >= ALL (SELECT x FROM t)"), "(a >= ALL [SELECT x FROM t])");
  EXPECT_EQ(ExprString("a <> SOME (SELECT x FROM t)"), "(a <> ANY [SELECT x FROM t])");
  EXPECT_EQ(ExprString("a IN (1, 2)"), "(a IN (1, 2))");
}

TEST(ParserSelectTest, ValuesReturningAndColumnAliases) {
  auto values = ParseOne<SelectStatement>("VALUES (1, 'a'), (2, 'b')");
  ASSERT_EQ(values->values.size(), 2u);
  EXPECT_EQ(ToString(values->values[1][1].get()), "'b'");
  auto from = ParseOne<SelectStatement>("SELECT * FROM (VALUES (1)) AS v(id)");
  EXPECT_EQ(from->from->column_aliases, std::vector<std::string>{"id"});
  auto insert = ParseOne<InsertStatement>("INSERT INTO t VALUES (1) RETURNING *, a + 1 AS b");
  ASSERT_EQ(insert->returning.size(), 2u);
  EXPECT_EQ(insert->returning[1].alias, "b");
  auto remove = ParseOne<DeleteStatement>("DELETE FROM t RETURNING a");
  EXPECT_EQ(remove->returning.size(), 1u);
}

TEST(ParserExpressionTest, BetweenInsideAnd) {
  EXPECT_EQ(ExprString("x BETWEEN 1 AND 2 AND y"), "(AND (x BETWEEN 1 AND 2) y)");
  EXPECT_EQ(ExprString("a AND x BETWEEN 1 AND 2 AND y > 0"),
            "(AND (AND a (x BETWEEN 1 AND 2)) (> y 0))");
  EXPECT_EQ(ExprString("x BETWEEN 1 AND 2 OR y BETWEEN 3 AND 4"),
            "(OR (x BETWEEN 1 AND 2) (y BETWEEN 3 AND 4))");
}

TEST(ParserExpressionTest, FunctionCalls) {
  EXPECT_EQ(ExprString("count(*)"), "count(*)");
  EXPECT_EQ(ExprString("COUNT(*)"), "count(*)");
  EXPECT_EQ(ExprString("count(DISTINCT a)"), "count(DISTINCT a)");
  EXPECT_EQ(ExprString("count(ALL a)"), "count(a)");
  EXPECT_EQ(ExprString("now()"), "now()");
  EXPECT_EQ(ExprString("pg_catalog.version()"), "pg_catalog.version()");
  EXPECT_EQ(ExprString("coalesce(a, b + 1, 'x')"), "coalesce(a, (+ b 1), 'x')");
  EXPECT_EQ(ExprString("upper(lower(s))"), "upper(lower(s))");
  EXPECT_EQ(ExprString("format('%s', 1)"), "format('%s', 1)");

  auto select = ParseSelect("SELECT count(*), sum(DISTINCT x)");
  ASSERT_NE(select, nullptr);
  auto* count = static_cast<const FunctionCallExpr*>(select->items[0].expr.get());
  EXPECT_TRUE(count->star);
  EXPECT_FALSE(count->distinct);
  EXPECT_TRUE(count->args.empty());
  auto* sum = static_cast<const FunctionCallExpr*>(select->items[1].expr.get());
  EXPECT_FALSE(sum->star);
  EXPECT_TRUE(sum->distinct);
  EXPECT_EQ(sum->args.size(), 1u);
}

TEST(ParserExpressionTest, AggregateFilter) {
  auto select = ParseSelect(
      "SELECT count(*) FILTER (WHERE p > 1), count(DISTINCT b) FILTER (WHERE p < 2) OVER (), "
      "sum(filter) filter, count(x)");
  ASSERT_NE(select, nullptr);
  ASSERT_EQ(select->items.size(), 4u);
  auto* count = static_cast<const FunctionCallExpr*>(select->items[0].expr.get());
  ASSERT_NE(count->filter, nullptr);
  EXPECT_EQ(count->filter->kind, ExprKind::kBinary);
  auto* windowed = static_cast<const FunctionCallExpr*>(select->items[1].expr.get());
  EXPECT_TRUE(windowed->distinct);
  EXPECT_NE(windowed->filter, nullptr);
  EXPECT_NE(windowed->over, nullptr);
  // FILTER is no reserved word: a column and an alias may be named filter.
  auto* sum = static_cast<const FunctionCallExpr*>(select->items[2].expr.get());
  EXPECT_EQ(sum->filter, nullptr);
  EXPECT_EQ(select->items[2].alias, "filter");
  EXPECT_EQ(static_cast<const FunctionCallExpr*>(select->items[3].expr.get())->filter, nullptr);
}

TEST(ParserExpressionTest, Case) {
  EXPECT_EQ(ExprString("CASE WHEN a > 1 THEN 'big' WHEN a > 0 THEN 'small' ELSE 'none' END"),
            "(CASE WHEN (> a 1) THEN 'big' WHEN (> a 0) THEN 'small' ELSE 'none')");
  EXPECT_EQ(ExprString("CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END"),
            "(CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two')");
  EXPECT_EQ(ExprString("CASE WHEN a THEN CASE b WHEN 1 THEN 2 END END"),
            "(CASE WHEN a THEN (CASE b WHEN 1 THEN 2))");
  auto select = ParseSelect("SELECT CASE WHEN a THEN 1 END");
  ASSERT_NE(select, nullptr);
  auto* case_expr = static_cast<const CaseExpr*>(select->items[0].expr.get());
  EXPECT_EQ(case_expr->operand, nullptr);
  EXPECT_EQ(case_expr->else_result, nullptr);
}

TEST(ParserExpressionTest, CastsAndTypeNames) {
  EXPECT_EQ(ExprString("CAST(a AS bigint)"), "(CAST a AS bigint)");
  EXPECT_EQ(ExprString("CAST(a AS DOUBLE PRECISION)"), "(CAST a AS double precision)");
  EXPECT_EQ(ExprString("a::double   precision"), "(CAST a AS double precision)");
  EXPECT_EQ(ExprString("a::VARCHAR(20)"), "(CAST a AS varchar(20))");
  EXPECT_EQ(ExprString("a::Character Varying(5)"), "(CAST a AS character varying(5))");
  EXPECT_EQ(ExprString("a::character varying"), "(CAST a AS character varying)");
  EXPECT_EQ(ExprString("a::character(3)"), "(CAST a AS character(3))");
  EXPECT_EQ(ExprString("a::numeric(10, 2)"), "(CAST a AS numeric(10,2))");
  EXPECT_EQ(ExprString("a::timestamp with time zone"), "(CAST a AS timestamp with time zone)");
  EXPECT_EQ(ExprString("a::TIMESTAMP WITHOUT TIME ZONE"),
            "(CAST a AS timestamp without time zone)");
  EXPECT_EQ(ExprString("a::pg_catalog.int4"), "(CAST a AS pg_catalog.int4)");
  EXPECT_EQ(ExprString("a::\"MyType\""), "(CAST a AS MyType)");
  EXPECT_EQ(ExprString("DATE '2024-01-31'"), "(CAST '2024-01-31' AS date)");

  // "double precision" wins over "double" with an alias named "precision".
  auto select = ParseSelect("SELECT a::double precision FROM t");
  ASSERT_NE(select, nullptr);
  EXPECT_EQ(select->items[0].alias, "");
  auto aliased = ParseSelect("SELECT a::double AS precision FROM t");
  ASSERT_NE(aliased, nullptr);
  EXPECT_EQ(ToString(aliased->items[0].expr.get()), "(CAST a AS double)");
  EXPECT_EQ(aliased->items[0].alias, "precision");
}

TEST(ParserExpressionTest, ColumnReferences) {
  EXPECT_EQ(ExprString("a"), "a");
  EXPECT_EQ(ExprString("T.A"), "t.a");
  EXPECT_EQ(ExprString("s.t.a"), "s.t.a");
  EXPECT_EQ(ExprString("\"T\".\"A b\""), "T.A b");
}

TEST(ParserExpressionTest, Positions) {
  //                           1234567890123456789012345678901234567890
  auto select = ParseSelect("SELECT a + b * 2, -c, f(x) FROM t WHERE c IS NULL");
  ASSERT_NE(select, nullptr);
  auto* sum = static_cast<const BinaryExpr*>(select->items[0].expr.get());
  EXPECT_EQ(sum->position, 8);
  EXPECT_EQ(sum->left->position, 8);
  auto* product = static_cast<const BinaryExpr*>(sum->right.get());
  EXPECT_EQ(product->position, 12);
  EXPECT_EQ(product->right->position, 16);
  auto* negate = static_cast<const UnaryExpr*>(select->items[1].expr.get());
  EXPECT_EQ(negate->position, 19);
  EXPECT_EQ(negate->operand->position, 20);
  auto* call = static_cast<const FunctionCallExpr*>(select->items[2].expr.get());
  EXPECT_EQ(call->position, 23);
  EXPECT_EQ(call->args[0]->position, 25);
  EXPECT_EQ(select->from->position, 33);
  auto* is_null = static_cast<const IsNullExpr*>(select->where.get());
  EXPECT_EQ(is_null->position, 41);

  auto cast = ParseSelect("SELECT x::int, CAST(y AS text)");
  ASSERT_NE(cast, nullptr);
  auto* postfix = static_cast<const CastExpr*>(cast->items[0].expr.get());
  EXPECT_EQ(postfix->position, 8);
  EXPECT_EQ(postfix->type.position, 11);
  auto* call_cast = static_cast<const CastExpr*>(cast->items[1].expr.get());
  EXPECT_EQ(call_cast->position, 16);
  EXPECT_EQ(call_cast->type.position, 26);
}

TEST(ParserExpressionTest, PositionsCountCharactersNotBytes) {
  // 'é' is two bytes in UTF-8 but one character, as PostgreSQL counts.
  auto select = ParseSelect("SELECT 'é', x");
  ASSERT_NE(select, nullptr);
  EXPECT_EQ(select->items[1].expr->position, 13);
  EXPECT_EQ(ToString(select->items[0].expr.get()), "'é'");
}

// --- Identifiers and keywords -----------------------------------------------------------

TEST(ParserIdentifierTest, FoldingAndQuoting) {
  auto select =
      ParseSelect("SELECT MyCol, \"MyCol\", \"a\"\"b\", \"select\", café, CAFÉ FROM \"T\"");
  ASSERT_NE(select, nullptr);
  ASSERT_EQ(select->items.size(), 6u);
  EXPECT_EQ(ToString(select->items[0].expr.get()), "mycol");
  EXPECT_EQ(ToString(select->items[1].expr.get()), "MyCol");
  EXPECT_EQ(ToString(select->items[2].expr.get()), "a\"b");
  EXPECT_EQ(ToString(select->items[3].expr.get()), "select");
  EXPECT_EQ(ToString(select->items[4].expr.get()), "café");
  // Like PostgreSQL, only ASCII letters are folded.
  EXPECT_EQ(ToString(select->items[5].expr.get()), "cafÉ");
  EXPECT_EQ(select->from->name, (QualifiedName{"T"}));
}

TEST(ParserIdentifierTest, NonReservedKeywordsAreColumnNames) {
  auto select = ParseSelect(
      "SELECT kind, key, value, format, stream, streams, time, zone, level, first, last, nulls, "
      "show, set, begin, commit, work, if, exists, view, sink, local, session, by, double "
      "FROM streams WHERE key = 1 AND time > 2 ORDER BY level");
  ASSERT_NE(select, nullptr);
  std::vector<std::string> names;
  for (const SelectItem& item : select->items) names.push_back(ToString(item.expr.get()));
  EXPECT_EQ(Join(names, ","),
            "kind,key,value,format,stream,streams,time,zone,level,first,last,nulls,show,set,"
            "begin,commit,work,if,exists,view,sink,local,session,by,double");
  EXPECT_EQ(select->from->name, (QualifiedName{"streams"}));
  EXPECT_EQ(ToString(select->where.get()), "(AND (= key 1) (> time 2))");
  EXPECT_EQ(ToString(select->order_by[0].expr.get()), "level");
}

TEST(ParserIdentifierTest, NonReservedKeywordsAsAliasesAndTables) {
  auto select = ParseSelect("SELECT a stream, b level FROM stream key");
  ASSERT_NE(select, nullptr);
  EXPECT_EQ(select->items[0].alias, "stream");
  EXPECT_EQ(select->items[1].alias, "level");
  EXPECT_EQ(select->from->name, (QualifiedName{"stream"}));
  EXPECT_EQ(select->from->alias, "key");
}

TEST(ParserIdentifierTest, ReservedKeywordsAreNotIdentifiers) {
  EXPECT_SYNTAX_ERROR("SELECT a FROM all", "syntax error at or near \"all\"", 15);
  EXPECT_SYNTAX_ERROR("SELECT 1 FROM select", "syntax error at or near \"select\"", 15);
  EXPECT_SYNTAX_ERROR("SELECT a FROM t WHERE order = 1", "syntax error at or near \"order\"", 23);
}

TEST(ParserIdentifierTest, EmptyQuotedIdentifierIsAnError) {
  EXPECT_SYNTAX_ERROR("SELECT \"\" FROM t", "zero-length delimited identifier at or near \"\"\"\"",
                      8);
}

// --- Comments, whitespace and multiple statements ---------------------------------------

TEST(ParserScriptTest, EmptyInputs) {
  EXPECT_TRUE(Parse("").empty());
  EXPECT_TRUE(Parse("   \n\t ").empty());
  EXPECT_TRUE(Parse("-- just a comment").empty());
  EXPECT_TRUE(Parse("/* block */").empty());
  EXPECT_TRUE(Parse("/* a */ -- b\n /* c\n d */").empty());
  EXPECT_TRUE(Parse(";").empty());
  EXPECT_TRUE(Parse(" ; ;; -- x\n;").empty());
}

TEST(ParserScriptTest, CommentsAreSkipped) {
  auto select = ParseSelect("SELECT /* the answer */ 42 -- trailing\n FROM t /**/");
  ASSERT_NE(select, nullptr);
  EXPECT_EQ(ToString(select->items[0].expr.get()), "42");
  EXPECT_EQ(select->text, "SELECT /* the answer */ 42 -- trailing\n FROM t");
  EXPECT_EQ(ExprString("1 - -- comment\n 2"), "(- 1 2)");
  EXPECT_EQ(ExprString("1--2"), "1");
  EXPECT_EQ(ExprString("1/**/+/* * */2"), "(+ 1 2)");
}

TEST(ParserScriptTest, MultipleStatementsWithTexts) {
  std::string sql = "  SELECT 1;select  2 ; ;\n-- note\nSHOW ALL;  /* c */ COMMIT  ";
  std::vector<StatementPtr> statements = Parse(sql);
  ASSERT_EQ(statements.size(), 4u);
  EXPECT_EQ(statements[0]->kind, StatementKind::kSelect);
  EXPECT_EQ(statements[0]->text, "SELECT 1");
  EXPECT_EQ(statements[0]->position, 3);
  EXPECT_EQ(statements[1]->kind, StatementKind::kSelect);
  EXPECT_EQ(statements[1]->text, "select  2");
  EXPECT_EQ(statements[1]->position, 12);
  EXPECT_EQ(statements[2]->kind, StatementKind::kShowVariable);
  EXPECT_EQ(statements[2]->text, "SHOW ALL");
  EXPECT_EQ(statements[2]->position, static_cast<int>(sql.find("SHOW")) + 1);
  EXPECT_EQ(statements[3]->kind, StatementKind::kTransaction);
  EXPECT_EQ(statements[3]->text, "COMMIT");
  EXPECT_EQ(statements[3]->position, static_cast<int>(sql.find("COMMIT")) + 1);
  // The trailing statement needs no ';'.
  std::vector<StatementPtr> two = Parse("SELECT 1; COMMIT");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1]->kind, StatementKind::kTransaction);
  EXPECT_EQ(two[1]->text, "COMMIT");
  EXPECT_EQ(two[1]->position, 11);
}

TEST(ParserScriptTest, StatementTextKeepsNonAsciiCharacters) {
  std::vector<StatementPtr> statements = Parse("SELECT 'ünïcödé' AS \"名前\"; SELECT 2");
  ASSERT_EQ(statements.size(), 2u);
  EXPECT_EQ(statements[0]->text, "SELECT 'ünïcödé' AS \"名前\"");
  auto* select = static_cast<const SelectStatement*>(statements[0].get());
  EXPECT_EQ(select->items[0].alias, "名前");
  EXPECT_EQ(statements[1]->position, 27);
}

TEST(ParserScriptTest, StatementsNeedSeparators) {
  EXPECT_SYNTAX_ERROR("SELECT 1 SELECT 2", "syntax error at or near \"SELECT\"", 10);
}

// --- CREATE STREAM ----------------------------------------------------------------------

TEST(ParserCreateStreamTest, Full) {
  auto create = ParseOne<CreateStreamStatement>(
      "CREATE STREAM IF NOT EXISTS public.Orders (\n"
      "  id BIGINT NOT NULL PRIMARY KEY,\n"
      "  \"Name\" character varying(40),\n"
      "  price double precision NULL,\n"
      "  ts timestamp with time zone,\n"
      "  key text, value bytea, format int, time time, level int\n"
      ") WITH (connector = 'kafka', properties.bootstrap.server = 'localhost:9092',\n"
      "        properties.group.id = 'g1', 'fields.id.kind' = sequence, PARTITIONS = 4,\n"
      "        offset = -12, ratio = 0.5, Enabled = TRUE, other = false, \"Mixed\" = 'x')\n"
      "FORMAT JSON");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->kind, StatementKind::kCreateStream);
  EXPECT_EQ(create->position, 1);
  EXPECT_TRUE(create->if_not_exists);
  EXPECT_EQ(create->name, (QualifiedName{"public", "orders"}));
  ASSERT_EQ(create->columns.size(), 9u);
  const ColumnDef& id = create->columns[0];
  EXPECT_EQ(id.name, "id");
  EXPECT_EQ(ToString(id.type), "bigint");
  EXPECT_TRUE(id.not_null);
  EXPECT_TRUE(id.primary_key);
  EXPECT_EQ(id.position, 47);
  EXPECT_EQ(id.type.position, 50);
  EXPECT_EQ(create->columns[1].name, "Name");
  EXPECT_EQ(ToString(create->columns[1].type), "character varying(40)");
  EXPECT_FALSE(create->columns[1].not_null);
  EXPECT_FALSE(create->columns[1].primary_key);
  EXPECT_EQ(ToString(create->columns[2].type), "double precision");
  EXPECT_FALSE(create->columns[2].not_null);
  EXPECT_EQ(ToString(create->columns[3].type), "timestamp with time zone");
  EXPECT_EQ(create->columns[4].name, "key");
  EXPECT_EQ(create->columns[5].name, "value");
  EXPECT_EQ(ToString(create->columns[5].type), "bytea");
  EXPECT_EQ(create->columns[6].name, "format");
  EXPECT_EQ(create->columns[7].name, "time");
  EXPECT_EQ(ToString(create->columns[7].type), "time");
  EXPECT_EQ(create->columns[8].name, "level");

  std::vector<std::pair<std::string, std::string>> options;
  for (const Option& option : create->options) options.emplace_back(option.key, option.value);
  std::vector<std::pair<std::string, std::string>> expected = {
      {"connector", "kafka"},
      {"properties.bootstrap.server", "localhost:9092"},
      {"properties.group.id", "g1"},
      {"fields.id.kind", "sequence"},
      {"partitions", "4"},
      {"offset", "-12"},
      {"ratio", "0.5"},
      {"enabled", "true"},
      {"other", "false"},
      {"Mixed", "x"},
  };
  EXPECT_EQ(options, expected);
  EXPECT_EQ(create->options[0].position, static_cast<int>(create->text.find("connector")) + 1);
  EXPECT_EQ(create->format, "json");
}

TEST(ParserCreateStreamTest, Minimal) {
  auto create = ParseOne<CreateStreamStatement>("create stream s (a int)");
  ASSERT_NE(create, nullptr);
  EXPECT_FALSE(create->if_not_exists);
  EXPECT_EQ(create->name, (QualifiedName{"s"}));
  ASSERT_EQ(create->columns.size(), 1u);
  EXPECT_TRUE(create->options.empty());
  EXPECT_EQ(create->format, "");
  EXPECT_EQ(create->text, "create stream s (a int)");
}

TEST(ParserCreateStreamTest, FormatBeforeWithAndQuotedFormat) {
  auto create = ParseOne<CreateStreamStatement>(
      "CREATE STREAM s (a int) FORMAT 'Avro' WITH (topic = orders)");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->format, "avro");
  ASSERT_EQ(create->options.size(), 1u);
  EXPECT_EQ(create->options[0].key, "topic");
  EXPECT_EQ(create->options[0].value, "orders");
}

TEST(ParserCreateStreamTest, KeywordNamesForStreamsAndColumns) {
  auto create = ParseOne<CreateStreamStatement>("CREATE STREAM stream (if int, exists int)");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->name, (QualifiedName{"stream"}));
  EXPECT_FALSE(create->if_not_exists);
  EXPECT_EQ(create->columns[0].name, "if");
  EXPECT_EQ(create->columns[1].name, "exists");
}

TEST(ParserCreateStreamTest, Errors) {
  EXPECT_SYNTAX_ERROR("CREATE STREAM s ()", "syntax error at or near \")\"", 18);
  EXPECT_SYNTAX_ERROR("CREATE STREAM s (a)", "syntax error at or near \")\"", 19);
  EXPECT_SYNTAX_ERROR("CREATE STREAM s (a int) WITH (x = )", "syntax error at or near \")\"", 35);
  EXPECT_SYNTAX_ERROR("CREATE STREAM s (a int NOT NULL NULL)",
                      "conflicting NULL/NOT NULL declarations for column \"a\"", 33);
  EXPECT_SYNTAX_ERROR("CREATE STREAM s (a varchar(99999999999999999999))",
                      "syntax error at or near \"99999999999999999999\"", 28);
  EXPECT_SYNTAX_ERROR("CREATE STREAM s (a int) FORMAT json FORMAT avro",
                      "syntax error at or near \"FORMAT\"", 37);
}

// --- CREATE MATERIALIZED VIEW -----------------------------------------------------------

TEST(ParserCreateMaterializedViewTest, Basic) {
  std::string sql =
      "CREATE MATERIALIZED VIEW IF NOT EXISTS mv AS SELECT k, count(*) FROM s GROUP BY k";
  auto create = ParseOne<CreateMaterializedViewStatement>(sql);
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->kind, StatementKind::kCreateMaterializedView);
  EXPECT_TRUE(create->if_not_exists);
  EXPECT_EQ(create->name, (QualifiedName{"mv"}));
  EXPECT_EQ(create->text, sql);
  ASSERT_NE(create->query, nullptr);
  EXPECT_EQ(create->query->text, "SELECT k, count(*) FROM s GROUP BY k");
  EXPECT_EQ(create->query->position, 46);
  EXPECT_EQ(create->query->items.size(), 2u);
  EXPECT_EQ(create->query->group_by.size(), 1u);
}

TEST(ParserCreateMaterializedViewTest, ParenthesizedQuery) {
  auto create = ParseOne<CreateMaterializedViewStatement>(
      "create materialized view s.mv as (select * from t)");
  ASSERT_NE(create, nullptr);
  EXPECT_FALSE(create->if_not_exists);
  EXPECT_EQ(create->name, (QualifiedName{"s", "mv"}));
  EXPECT_EQ(create->query->text, "select * from t");
  EXPECT_EQ(create->query->position, 35);
}

// --- CREATE TABLE -----------------------------------------------------------------------

TEST(ParserCreateTableTest, Full) {
  std::string sql =
      "CREATE TABLE IF NOT EXISTS public.Orders (id bigint NOT NULL PRIMARY KEY, "
      "name varchar(20) NULL, amount double precision) APPEND ONLY "
      "WITH (connector = 'datagen', rows.per.second = 10)";
  auto create = ParseOne<CreateTableStatement>(sql);
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->kind, StatementKind::kCreateTable);
  EXPECT_EQ(create->position, 1);
  EXPECT_EQ(create->text, sql);
  EXPECT_TRUE(create->if_not_exists);
  EXPECT_EQ(create->name, (QualifiedName{"public", "orders"}));
  ASSERT_EQ(create->columns.size(), 3u);
  const ColumnDef& id = create->columns[0];
  EXPECT_EQ(id.name, "id");
  EXPECT_EQ(ToString(id.type), "bigint");
  EXPECT_TRUE(id.not_null);
  EXPECT_TRUE(id.primary_key);
  EXPECT_EQ(id.position, 43);
  EXPECT_EQ(id.type.position, 46);
  EXPECT_EQ(create->columns[1].name, "name");
  EXPECT_EQ(ToString(create->columns[1].type), "varchar(20)");
  EXPECT_FALSE(create->columns[1].not_null);
  EXPECT_FALSE(create->columns[1].primary_key);
  EXPECT_EQ(create->columns[1].position, static_cast<int>(sql.find("name")) + 1);
  EXPECT_EQ(ToString(create->columns[2].type), "double precision");
  EXPECT_FALSE(create->columns[2].primary_key);
  EXPECT_EQ(create->primary_key, (std::vector<std::string>{"id"}));
  EXPECT_EQ(create->primary_key_position, 62);
  EXPECT_EQ(create->primary_key_position, static_cast<int>(sql.find("PRIMARY")) + 1);
  EXPECT_TRUE(create->append_only);
  ASSERT_EQ(create->options.size(), 2u);
  EXPECT_EQ(create->options[0].key, "connector");
  EXPECT_EQ(create->options[0].value, "datagen");
  EXPECT_EQ(create->options[0].position, static_cast<int>(sql.find("connector")) + 1);
  EXPECT_EQ(create->options[1].key, "rows.per.second");
  EXPECT_EQ(create->options[1].value, "10");
}

TEST(ParserCreateTableTest, Minimal) {
  auto create = ParseOne<CreateTableStatement>("create table t (a int)");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->text, "create table t (a int)");
  EXPECT_FALSE(create->if_not_exists);
  EXPECT_EQ(create->name, (QualifiedName{"t"}));
  ASSERT_EQ(create->columns.size(), 1u);
  EXPECT_FALSE(create->columns[0].not_null);
  EXPECT_FALSE(create->columns[0].primary_key);
  EXPECT_TRUE(create->primary_key.empty());
  EXPECT_EQ(create->primary_key_position, 0);
  EXPECT_FALSE(create->append_only);
  EXPECT_TRUE(create->options.empty());
}

TEST(ParserCreateTableTest, TableLevelPrimaryKey) {
  //                    1234567890123456789012345678901234567890123456789012345678
  std::string sql = "CREATE TABLE t (a int, b text NOT NULL, \"C\" int, PRIMARY KEY (b, A, \"C\"))";
  auto create = ParseOne<CreateTableStatement>(sql);
  ASSERT_NE(create, nullptr);
  ASSERT_EQ(create->columns.size(), 3u);
  EXPECT_EQ(create->columns[2].name, "C");
  for (const ColumnDef& column : create->columns) EXPECT_FALSE(column.primary_key);
  EXPECT_TRUE(create->columns[1].not_null);
  // In the written order, not the column order; names are folded like any identifier.
  EXPECT_EQ(create->primary_key, (std::vector<std::string>{"b", "a", "C"}));
  EXPECT_EQ(create->primary_key_position, 50);
  EXPECT_FALSE(create->append_only);
  // A table constraint may come anywhere among the columns, and a quoted name differs from the
  // folded one.
  auto first = ParseOne<CreateTableStatement>(
      "CREATE TABLE t (PRIMARY KEY (\"A\", a), a int, \"A\" int) WITH (x = 1)");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->primary_key, (std::vector<std::string>{"A", "a"}));
  EXPECT_EQ(first->primary_key_position, 17);
  EXPECT_EQ(first->columns.size(), 2u);
  EXPECT_EQ(first->options.size(), 1u);
}

TEST(ParserCreateTableTest, ColumnConstraintsInAnyOrder) {
  auto create = ParseOne<CreateTableStatement>(
      "CREATE TABLE t (a int PRIMARY KEY NOT NULL, b int NULL, c int NOT NULL, d int, "
      "e text NULL NULL)");
  ASSERT_NE(create, nullptr);
  ASSERT_EQ(create->columns.size(), 5u);
  EXPECT_TRUE(create->columns[0].primary_key);
  EXPECT_TRUE(create->columns[0].not_null);
  EXPECT_FALSE(create->columns[1].not_null);
  EXPECT_TRUE(create->columns[2].not_null);
  EXPECT_FALSE(create->columns[3].not_null);
  EXPECT_FALSE(create->columns[4].not_null);
  EXPECT_EQ(create->primary_key, (std::vector<std::string>{"a"}));
  EXPECT_EQ(create->primary_key_position, 23);

  auto null_key = ParseOne<CreateTableStatement>("CREATE TABLE t (x int, k text NULL PRIMARY KEY)");
  ASSERT_NE(null_key, nullptr);
  EXPECT_TRUE(null_key->columns[1].primary_key);
  EXPECT_FALSE(null_key->columns[1].not_null);
  EXPECT_EQ(null_key->primary_key, (std::vector<std::string>{"k"}));
  EXPECT_EQ(null_key->primary_key_position, 36);
}

TEST(ParserCreateTableTest, AppendOnlyWithoutOptions) {
  auto create = ParseOne<CreateTableStatement>("CREATE TABLE t (a int) append only");
  ASSERT_NE(create, nullptr);
  EXPECT_TRUE(create->append_only);
  EXPECT_TRUE(create->options.empty());
  EXPECT_EQ(create->text, "CREATE TABLE t (a int) append only");
}

TEST(ParserCreateTableTest, MultiplePrimaryKeys) {
  // At the second PRIMARY KEY, as PostgreSQL reports it; the table name is unqualified.
  EXPECT_SQL_ERROR("CREATE TABLE t (a int PRIMARY KEY, b int PRIMARY KEY)", "42P16",
                   "multiple primary keys for table \"t\" are not allowed", 42);
  EXPECT_SQL_ERROR("CREATE TABLE s.T (a int PRIMARY KEY, PRIMARY KEY (a))", "42P16",
                   "multiple primary keys for table \"t\" are not allowed", 38);
  EXPECT_SQL_ERROR("CREATE TABLE t (a int, PRIMARY KEY (a), PRIMARY KEY (a))", "42P16",
                   "multiple primary keys for table \"t\" are not allowed", 41);
  EXPECT_SQL_ERROR("CREATE TABLE t (a int PRIMARY KEY PRIMARY KEY)", "42P16",
                   "multiple primary keys for table \"t\" are not allowed", 35);
  EXPECT_SQL_ERROR("CREATE TABLE t (PRIMARY KEY (a), a int PRIMARY KEY)", "42P16",
                   "multiple primary keys for table \"t\" are not allowed", 40);
  std::string quoted = "CREATE TABLE \"My T\" (a int, PRIMARY KEY (a), PRIMARY KEY (a))";
  EXPECT_SQL_ERROR(quoted, "42P16", "multiple primary keys for table \"My T\" are not allowed",
                   static_cast<int>(quoted.rfind("PRIMARY")) + 1);
  // Column definitions are checked before the keys, as in PostgreSQL.
  EXPECT_SYNTAX_ERROR("CREATE TABLE t (a int PRIMARY KEY, b int PRIMARY KEY, c int NULL NOT NULL)",
                      "conflicting NULL/NOT NULL declarations for column \"c\"", 66);
}

TEST(ParserCreateTableTest, ColumnTwiceInPrimaryKey) {
  // At the PRIMARY KEY clause, as PostgreSQL reports it.
  EXPECT_SQL_ERROR("CREATE TABLE t (a int, b int, PRIMARY KEY (a, b, A))", "42701",
                   "column \"a\" appears twice in primary key constraint", 31);
  EXPECT_SQL_ERROR("CREATE TABLE t (\"X\" int, PRIMARY KEY (\"X\", \"X\"))", "42701",
                   "column \"X\" appears twice in primary key constraint", 26);
  // The first key is checked completely before the second one is looked at.
  EXPECT_SQL_ERROR("CREATE TABLE t (a int, PRIMARY KEY (a, a), PRIMARY KEY (a))", "42701",
                   "column \"a\" appears twice in primary key constraint", 24);
}

TEST(ParserCreateTableTest, SyntaxErrors) {
  EXPECT_SYNTAX_ERROR("CREATE TABLE t ()", "syntax error at or near \")\"", 17);
  EXPECT_SYNTAX_ERROR("CREATE TABLE t (a int) APPEND", "syntax error at end of input", 30);
  EXPECT_SYNTAX_ERROR("CREATE TABLE t (a int) WITH (x = 1) APPEND ONLY",
                      "syntax error at or near \"APPEND\"", 37);
  EXPECT_SYNTAX_ERROR("CREATE TABLE t (a int) FORMAT json", "syntax error at or near \"FORMAT\"",
                      24);
  EXPECT_SYNTAX_ERROR("CREATE TABLE t (a int, PRIMARY KEY ())", "syntax error at or near \")\"",
                      37);
  EXPECT_SYNTAX_ERROR("CREATE TABLE t (a int, PRIMARY KEY a)", "syntax error at or near \"a\"", 36);
  EXPECT_SYNTAX_ERROR("CREATE TABLE t (a int NOT NULL NULL)",
                      "conflicting NULL/NOT NULL declarations for column \"a\"", 32);
}

// --- CREATE SINK ------------------------------------------------------------------------

std::vector<std::pair<std::string, std::string>> OptionPairs(const std::vector<Option>& options) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const Option& option : options) pairs.emplace_back(option.key, option.value);
  return pairs;
}

TEST(ParserCreateSinkTest, FromWithOptionsAndFormat) {
  std::string sql =
      "CREATE SINK IF NOT EXISTS public.Orders_Sink FROM public.MV\n"
      "WITH (connector = 'kafka', properties.bootstrap.server = 'localhost:9092',\n"
      "      'primary_key' = 'id,ts', primary_key = id, type = 'upsert',\n"
      "      properties.retry.backoff.ms = 100)\n"
      "FORMAT PLAIN";
  auto create = ParseOne<CreateSinkStatement>(sql);
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->kind, StatementKind::kCreateSink);
  EXPECT_EQ(create->position, 1);
  EXPECT_EQ(create->text, sql);
  EXPECT_TRUE(create->if_not_exists);
  EXPECT_EQ(create->name, (QualifiedName{"public", "orders_sink"}));
  ASSERT_TRUE(create->from.has_value());
  EXPECT_EQ(*create->from, (QualifiedName{"public", "mv"}));
  EXPECT_EQ(create->from_position, static_cast<int>(sql.find("public.MV")) + 1);
  EXPECT_EQ(create->query, nullptr);
  std::vector<std::pair<std::string, std::string>> expected = {
      {"connector", "kafka"},   {"properties.bootstrap.server", "localhost:9092"},
      {"primary_key", "id,ts"}, {"primary_key", "id"},
      {"type", "upsert"},       {"properties.retry.backoff.ms", "100"},
  };
  EXPECT_EQ(OptionPairs(create->options), expected);
  EXPECT_EQ(create->options[2].position, static_cast<int>(sql.find("'primary_key'")) + 1);
  EXPECT_EQ(create->format, "plain");
}

TEST(ParserCreateSinkTest, FromMinimalAndFormatBeforeWith) {
  auto minimal = ParseOne<CreateSinkStatement>("create sink s from t");
  ASSERT_NE(minimal, nullptr);
  EXPECT_FALSE(minimal->if_not_exists);
  EXPECT_EQ(minimal->name, (QualifiedName{"s"}));
  EXPECT_EQ(minimal->from, (QualifiedName{"t"}));
  EXPECT_EQ(minimal->from_position, 20);
  EXPECT_TRUE(minimal->options.empty());
  EXPECT_EQ(minimal->format, "");
  EXPECT_EQ(minimal->text, "create sink s from t");

  auto create =
      ParseOne<CreateSinkStatement>("CREATE SINK s FROM t FORMAT 'Json' WITH (topic = orders)");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->format, "json");
  EXPECT_EQ(OptionPairs(create->options),
            (std::vector<std::pair<std::string, std::string>>{{"topic", "orders"}}));
  auto format_only = ParseOne<CreateSinkStatement>("CREATE SINK s FROM t FORMAT upsert");
  ASSERT_NE(format_only, nullptr);
  EXPECT_EQ(format_only->format, "upsert");
  EXPECT_TRUE(format_only->options.empty());
}

TEST(ParserCreateSinkTest, AsQuery) {
  std::string sql =
      "CREATE SINK IF NOT EXISTS s WITH (connector = 'blackhole', 'primary_key' = 'a') "
      "FORMAT json AS SELECT a, count(*) FROM t WHERE a > 1 GROUP BY a";
  auto create = ParseOne<CreateSinkStatement>(sql);
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->kind, StatementKind::kCreateSink);
  EXPECT_EQ(create->text, sql);
  EXPECT_TRUE(create->if_not_exists);
  EXPECT_EQ(create->name, (QualifiedName{"s"}));
  EXPECT_FALSE(create->from.has_value());
  EXPECT_EQ(create->from_position, 0);
  std::vector<std::pair<std::string, std::string>> expected = {{"connector", "blackhole"},
                                                               {"primary_key", "a"}};
  EXPECT_EQ(OptionPairs(create->options), expected);
  EXPECT_EQ(create->format, "json");
  ASSERT_NE(create->query, nullptr);
  EXPECT_EQ(create->query->text, "SELECT a, count(*) FROM t WHERE a > 1 GROUP BY a");
  EXPECT_EQ(create->query->position, static_cast<int>(sql.find("SELECT")) + 1);
  ASSERT_EQ(create->query->items.size(), 2u);
  EXPECT_EQ(ToString(create->query->items[1].expr.get()), "count(*)");
  EXPECT_EQ(create->query->from->name, (QualifiedName{"t"}));
  EXPECT_EQ(ToString(create->query->where.get()), "(> a 1)");
  EXPECT_EQ(create->query->group_by.size(), 1u);
}

TEST(ParserCreateSinkTest, AsQueryWithoutOrWithReorderedOptions) {
  auto minimal = ParseOne<CreateSinkStatement>("create sink s as select * from t");
  ASSERT_NE(minimal, nullptr);
  EXPECT_FALSE(minimal->if_not_exists);
  EXPECT_FALSE(minimal->from.has_value());
  EXPECT_TRUE(minimal->options.empty());
  EXPECT_EQ(minimal->format, "");
  ASSERT_NE(minimal->query, nullptr);
  EXPECT_EQ(minimal->query->text, "select * from t");

  auto reordered = ParseOne<CreateSinkStatement>(
      "CREATE SINK s FORMAT avro WITH (properties.x.y = 1) AS (SELECT 1 AS one)");
  ASSERT_NE(reordered, nullptr);
  EXPECT_EQ(reordered->format, "avro");
  EXPECT_EQ(OptionPairs(reordered->options),
            (std::vector<std::pair<std::string, std::string>>{{"properties.x.y", "1"}}));
  ASSERT_NE(reordered->query, nullptr);
  EXPECT_EQ(reordered->query->text, "SELECT 1 AS one");
  EXPECT_EQ(reordered->query->items[0].alias, "one");
}

TEST(ParserCreateSinkTest, KeywordNames) {
  auto sink = ParseOne<CreateSinkStatement>("CREATE SINK sink FROM explain");
  ASSERT_NE(sink, nullptr);
  EXPECT_EQ(sink->name, (QualifiedName{"sink"}));
  EXPECT_EQ(sink->from, (QualifiedName{"explain"}));
  // "if" is a name here: IF NOT EXISTS needs NOT next.
  auto if_name = ParseOne<CreateSinkStatement>("CREATE SINK if FROM pause.resume");
  ASSERT_NE(if_name, nullptr);
  EXPECT_FALSE(if_name->if_not_exists);
  EXPECT_EQ(if_name->name, (QualifiedName{"if"}));
  EXPECT_EQ(if_name->from, (QualifiedName{"pause", "resume"}));
  auto format_name =
      ParseOne<CreateSinkStatement>("CREATE SINK format FORMAT format AS SELECT sink FROM sink");
  ASSERT_NE(format_name, nullptr);
  EXPECT_EQ(format_name->name, (QualifiedName{"format"}));
  EXPECT_EQ(format_name->format, "format");
  ASSERT_NE(format_name->query, nullptr);
  EXPECT_EQ(format_name->query->from->name, (QualifiedName{"sink"}));
}

TEST(ParserCreateSinkTest, Errors) {
  EXPECT_SYNTAX_ERROR("CREATE SINK s", "syntax error at end of input", 14);
  EXPECT_SYNTAX_ERROR("CREATE SINK s WITH (connector = 'kafka')", "syntax error at end of input",
                      41);
  EXPECT_SYNTAX_ERROR("CREATE SINK s FORMAT json", "syntax error at end of input", 26);
  EXPECT_SYNTAX_ERROR("CREATE SINK s;", "syntax error at or near \";\"", 14);
  EXPECT_SYNTAX_ERROR("CREATE SINK s FROM t AS SELECT 1", "syntax error at or near \"AS\"", 22);
  EXPECT_SYNTAX_ERROR("CREATE SINK s FROM SELECT 1", "syntax error at or near \"SELECT\"", 20);
  EXPECT_SYNTAX_ERROR("CREATE SINK s AS SELECT 1 WITH (a = 1)", "syntax error at or near \"WITH\"",
                      27);
  EXPECT_SYNTAX_ERROR("CREATE SINK s FROM t FORMAT json FORMAT avro",
                      "syntax error at or near \"FORMAT\"", 34);
  EXPECT_SYNTAX_ERROR("CREATE SINK s FROM t WITH ()", "syntax error at or near \")\"", 28);
  // FROM is reserved, so it cannot be the sink's name.
  EXPECT_SYNTAX_ERROR("CREATE SINK FROM t", "syntax error at or near \"FROM\"", 13);
}

// --- INSERT -----------------------------------------------------------------------------

TEST(ParserInsertTest, ValuesWithColumns) {
  //                 1234567890123456789012345678901234567890123456789012345678901234567890
  std::string sql = "INSERT INTO public.t (a, \"B\", c) VALUES (1, 'x', a + 1), (2, NULL, -3)";
  auto insert = ParseOne<InsertStatement>(sql);
  ASSERT_NE(insert, nullptr);
  EXPECT_EQ(insert->kind, StatementKind::kInsert);
  EXPECT_EQ(insert->position, 1);
  EXPECT_EQ(insert->text, sql);
  EXPECT_EQ(insert->table, (QualifiedName{"public", "t"}));
  EXPECT_EQ(insert->table_position, 13);
  EXPECT_EQ(insert->columns, (std::vector<std::string>{"a", "B", "c"}));
  EXPECT_EQ(insert->column_positions, (std::vector<int>{23, 26, 31}));
  EXPECT_EQ(insert->query, nullptr);
  ASSERT_EQ(insert->values.size(), 2u);
  ASSERT_EQ(insert->values[0].size(), 3u);
  ASSERT_EQ(insert->values[1].size(), 3u);
  EXPECT_EQ(ToString(insert->values[0][0].get()), "1");
  EXPECT_EQ(ToString(insert->values[0][1].get()), "'x'");
  EXPECT_EQ(ToString(insert->values[0][2].get()), "(+ a 1)");
  EXPECT_EQ(ToString(insert->values[1][0].get()), "2");
  EXPECT_EQ(ToString(insert->values[1][1].get()), "NULL");
  EXPECT_EQ(ToString(insert->values[1][2].get()), "(- 3)");
  EXPECT_EQ(insert->values[0][0]->position, 42);
  EXPECT_EQ(insert->values[0][1]->position, 45);
  EXPECT_EQ(insert->values[0][2]->position, 50);
  EXPECT_EQ(static_cast<const BinaryExpr*>(insert->values[0][2].get())->right->position, 54);
  EXPECT_EQ(insert->values[1][0]->position, 59);
  EXPECT_EQ(insert->values[1][1]->position, 62);
  EXPECT_EQ(insert->values[1][2]->position, 68);
}

TEST(ParserInsertTest, ValuesWithoutColumns) {
  auto insert = ParseOne<InsertStatement>("insert into T values (1)");
  ASSERT_NE(insert, nullptr);
  EXPECT_EQ(insert->table, (QualifiedName{"t"}));
  EXPECT_TRUE(insert->columns.empty());
  EXPECT_TRUE(insert->column_positions.empty());
  ASSERT_EQ(insert->values.size(), 1u);
  ASSERT_EQ(insert->values[0].size(), 1u);
  EXPECT_EQ(ToString(insert->values[0][0].get()), "1");
  EXPECT_EQ(insert->query, nullptr);
}

TEST(ParserInsertTest, ManyRows) {
  std::string sql = "INSERT INTO t VALUES (0, 'r0')";
  for (int i = 1; i < 1000; ++i) {
    sql += ", (" + std::to_string(i) + ", 'r" + std::to_string(i) + "')";
  }
  auto insert = ParseOne<InsertStatement>(sql);
  ASSERT_NE(insert, nullptr);
  ASSERT_EQ(insert->values.size(), 1000u);
  EXPECT_EQ(ToString(insert->values[999][0].get()), "999");
  EXPECT_EQ(ToString(insert->values[999][1].get()), "'r999'");
  EXPECT_EQ(insert->values[999][1]->position, static_cast<int>(sql.rfind("'r999'")) + 1);
}

TEST(ParserInsertTest, Select) {
  //                 123456789012345
  std::string sql = "INSERT INTO t SELECT a, b FROM s WHERE a > 1";
  auto insert = ParseOne<InsertStatement>(sql);
  ASSERT_NE(insert, nullptr);
  EXPECT_EQ(insert->text, sql);
  EXPECT_TRUE(insert->columns.empty());
  EXPECT_TRUE(insert->values.empty());
  ASSERT_NE(insert->query, nullptr);
  EXPECT_EQ(insert->query->position, 15);
  EXPECT_EQ(insert->query->text, "SELECT a, b FROM s WHERE a > 1");
  EXPECT_EQ(insert->query->items.size(), 2u);
  ASSERT_TRUE(insert->query->from.has_value());
  EXPECT_EQ(insert->query->from->name, (QualifiedName{"s"}));
  EXPECT_EQ(ToString(insert->query->where.get()), "(> a 1)");
}

TEST(ParserInsertTest, ParenthesizedSelect) {
  //                 12345678901234567890
  std::string sql = "INSERT INTO t (a) (SELECT 1)";
  auto with_columns = ParseOne<InsertStatement>(sql);
  ASSERT_NE(with_columns, nullptr);
  EXPECT_EQ(with_columns->text, sql);
  EXPECT_EQ(with_columns->columns, (std::vector<std::string>{"a"}));
  EXPECT_EQ(with_columns->column_positions, (std::vector<int>{16}));
  EXPECT_TRUE(with_columns->values.empty());
  ASSERT_NE(with_columns->query, nullptr);
  EXPECT_EQ(with_columns->query->text, "SELECT 1");
  EXPECT_EQ(with_columns->query->position, 20);

  auto bare = ParseOne<InsertStatement>("INSERT INTO t ((SELECT x FROM s))");
  ASSERT_NE(bare, nullptr);
  EXPECT_TRUE(bare->columns.empty());
  ASSERT_NE(bare->query, nullptr);
  EXPECT_EQ(bare->query->text, "SELECT x FROM s");
  EXPECT_EQ(bare->query->position, 17);
}

TEST(ParserInsertTest, Errors) {
  EXPECT_SYNTAX_ERROR("INSERT INTO t VALUES ()", "syntax error at or near \")\"", 23);
  EXPECT_SYNTAX_ERROR("INSERT t VALUES (1)", "syntax error at or near \"t\"", 8);
  EXPECT_SYNTAX_ERROR("INSERT INTO t VALUES (1),", "syntax error at end of input", 26);
  EXPECT_SYNTAX_ERROR("INSERT INTO t VALUES (1) (2)", "syntax error at or near \"(\"", 26);
  EXPECT_SYNTAX_ERROR("INSERT INTO t (a) VALUES", "syntax error at end of input", 25);
  EXPECT_SYNTAX_ERROR("INSERT INTO t ()", "syntax error at or near \")\"", 16);
  EXPECT_SYNTAX_ERROR("INSERT INTO t", "syntax error at end of input", 14);
  EXPECT_SYNTAX_ERROR("INSERT INTO t VALUES 1", "syntax error at or near \"1\"", 22);
}

// --- UPDATE -----------------------------------------------------------------------------

TEST(ParserUpdateTest, AliasAssignmentsAndWhere) {
  //                 1234567890123456789012345678901234567890123456789012345678901234567890
  std::string sql =
      "UPDATE public.t AS x SET a = a + 1, \"B\" = 'y', update = NULL WHERE x.id = 3 AND "
      "delete IS NULL";
  auto update = ParseOne<UpdateStatement>(sql);
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->kind, StatementKind::kUpdate);
  EXPECT_EQ(update->position, 1);
  EXPECT_EQ(update->text, sql);
  EXPECT_EQ(update->table.name, (QualifiedName{"public", "t"}));
  EXPECT_EQ(update->table.alias, "x");
  EXPECT_EQ(update->table.position, 8);
  ASSERT_EQ(update->assignments.size(), 3u);
  EXPECT_EQ(update->assignments[0].column, "a");
  EXPECT_EQ(update->assignments[0].position, 26);
  EXPECT_EQ(ToString(update->assignments[0].value.get()), "(+ a 1)");
  EXPECT_EQ(update->assignments[0].value->position, 30);
  EXPECT_EQ(update->assignments[1].column, "B");
  EXPECT_EQ(update->assignments[1].position, 37);
  EXPECT_EQ(ToString(update->assignments[1].value.get()), "'y'");
  EXPECT_EQ(update->assignments[1].value->position, 43);
  EXPECT_EQ(update->assignments[2].column, "update");
  EXPECT_EQ(update->assignments[2].position, 48);
  EXPECT_EQ(ToString(update->assignments[2].value.get()), "NULL");
  EXPECT_EQ(update->assignments[2].value->position, 57);
  EXPECT_EQ(ToString(update->where.get()), "(AND (= x.id 3) (delete IS NULL))");
  EXPECT_EQ(update->where->position, 68);
}

TEST(ParserUpdateTest, Minimal) {
  auto update = ParseOne<UpdateStatement>("update t set a = 1");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->text, "update t set a = 1");
  EXPECT_EQ(update->table.name, (QualifiedName{"t"}));
  EXPECT_EQ(update->table.alias, "");
  EXPECT_EQ(update->table.position, 8);
  ASSERT_EQ(update->assignments.size(), 1u);
  EXPECT_EQ(update->assignments[0].column, "a");
  EXPECT_EQ(update->where, nullptr);
}

TEST(ParserUpdateTest, BareAliasAndSetAsAName) {
  auto bare = ParseOne<UpdateStatement>("UPDATE t x SET b = x.b * 2, c = DEFAULT_VALUE()");
  ASSERT_NE(bare, nullptr);
  EXPECT_EQ(bare->table.alias, "x");
  ASSERT_EQ(bare->assignments.size(), 2u);
  EXPECT_EQ(ToString(bare->assignments[0].value.get()), "(* x.b 2)");
  EXPECT_EQ(ToString(bare->assignments[1].value.get()), "default_value()");
  // SET is not reserved: a column named "set" needs no alias to be told apart.
  auto set_column = ParseOne<UpdateStatement>("UPDATE t SET set = set + 1");
  ASSERT_NE(set_column, nullptr);
  EXPECT_EQ(set_column->table.alias, "");
  ASSERT_EQ(set_column->assignments.size(), 1u);
  EXPECT_EQ(set_column->assignments[0].column, "set");
  EXPECT_EQ(ToString(set_column->assignments[0].value.get()), "(+ set 1)");
  auto set_alias = ParseOne<UpdateStatement>("UPDATE t AS set SET a = set.a");
  ASSERT_NE(set_alias, nullptr);
  EXPECT_EQ(set_alias->table.alias, "set");
  EXPECT_EQ(ToString(set_alias->assignments[0].value.get()), "set.a");
}

TEST(ParserUpdateTest, Errors) {
  EXPECT_SYNTAX_ERROR("UPDATE t SET a", "syntax error at end of input", 15);
  EXPECT_SYNTAX_ERROR("UPDATE t WHERE a = 1", "syntax error at or near \"WHERE\"", 10);
  EXPECT_SYNTAX_ERROR("UPDATE t SET a = 1 WHERE", "syntax error at end of input", 25);
  EXPECT_SYNTAX_ERROR("UPDATE t SET a = 1,", "syntax error at end of input", 20);
  EXPECT_SYNTAX_ERROR("UPDATE t SET t.a = 1", "syntax error at or near \".\"", 15);
  EXPECT_SYNTAX_ERROR("UPDATE t SET a == 1", "syntax error at or near \"=\"", 17);
  EXPECT_SYNTAX_ERROR("UPDATE SET a = 1", "syntax error at or near \"=\"", 14);
}

// --- DELETE -----------------------------------------------------------------------------

TEST(ParserDeleteTest, AliasAndWhere) {
  //                 1234567890123456789012345678
  std::string sql = "DELETE FROM s.t AS x WHERE x.a > 1";
  auto delete_statement = ParseOne<DeleteStatement>(sql);
  ASSERT_NE(delete_statement, nullptr);
  EXPECT_EQ(delete_statement->kind, StatementKind::kDelete);
  EXPECT_EQ(delete_statement->position, 1);
  EXPECT_EQ(delete_statement->text, sql);
  EXPECT_EQ(delete_statement->table.name, (QualifiedName{"s", "t"}));
  EXPECT_EQ(delete_statement->table.alias, "x");
  EXPECT_EQ(delete_statement->table.position, 13);
  EXPECT_EQ(ToString(delete_statement->where.get()), "(> x.a 1)");
  EXPECT_EQ(delete_statement->where->position, 28);
}

TEST(ParserDeleteTest, Minimal) {
  auto all_rows = ParseOne<DeleteStatement>("delete from T");
  ASSERT_NE(all_rows, nullptr);
  EXPECT_EQ(all_rows->table.name, (QualifiedName{"t"}));
  EXPECT_EQ(all_rows->table.alias, "");
  EXPECT_EQ(all_rows->where, nullptr);
  auto bare_alias = ParseOne<DeleteStatement>("DELETE FROM t x WHERE x.a IN (1, 2)");
  ASSERT_NE(bare_alias, nullptr);
  EXPECT_EQ(bare_alias->table.alias, "x");
  EXPECT_EQ(ToString(bare_alias->where.get()), "(x.a IN (1, 2))");
}

TEST(ParserDeleteTest, Errors) {
  EXPECT_SYNTAX_ERROR("DELETE t", "syntax error at or near \"t\"", 8);
  EXPECT_SYNTAX_ERROR("DELETE FROM", "syntax error at end of input", 12);
  EXPECT_SYNTAX_ERROR("DELETE FROM t WHERE", "syntax error at end of input", 20);
  EXPECT_SYNTAX_ERROR("DELETE FROM t x y", "syntax error at or near \"y\"", 17);
}

// --- Data manipulation together ---------------------------------------------------------

TEST(ParserDmlTest, ScriptOfStatements) {
  std::string sql = "INSERT INTO t VALUES (1); UPDATE t SET a = 2;DELETE FROM t ;";
  std::vector<StatementPtr> statements = Parse(sql);
  ASSERT_EQ(statements.size(), 3u);
  EXPECT_EQ(statements[0]->kind, StatementKind::kInsert);
  EXPECT_EQ(statements[0]->text, "INSERT INTO t VALUES (1)");
  EXPECT_EQ(statements[0]->position, 1);
  EXPECT_EQ(statements[1]->kind, StatementKind::kUpdate);
  EXPECT_EQ(statements[1]->text, "UPDATE t SET a = 2");
  EXPECT_EQ(statements[1]->position, 27);
  EXPECT_EQ(statements[2]->kind, StatementKind::kDelete);
  EXPECT_EQ(statements[2]->text, "DELETE FROM t");
  EXPECT_EQ(statements[2]->position, 46);
}

TEST(ParserDmlTest, NewKeywordsAreStillNames) {
  // INSERT, UPDATE, DELETE, VALUES and APPEND are not reserved, as in PostgreSQL.
  auto select = ParseSelect(
      "SELECT insert, update, delete, values, append, set FROM values update "
      "WHERE update > delete ORDER BY insert");
  ASSERT_NE(select, nullptr);
  std::vector<std::string> names;
  for (const SelectItem& item : select->items) names.push_back(ToString(item.expr.get()));
  EXPECT_EQ(Join(names, ","), "insert,update,delete,values,append,set");
  EXPECT_EQ(select->from->name, (QualifiedName{"values"}));
  EXPECT_EQ(select->from->alias, "update");
  EXPECT_EQ(ToString(select->where.get()), "(> update delete)");
  auto aliases = ParseSelect("SELECT 1 insert, 2 delete, 3 AS update");
  ASSERT_NE(aliases, nullptr);
  EXPECT_EQ(aliases->items[0].alias, "insert");
  EXPECT_EQ(aliases->items[1].alias, "delete");
  EXPECT_EQ(aliases->items[2].alias, "update");

  // Statements that begin with SET, SHOW or RESET keep their meaning.
  auto set = ParseOne<SetVariableStatement>("SET update = 1");
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->name, "update");
  EXPECT_EQ(set->values, (std::vector<std::string>{"1"}));
  auto set_values = ParseOne<SetVariableStatement>("SET x TO values");
  ASSERT_NE(set_values, nullptr);
  EXPECT_EQ(set_values->values, (std::vector<std::string>{"values"}));
  auto show = ParseOne<ShowVariableStatement>("SHOW delete");
  ASSERT_NE(show, nullptr);
  EXPECT_EQ(show->name, "delete");
  EXPECT_NE(ParseOne<ResetVariableStatement>("RESET insert"), nullptr);

  auto create = ParseOne<CreateTableStatement>(
      "CREATE TABLE append (insert int, update int, delete int, values int, append int, "
      "set int, key int, primary key (update, set))");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->name, (QualifiedName{"append"}));
  std::vector<std::string> columns;
  for (const ColumnDef& column : create->columns) columns.push_back(column.name);
  EXPECT_EQ(Join(columns, ","), "insert,update,delete,values,append,set,key");
  EXPECT_EQ(create->primary_key, (std::vector<std::string>{"update", "set"}));
  EXPECT_FALSE(create->append_only);

  auto insert = ParseOne<InsertStatement>("INSERT INTO update (delete, values) VALUES (1, 2)");
  ASSERT_NE(insert, nullptr);
  EXPECT_EQ(insert->table, (QualifiedName{"update"}));
  EXPECT_EQ(insert->columns, (std::vector<std::string>{"delete", "values"}));
  EXPECT_EQ(insert->values.size(), 1u);

  auto update = ParseOne<UpdateStatement>("UPDATE delete SET update = values + 1 WHERE insert");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->table.name, (QualifiedName{"delete"}));
  EXPECT_EQ(update->table.alias, "");
  EXPECT_EQ(update->assignments[0].column, "update");
  EXPECT_EQ(ToString(update->assignments[0].value.get()), "(+ values 1)");
  EXPECT_EQ(ToString(update->where.get()), "insert");

  auto delete_statement = ParseOne<DeleteStatement>("DELETE FROM insert values WHERE append");
  ASSERT_NE(delete_statement, nullptr);
  EXPECT_EQ(delete_statement->table.name, (QualifiedName{"insert"}));
  EXPECT_EQ(delete_statement->table.alias, "values");
  EXPECT_EQ(ToString(delete_statement->where.get()), "append");
}

TEST(ParserDmlTest, IntoAndOnlyAreReserved) {
  // As in PostgreSQL; after AS any word will do.
  EXPECT_SYNTAX_ERROR("SELECT into FROM t", "syntax error at or near \"into\"", 8);
  EXPECT_SYNTAX_ERROR("CREATE TABLE into (a int)", "syntax error at or near \"into\"", 14);
  EXPECT_SYNTAX_ERROR("CREATE TABLE t (only int)", "syntax error at or near \"only\"", 17);
  auto select = ParseSelect("SELECT 1 AS into, 2 AS only");
  ASSERT_NE(select, nullptr);
  EXPECT_EQ(select->items[0].alias, "into");
  EXPECT_EQ(select->items[1].alias, "only");
}

// --- DROP / SHOW ------------------------------------------------------------------------

TEST(ParserDropTest, AllKinds) {
  struct Case {
    const char* sql;
    ObjectKind kind;
    bool if_exists;
    bool cascade;
    QualifiedName name;
  };
  std::vector<Case> cases = {
      {"DROP STREAM s", ObjectKind::kStream, false, false, {"s"}},
      {"drop materialized view if exists a.mv cascade",
       ObjectKind::kMaterializedView,
       true,
       true,
       {"a", "mv"}},
      {"DROP TABLE t RESTRICT", ObjectKind::kTable, false, false, {"t"}},
      {"DROP SINK IF EXISTS k", ObjectKind::kSink, true, false, {"k"}},
      {"DROP VIEW \"V\" CASCADE", ObjectKind::kView, false, true, {"V"}},
  };
  for (const Case& c : cases) {
    auto drop = ParseOne<DropStatement>(c.sql);
    ASSERT_NE(drop, nullptr) << c.sql;
    EXPECT_EQ(drop->kind, StatementKind::kDrop);
    EXPECT_EQ(drop->object_kind, c.kind) << c.sql;
    EXPECT_EQ(drop->if_exists, c.if_exists) << c.sql;
    EXPECT_EQ(drop->cascade, c.cascade) << c.sql;
    EXPECT_EQ(drop->name, c.name) << c.sql;
    EXPECT_EQ(drop->text, c.sql);
  }
  EXPECT_SYNTAX_ERROR("DROP INDEX i", "syntax error at or near \"INDEX\"", 6);
  EXPECT_SYNTAX_ERROR("DROP STREAM", "syntax error at end of input", 12);
}

TEST(ParserShowTest, Objects) {
  std::vector<std::pair<const char*, ObjectKind>> cases = {
      {"SHOW STREAMS", ObjectKind::kStream},
      {"show materialized views", ObjectKind::kMaterializedView},
      {"SHOW TABLES", ObjectKind::kTable},
      {"SHOW SINKS", ObjectKind::kSink},
      {"SHOW VIEWS", ObjectKind::kView},
  };
  for (const auto& [sql, kind] : cases) {
    auto show = ParseOne<ShowObjectsStatement>(sql);
    ASSERT_NE(show, nullptr) << sql;
    EXPECT_EQ(show->kind, StatementKind::kShowObjects);
    EXPECT_EQ(show->object_kind, kind) << sql;
  }
}

TEST(ParserShowTest, JobsAndCheckpoints) {
  for (const auto& [sql, table] : std::vector<std::pair<const char*, const char*>>{
           {"SHOW JOBS", "jobs"}, {"show checkpoints", "checkpoints"}}) {
    auto show = ParseOne<ShowSystemTableStatement>(sql);
    ASSERT_NE(show, nullptr) << sql;
    EXPECT_EQ(show->kind, StatementKind::kShowSystemTable);
    EXPECT_EQ(show->table, table);
  }
  // Other names stay settings.
  EXPECT_NE(ParseOne<ShowVariableStatement>("SHOW jobs_x"), nullptr);
}

TEST(ParserShowTest, Variables) {
  std::vector<std::pair<const char*, const char*>> cases = {
      {"SHOW server_version", "server_version"},
      {"SHOW Search_Path", "search_path"},
      {"SHOW \"TimeZone\"", "timezone"},
      {"SHOW ALL", "all"},
      {"SHOW TIME ZONE", "timezone"},
      {"show transaction isolation level", "transaction_isolation"},
      {"SHOW stave.checkpoint_interval", "stave.checkpoint_interval"},
      {"SHOW time", "time"},
      {"SHOW \"streams\"", "streams"},
  };
  for (const auto& [sql, name] : cases) {
    auto show = ParseOne<ShowVariableStatement>(sql);
    ASSERT_NE(show, nullptr) << sql;
    EXPECT_EQ(show->kind, StatementKind::kShowVariable);
    EXPECT_EQ(show->name, name) << sql;
  }
  EXPECT_SYNTAX_ERROR("SHOW", "syntax error at end of input", 5);
}

// --- SET / RESET ------------------------------------------------------------------------

TEST(ParserSetTest, AlterSystemSet) {
  auto set = ParseOne<SetVariableStatement>("ALTER SYSTEM SET checkpoint_interval = '200ms'");
  EXPECT_TRUE(set->system);
  EXPECT_EQ(set->name, "checkpoint_interval");
  ASSERT_EQ(set->values.size(), 1u);
  EXPECT_EQ(set->values[0], "200ms");
  EXPECT_FALSE(ParseOne<SetVariableStatement>("SET checkpoint_interval TO 1")->system);
  // ALTER and SYSTEM stay usable as names.
  EXPECT_EQ(Parse("SELECT system, alter FROM t").size(), 1u);
}

TEST(ParserSetTest, Forms) {
  struct Case {
    const char* sql;
    const char* name;
    std::vector<std::string> values;
    bool is_default;
    bool local;
  };
  std::vector<Case> cases = {
      {"SET application_name = 'psql'", "application_name", {"psql"}, false, false},
      {"SET extra_float_digits TO 3", "extra_float_digits", {"3"}, false, false},
      {"SET SESSION x = -1.5", "x", {"-1.5"}, false, false},
      {"SET LOCAL statement_timeout = 0", "statement_timeout", {"0"}, false, true},
      {"set Enable_Thing = ON", "enable_thing", {"on"}, false, false},
      {"SET enable_thing TO off", "enable_thing", {"off"}, false, false},
      {"SET flag = true", "flag", {"true"}, false, false},
      {"SET flag = FALSE", "flag", {"false"}, false, false},
      {"SET search_path TO \"$user\", public, 'x y'",
       "search_path",
       {"$user", "public", "x y"},
       false,
       false},
      {"SET DateStyle = ISO, MDY", "datestyle", {"iso", "mdy"}, false, false},
      {"SET work_mem TO DEFAULT", "work_mem", {}, true, false},
      {"SET work_mem = default", "work_mem", {}, true, false},
      {"SET stave.some_option = 'v'", "stave.some_option", {"v"}, false, false},
      {"SET TIME ZONE 'UTC'", "timezone", {"UTC"}, false, false},
      {"SET TIME ZONE -7", "timezone", {"-7"}, false, false},
      {"SET TIME ZONE utc", "timezone", {"utc"}, false, false},
      {"SET TIME ZONE LOCAL", "timezone", {}, true, false},
      {"SET LOCAL TIME ZONE DEFAULT", "timezone", {}, true, true},
      {"SET timezone = 'Europe/Paris'", "timezone", {"Europe/Paris"}, false, false},
      {"SET time = 1", "time", {"1"}, false, false},
      {"SET session = 1", "session", {"1"}, false, false},
  };
  for (const Case& c : cases) {
    auto set = ParseOne<SetVariableStatement>(c.sql);
    ASSERT_NE(set, nullptr) << c.sql;
    EXPECT_EQ(set->kind, StatementKind::kSetVariable);
    EXPECT_EQ(set->name, c.name) << c.sql;
    EXPECT_EQ(set->values, c.values) << c.sql;
    EXPECT_EQ(set->is_default, c.is_default) << c.sql;
    EXPECT_EQ(set->local, c.local) << c.sql;
  }
  EXPECT_SYNTAX_ERROR("SET x", "syntax error at end of input", 6);
  EXPECT_SYNTAX_ERROR("SET x = ", "syntax error at end of input", 9);
  EXPECT_SYNTAX_ERROR("SET x = (1)", "syntax error at or near \"(\"", 9);
}

TEST(ParserResetTest, Forms) {
  std::vector<std::pair<const char*, const char*>> cases = {
      {"RESET work_mem", "work_mem"},
      {"reset ALL", "all"},
      {"RESET TIME ZONE", "timezone"},
      {"RESET Stave.X", "stave.x"},
  };
  for (const auto& [sql, name] : cases) {
    auto reset = ParseOne<ResetVariableStatement>(sql);
    ASSERT_NE(reset, nullptr) << sql;
    EXPECT_EQ(reset->kind, StatementKind::kResetVariable);
    EXPECT_EQ(reset->name, name) << sql;
  }
}

// --- Transactions and CHECKPOINT --------------------------------------------------------

TEST(ParserTransactionTest, Forms) {
  std::vector<std::pair<const char*, TransactionKind>> cases = {
      {"BEGIN", TransactionKind::kBegin},
      {"begin work", TransactionKind::kBegin},
      {"BEGIN TRANSACTION", TransactionKind::kBegin},
      {"BEGIN ISOLATION LEVEL SERIALIZABLE", TransactionKind::kBegin},
      {"BEGIN TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY", TransactionKind::kBegin},
      {"BEGIN READ WRITE NOT DEFERRABLE", TransactionKind::kBegin},
      {"START TRANSACTION", TransactionKind::kBegin},
      {"START TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY DEFERRABLE",
       TransactionKind::kBegin},
      {"BEGIN ISOLATION LEVEL READ UNCOMMITTED", TransactionKind::kBegin},
      {"COMMIT", TransactionKind::kCommit},
      {"COMMIT WORK", TransactionKind::kCommit},
      {"commit transaction", TransactionKind::kCommit},
      {"END", TransactionKind::kCommit},
      {"END TRANSACTION", TransactionKind::kCommit},
      {"ROLLBACK", TransactionKind::kRollback},
      {"ROLLBACK WORK", TransactionKind::kRollback},
      {"ABORT", TransactionKind::kRollback},
      {"abort transaction", TransactionKind::kRollback},
  };
  for (const auto& [sql, kind] : cases) {
    auto transaction = ParseOne<TransactionStatement>(sql);
    ASSERT_NE(transaction, nullptr) << sql;
    EXPECT_EQ(transaction->kind, StatementKind::kTransaction);
    EXPECT_EQ(transaction->transaction_kind, kind) << sql;
  }
  EXPECT_SYNTAX_ERROR("BEGIN ISOLATION LEVEL FAST", "syntax error at or near \"FAST\"", 23);
  EXPECT_SYNTAX_ERROR("START", "syntax error at end of input", 6);
}

TEST(ParserCheckpointTest, Checkpoint) {
  auto checkpoint = ParseOne<CheckpointStatement>("CHECKPOINT");
  ASSERT_NE(checkpoint, nullptr);
  EXPECT_EQ(checkpoint->kind, StatementKind::kCheckpoint);
  EXPECT_EQ(checkpoint->text, "CHECKPOINT");
  std::vector<StatementPtr> statements = Parse("checkpoint;checkpoint;");
  EXPECT_EQ(statements.size(), 2u);
}

// --- EXPLAIN / ALTER SINK ---------------------------------------------------------------

TEST(ParserExplainTest, Sink) {
  auto explain = ParseOne<ExplainStatement>("EXPLAIN SINK public.S");
  ASSERT_NE(explain, nullptr);
  EXPECT_EQ(explain->kind, StatementKind::kExplain);
  EXPECT_EQ(explain->position, 1);
  EXPECT_EQ(explain->text, "EXPLAIN SINK public.S");
  ASSERT_TRUE(explain->sink.has_value());
  EXPECT_EQ(*explain->sink, (QualifiedName{"public", "s"}));
  EXPECT_EQ(explain->sink_position, 14);
  EXPECT_EQ(explain->statement, nullptr);

  auto keyword_name = ParseOne<ExplainStatement>("explain sink \"Sink\"");
  ASSERT_NE(keyword_name, nullptr);
  EXPECT_EQ(keyword_name->sink, (QualifiedName{"Sink"}));
  auto sink_named_sink = ParseOne<ExplainStatement>("EXPLAIN SINK sink");
  ASSERT_NE(sink_named_sink, nullptr);
  EXPECT_EQ(sink_named_sink->sink, (QualifiedName{"sink"}));
}

TEST(ParserExplainTest, CreateSink) {
  std::string sql = "EXPLAIN  CREATE SINK s FROM mv WITH (connector = 'blackhole') FORMAT json";
  auto explain = ParseOne<ExplainStatement>(sql);
  ASSERT_NE(explain, nullptr);
  EXPECT_EQ(explain->text, sql);
  EXPECT_EQ(explain->position, 1);
  EXPECT_FALSE(explain->sink.has_value());
  EXPECT_EQ(explain->sink_position, 0);
  ASSERT_NE(explain->statement, nullptr);
  EXPECT_EQ(explain->statement->kind, StatementKind::kCreateSink);
  auto* create = dynamic_cast<const CreateSinkStatement*>(explain->statement.get());
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->text, "CREATE SINK s FROM mv WITH (connector = 'blackhole') FORMAT json");
  EXPECT_EQ(create->position, 10);
  EXPECT_EQ(create->name, (QualifiedName{"s"}));
  EXPECT_EQ(create->from, (QualifiedName{"mv"}));
  EXPECT_EQ(create->from_position, 29);
  EXPECT_EQ(create->format, "json");
  ASSERT_EQ(create->options.size(), 1u);

  auto as_query = ParseOne<ExplainStatement>("EXPLAIN CREATE SINK s AS SELECT a FROM t");
  ASSERT_NE(as_query, nullptr);
  auto* create_as = dynamic_cast<const CreateSinkStatement*>(as_query->statement.get());
  ASSERT_NE(create_as, nullptr);
  EXPECT_EQ(create_as->text, "CREATE SINK s AS SELECT a FROM t");
  ASSERT_NE(create_as->query, nullptr);
  EXPECT_EQ(create_as->query->text, "SELECT a FROM t");
  EXPECT_EQ(create_as->query->position, 26);
}

TEST(ParserExplainTest, OtherStatements) {
  std::string sql = "SELECT 1; explain select a from t where a > 1; EXPLAIN (SELECT 2)";
  std::vector<StatementPtr> statements = Parse(sql);
  ASSERT_EQ(statements.size(), 3u);
  ASSERT_EQ(statements[1]->kind, StatementKind::kExplain);
  auto* explain = static_cast<const ExplainStatement*>(statements[1].get());
  EXPECT_EQ(explain->text, "explain select a from t where a > 1");
  EXPECT_EQ(explain->position, 11);
  ASSERT_NE(explain->statement, nullptr);
  ASSERT_EQ(explain->statement->kind, StatementKind::kSelect);
  auto* select = static_cast<const SelectStatement*>(explain->statement.get());
  EXPECT_EQ(select->text, "select a from t where a > 1");
  EXPECT_EQ(select->position, 19);
  EXPECT_EQ(ToString(select->where.get()), "(> a 1)");
  auto* parenthesized = static_cast<const ExplainStatement*>(statements[2].get());
  ASSERT_NE(parenthesized->statement, nullptr);
  EXPECT_EQ(parenthesized->statement->kind, StatementKind::kSelect);
  EXPECT_EQ(parenthesized->statement->text, "(SELECT 2)");

  // The grammar leaves it to the executor which statements it can explain.
  std::vector<std::pair<const char*, StatementKind>> cases = {
      {"EXPLAIN CREATE MATERIALIZED VIEW mv AS SELECT 1", StatementKind::kCreateMaterializedView},
      {"EXPLAIN CREATE STREAM s (a int)", StatementKind::kCreateStream},
      {"EXPLAIN INSERT INTO t VALUES (1)", StatementKind::kInsert},
      {"EXPLAIN DELETE FROM t", StatementKind::kDelete},
      {"EXPLAIN DROP SINK s", StatementKind::kDrop},
      {"EXPLAIN ALTER SINK s PAUSE", StatementKind::kAlterSink},
      {"EXPLAIN SHOW SINKS", StatementKind::kShowObjects},
      {"EXPLAIN SHOW explain", StatementKind::kShowVariable},
      {"EXPLAIN COMMIT", StatementKind::kTransaction},
  };
  for (const auto& [case_sql, kind] : cases) {
    auto explained = ParseOne<ExplainStatement>(case_sql);
    ASSERT_NE(explained, nullptr) << case_sql;
    ASSERT_NE(explained->statement, nullptr) << case_sql;
    EXPECT_EQ(explained->statement->kind, kind) << case_sql;
    EXPECT_EQ(explained->statement->position, 9) << case_sql;
    EXPECT_EQ(explained->statement->text, std::string(case_sql).substr(8)) << case_sql;
  }
}

TEST(ParserExplainTest, Errors) {
  EXPECT_SYNTAX_ERROR("EXPLAIN", "syntax error at end of input", 8);
  EXPECT_SYNTAX_ERROR("EXPLAIN SINK", "syntax error at end of input", 13);
  EXPECT_SYNTAX_ERROR("EXPLAIN SINK s AS SELECT 1", "syntax error at or near \"AS\"", 16);
  // As in PostgreSQL, EXPLAIN does not explain itself.
  EXPECT_SYNTAX_ERROR("EXPLAIN EXPLAIN SELECT 1", "syntax error at or near \"EXPLAIN\"", 9);
  EXPECT_SYNTAX_ERROR("EXPLAIN EXPLAIN SINK s", "syntax error at or near \"EXPLAIN\"", 9);
  EXPECT_SYNTAX_ERROR("EXPLAIN s", "syntax error at or near \"s\"", 9);
}

TEST(ParserAlterSinkTest, PauseAndResume) {
  auto pause = ParseOne<AlterSinkStatement>("ALTER SINK s PAUSE");
  ASSERT_NE(pause, nullptr);
  EXPECT_EQ(pause->kind, StatementKind::kAlterSink);
  EXPECT_EQ(pause->name, (QualifiedName{"s"}));
  EXPECT_TRUE(pause->pause);
  EXPECT_EQ(pause->text, "ALTER SINK s PAUSE");
  EXPECT_EQ(pause->position, 1);

  auto resume = ParseOne<AlterSinkStatement>("alter sink Public.\"S\" resume");
  ASSERT_NE(resume, nullptr);
  EXPECT_EQ(resume->name, (QualifiedName{"public", "S"}));
  EXPECT_FALSE(resume->pause);

  // PAUSE, RESUME and SYSTEM are names too, without confusing the action or ALTER SYSTEM.
  auto named_pause = ParseOne<AlterSinkStatement>("ALTER SINK pause RESUME");
  ASSERT_NE(named_pause, nullptr);
  EXPECT_EQ(named_pause->name, (QualifiedName{"pause"}));
  EXPECT_FALSE(named_pause->pause);
  auto named_resume = ParseOne<AlterSinkStatement>("ALTER SINK resume.pause PAUSE");
  ASSERT_NE(named_resume, nullptr);
  EXPECT_EQ(named_resume->name, (QualifiedName{"resume", "pause"}));
  EXPECT_TRUE(named_resume->pause);
  auto named_system = ParseOne<AlterSinkStatement>("ALTER SINK system PAUSE");
  ASSERT_NE(named_system, nullptr);
  EXPECT_EQ(named_system->name, (QualifiedName{"system"}));
  auto system = ParseOne<SetVariableStatement>("ALTER SYSTEM SET pause = resume");
  ASSERT_NE(system, nullptr);
  EXPECT_TRUE(system->system);
  EXPECT_EQ(system->name, "pause");
  EXPECT_EQ(system->values, (std::vector<std::string>{"resume"}));
}

TEST(ParserAlterSinkTest, Errors) {
  EXPECT_SYNTAX_ERROR("ALTER SINK s STOP", "syntax error at or near \"STOP\"", 14);
  EXPECT_SYNTAX_ERROR("ALTER SINK s", "syntax error at end of input", 13);
  EXPECT_SYNTAX_ERROR("ALTER SINK s PAUSE RESUME", "syntax error at or near \"RESUME\"", 20);
  EXPECT_SYNTAX_ERROR("ALTER SINK PAUSE", "syntax error at end of input", 17);
  EXPECT_SYNTAX_ERROR("ALTER SYSTEM PAUSE", "syntax error at or near \"PAUSE\"", 14);
  EXPECT_SYNTAX_ERROR("ALTER STREAM s PAUSE", "syntax error at or near \"STREAM\"", 7);
}

TEST(ParserSinkKeywordsTest, StillNames) {
  // SINK, EXPLAIN, PAUSE and RESUME are not reserved: they remain column, table and alias
  // names, and SET, SHOW and CREATE accept them as names too.
  auto select = ParseSelect(
      "SELECT sink, pause, resume, explain FROM explain WHERE pause AND NOT resume "
      "ORDER BY sink");
  ASSERT_NE(select, nullptr);
  std::vector<std::string> names;
  for (const SelectItem& item : select->items) names.push_back(ToString(item.expr.get()));
  EXPECT_EQ(Join(names, ","), "sink,pause,resume,explain");
  EXPECT_EQ(select->from->name, (QualifiedName{"explain"}));
  EXPECT_EQ(ToString(select->where.get()), "(AND pause (NOT resume))");
  EXPECT_EQ(ToString(select->order_by[0].expr.get()), "sink");

  auto aliases = ParseSelect("SELECT 1 sink, 2 pause, 3 resume, 4 explain FROM sink resume");
  ASSERT_NE(aliases, nullptr);
  EXPECT_EQ(aliases->items[0].alias, "sink");
  EXPECT_EQ(aliases->items[1].alias, "pause");
  EXPECT_EQ(aliases->items[2].alias, "resume");
  EXPECT_EQ(aliases->items[3].alias, "explain");
  EXPECT_EQ(aliases->from->alias, "resume");

  auto create = ParseOne<CreateTableStatement>(
      "CREATE TABLE pause (explain int, resume int, sink int) WITH (pause = resume)");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->name, (QualifiedName{"pause"}));
  std::vector<std::string> columns;
  for (const ColumnDef& column : create->columns) columns.push_back(column.name);
  EXPECT_EQ(Join(columns, ","), "explain,resume,sink");
  EXPECT_EQ(OptionPairs(create->options),
            (std::vector<std::pair<std::string, std::string>>{{"pause", "resume"}}));

  auto insert = ParseOne<InsertStatement>("INSERT INTO explain (sink, pause) VALUES (1, 2)");
  ASSERT_NE(insert, nullptr);
  EXPECT_EQ(insert->table, (QualifiedName{"explain"}));
  EXPECT_EQ(insert->columns, (std::vector<std::string>{"sink", "pause"}));
  auto set = ParseOne<SetVariableStatement>("SET explain = pause");
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->name, "explain");
  EXPECT_EQ(set->values, (std::vector<std::string>{"pause"}));
  auto show = ParseOne<ShowVariableStatement>("SHOW resume");
  ASSERT_NE(show, nullptr);
  EXPECT_EQ(show->name, "resume");
  auto drop = ParseOne<DropStatement>("DROP SINK pause");
  ASSERT_NE(drop, nullptr);
  EXPECT_EQ(drop->object_kind, ObjectKind::kSink);
  EXPECT_EQ(drop->name, (QualifiedName{"pause"}));
}

// --- Syntax errors ----------------------------------------------------------------------

TEST(ParserErrorTest, PositionsAndMessages) {
  EXPECT_SYNTAX_ERROR("SELEC 1", "syntax error at or near \"SELEC\"", 1);
  EXPECT_SYNTAX_ERROR("SELECT 1 FROM", "syntax error at end of input", 14);
  EXPECT_SYNTAX_ERROR("SELECT * FROM t WHERE", "syntax error at end of input", 22);
  EXPECT_SYNTAX_ERROR("SELECT * FROM t WHERE   ", "syntax error at end of input", 25);
  EXPECT_SYNTAX_ERROR("SELECT * FROM t WHERE;", "syntax error at or near \";\"", 22);
  EXPECT_SYNTAX_ERROR("SELECT 1 +", "syntax error at end of input", 11);
  EXPECT_SYNTAX_ERROR("SELECT (1", "syntax error at end of input", 10);
  EXPECT_SYNTAX_ERROR("SELECT 1)", "syntax error at or near \")\"", 9);
  EXPECT_SYNTAX_ERROR("SELECT 1 2", "syntax error at or near \"2\"", 10);
  EXPECT_SYNTAX_ERROR("SELECT a = b = c", "syntax error at or near \"=\"", 14);
  EXPECT_SYNTAX_ERROR("SELECT a FROM t WHERE a IN ()", "syntax error at or near \")\"", 29);
  EXPECT_SYNTAX_ERROR("SELECT count(*", "syntax error at end of input", 15);
  EXPECT_SYNTAX_ERROR("SELECT CASE END", "syntax error at or near \"END\"", 13);
  EXPECT_SYNTAX_ERROR("SELECT 1; SELEC 2", "syntax error at or near \"SELEC\"", 11);
  EXPECT_SYNTAX_ERROR("SELECT 'é', FROM t", "syntax error at or near \"FROM\"", 13);
  EXPECT_SYNTAX_ERROR("INSERT INTO t DEFAULT VALUES", "syntax error at or near \"DEFAULT\"", 15);
  EXPECT_SYNTAX_ERROR("SELECT a FROM t ORDER a", "syntax error at or near \"a\"", 23);
  EXPECT_SYNTAX_ERROR("SELECT 1 FROM t LIMIT", "syntax error at end of input", 22);
}

TEST(ParserErrorTest, LexicalErrors) {
  EXPECT_SYNTAX_ERROR("SELECT 'abc", "unterminated quoted string at or near \"'abc\"", 8);
  EXPECT_SYNTAX_ERROR("SELECT 'it''s", "unterminated quoted string at or near \"'it''s\"", 8);
  EXPECT_SYNTAX_ERROR("SELECT \"abc", "unterminated quoted identifier at or near \"\"abc\"", 8);
  EXPECT_SYNTAX_ERROR("SELECT 1 /* open", "unterminated /* comment at or near \"/* open\"", 10);
  EXPECT_SYNTAX_ERROR("SELECT $a", "syntax error at or near \"$\"", 8);
  EXPECT_SYNTAX_ERROR("SELECT a # b", "syntax error at or near \"#\"", 10);
  EXPECT_SYNTAX_ERROR("SELECT 1 ! 2", "syntax error at or near \"!\"", 10);
  EXPECT_SYNTAX_ERROR("SELECT ?", "syntax error at or near \"?\"", 8);
}

TEST(ParserErrorTest, InvalidUtf8) {
  std::optional<ErrorInfo> error = ParseError("SELECT '\xff'");
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->sqlstate, "22021");
  EXPECT_EQ(error->message, "invalid byte sequence for encoding \"UTF8\": 0xff");
  error = ParseError("SELECT '\xe2\x28\xa1'");
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, "invalid byte sequence for encoding \"UTF8\": 0xe2 0x28 0xa1");
  error = ParseError(std::string_view("SELECT \0", 8));
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->sqlstate, "22021");
  // An overlong encoding of '/'.
  error = ParseError("SELECT 1 \xc0\xaf");
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->sqlstate, "22021");
}

TEST(ParserErrorTest, DeepNestingFailsCleanly) {
  // Moderate nesting parses.
  std::string nested = "SELECT " + std::string(100, '(') + "1" + std::string(100, ')');
  EXPECT_EQ(Parse(nested).size(), 1u);

  // Absurd nesting is rejected instead of overflowing the stack.
  for (const std::string& sql : {
           "SELECT " + std::string(100000, '(') + "1" + std::string(100000, ')'),
           "SELECT " + std::string(100000, '('),
           std::string(100000, '(') + "SELECT 1" + std::string(100000, ')'),
           [] {
             std::string s = "SELECT ";
             for (int i = 0; i < 100000; ++i) s += "- ";
             return s + "1";
           }(),
           [] {
             std::string s = "SELECT ";
             for (int i = 0; i < 100000; ++i) s += "NOT ";
             return s + "true";
           }(),
           [] {
             std::string s = "SELECT ";
             for (int i = 0; i < 100000; ++i) s += "f(";
             return s;
           }(),
           [] {
             std::string s = "SELECT ";
             for (int i = 0; i < 50000; ++i) s += "CASE WHEN a THEN ";
             return s;
           }(),
       }) {
    std::optional<ErrorInfo> error = ParseError(sql);
    ASSERT_TRUE(error.has_value());
    EXPECT_TRUE(error->sqlstate == "54001" || error->sqlstate == sqlstate::kSyntaxError)
        << error->sqlstate << " " << error->message;
  }
}

TEST(ParserErrorTest, LongOperatorChainsAreBoundedByDepthNotStack) {
  // ANTLR parses a chain of left-associative operators in a loop, and the AST builder walks it
  // iteratively: only kMaxExpressionDepth limits it, the same in every build type.
  for (const char* op : {" + ", " AND ", " OR ", " || ", " * "}) {
    std::string longest = "SELECT 1";
    for (int i = 1; i < kMaxExpressionDepth; ++i) longest += std::string(op) + "1";
    std::vector<StatementPtr> statements = Parse(longest);
    ASSERT_EQ(statements.size(), 1u) << op;
    auto* select = static_cast<const SelectStatement*>(statements[0].get());
    int depth = 0;
    for (const Expr* e = select->items[0].expr.get(); e != nullptr; ++depth) {
      e = e->kind == ExprKind::kBinary ? static_cast<const BinaryExpr*>(e)->left.get() : nullptr;
    }
    EXPECT_EQ(depth, kMaxExpressionDepth) << op;

    std::optional<ErrorInfo> error = ParseError(longest + op + "1");
    ASSERT_TRUE(error.has_value()) << op;
    EXPECT_EQ(error->sqlstate, "54001");
    EXPECT_EQ(error->message, "expression is nested more than 5000 levels deep");
    EXPECT_EQ(error->position, 8);
  }
  // Right operands count too: 1 + (1 + (1 + ...)) is as deep as it is long.
  std::string right_nested = "SELECT 1";
  for (int i = 0; i < kMaxExpressionDepth; ++i) right_nested = right_nested + " + (1";
  right_nested += std::string(kMaxExpressionDepth, ')');
  std::optional<ErrorInfo> error = ParseError(right_nested);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->sqlstate, "54001");
  // A long but shallow statement is fine.
  std::string list = "SELECT a IN (0";
  for (int i = 1; i < 20000; ++i) list += ", " + std::to_string(i);
  list += ")";
  EXPECT_EQ(Parse(list).size(), 1u);
}

// Random token soup and random bytes: every input either parses or throws SqlError (any other
// exception fails the test through gtest, a crash fails it outright).
TEST(ParserErrorTest, RandomInputsOnlyEverThrowSqlError) {
  const std::vector<std::string> vocabulary = {"SELECT",    "FROM",
                                               "WHERE",     "GROUP",
                                               "BY",        "ORDER",
                                               "LIMIT",     "ALL",
                                               "AND",       "OR",
                                               "NOT",       "CASE",
                                               "WHEN",      "THEN",
                                               "ELSE",      "END",
                                               "CAST",      "AS",
                                               "IS",        "NULL",
                                               "IN",        "BETWEEN",
                                               "LIKE",      "CREATE",
                                               "STREAM",    "MATERIALIZED",
                                               "VIEW",      "WITH",
                                               "FORMAT",    "DROP",
                                               "SHOW",      "SET",
                                               "TIME",      "ZONE",
                                               "RESET",     "BEGIN",
                                               "COMMIT",    "(",
                                               ")",         ",",
                                               ";",         ".",
                                               "*",         "+",
                                               "-",         "/",
                                               "=",         "<>",
                                               "::",        "||",
                                               "a",         "t",
                                               "1",         "1.5",
                                               "'s'",       "\"Q\"",
                                               "'",         "\"",
                                               "/*",        "--",
                                               "$",         "é",
                                               "int",       "double",
                                               "precision", "\n",
                                               "INSERT",    "INTO",
                                               "VALUES",    "UPDATE",
                                               "DELETE",    "TABLE",
                                               "PRIMARY",   "KEY",
                                               "APPEND",    "ONLY",
                                               "SINK",      "EXPLAIN",
                                               "ALTER",     "PAUSE",
                                               "RESUME",    "SYSTEM"};
  std::mt19937 random(12345);
  for (int round = 0; round < 3000; ++round) {
    std::string sql;
    int length = static_cast<int>(random() % 16);
    for (int i = 0; i < length; ++i) {
      sql += vocabulary[random() % vocabulary.size()];
      if (random() % 3 != 0) sql += ' ';
    }
    try {
      Parse(sql);
    } catch (const SqlError& e) {
      EXPECT_FALSE(e.sqlstate().empty()) << sql;
      EXPECT_GE(e.position(), 0) << sql;
      EXPECT_LE(e.position(), static_cast<int>(sql.size()) + 1) << sql;
    }
  }
  for (int round = 0; round < 1000; ++round) {
    std::string sql;
    int length = static_cast<int>(random() % 24);
    for (int i = 0; i < length; ++i) sql += static_cast<char>(random() % 256);
    try {
      Parse(sql);
    } catch (const SqlError&) {
    }
  }
}

// --- Concurrency ------------------------------------------------------------------------

TEST(ParserConcurrencyTest, ParallelParsesAgree) {
  const std::vector<std::string> queries = {
      "SELECT a, b + 1 FROM t WHERE c BETWEEN 1 AND 2 ORDER BY a DESC",
      "CREATE STREAM s (a int NOT NULL, b text) WITH (x = 1) FORMAT json",
      "SELECT CASE WHEN x IS NULL THEN 0 ELSE x END::bigint FROM s",
      "SET search_path TO public",
      "SELECT 1 FROM",
      "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y')",
      "UPDATE t AS x SET a = a + 1 WHERE b IS NULL",
      "CREATE TABLE t (a int PRIMARY KEY, b int PRIMARY KEY)",
  };
  std::vector<std::string> expected;
  for (const std::string& query : queries) {
    try {
      expected.push_back(Parse(query).at(0)->text);
    } catch (const SqlError& e) {
      expected.push_back(e.what());
    }
  }
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        size_t q = static_cast<size_t>(i + t) % queries.size();
        std::string got;
        try {
          got = Parse(queries[q]).at(0)->text;
        } catch (const SqlError& e) {
          got = e.what();
        }
        if (got != expected[q]) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// The syntax of the queries psql and drivers send to PostgreSQL's catalogs.
TEST(ParserCatalogSyntaxTest, RegexMatchOperators) {
  EXPECT_EQ(ExprString("a ~ 'x'"), "textregexeq(a, 'x')");
  EXPECT_EQ(ExprString("a ~* 'x'"), "texticregexeq(a, 'x')");
  EXPECT_EQ(ExprString("a !~ 'x'"), "textregexne(a, 'x')");
  EXPECT_EQ(ExprString("a !~* 'x'"), "texticregexne(a, 'x')");
  EXPECT_EQ(ExprString("a OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default"),
            "textregexeq(a, '^(t)$')");
}

TEST(ParserCatalogSyntaxTest, EscapeStrings) {
  EXPECT_EQ(ExprString("E'it\\'s'"), "'it's'");
  EXPECT_EQ(ExprString("e'a\\\\b'"), "'a\\b'");
  EXPECT_EQ(ExprString("E'a''b'"), "'a'b'");
}

TEST(ParserCatalogSyntaxTest, ArraySubqueryAndTableFunction) {
  EXPECT_EQ(ExprString("ARRAY(SELECT 1)"), "ARRAY[SELECT 1]");
  auto select = ParseSelect("SELECT s FROM pg_catalog.generate_series(1, 3) AS s");
  ASSERT_NE(select, nullptr);
  ASSERT_TRUE(select->from.has_value());
  EXPECT_EQ(select->from->from_kind, FromKind::kFunction);
  EXPECT_EQ(Join(select->from->name, "."), "pg_catalog.generate_series");
  EXPECT_EQ(select->from->function_arguments.size(), 2u);
  EXPECT_EQ(select->from->alias, "s");
}

}  // namespace
}  // namespace stave::parser

// --- CREATE / ALTER / DROP USER ---------------------------------------------------------

namespace stave::parser {
namespace {

TEST(ParserRoleTest, CreateAlterAndDropUsersAndRoles) {
  auto create = ParseOne<RoleStatement>("CREATE USER Alice WITH PASSWORD 'it''s'");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->kind, StatementKind::kRole);
  EXPECT_EQ(create->action, RoleStatement::Action::kCreate);
  EXPECT_TRUE(create->is_user);
  EXPECT_EQ(create->names, std::vector<std::string>{"alice"});
  ASSERT_TRUE(create->password.has_value());
  EXPECT_EQ(*create->password, std::optional<std::string>("it's"));
  EXPECT_FALSE(create->login.has_value());

  auto role = ParseOne<RoleStatement>("create role \"Bob\" login password null");
  ASSERT_NE(role, nullptr);
  EXPECT_FALSE(role->is_user);
  EXPECT_EQ(role->names, std::vector<std::string>{"Bob"});
  ASSERT_TRUE(role->password.has_value());
  EXPECT_FALSE(role->password->has_value());
  EXPECT_EQ(role->login, std::optional<bool>(true));

  auto alter = ParseOne<RoleStatement>("ALTER ROLE carol NOLOGIN");
  ASSERT_NE(alter, nullptr);
  EXPECT_EQ(alter->action, RoleStatement::Action::kAlter);
  EXPECT_EQ(alter->login, std::optional<bool>(false));
  EXPECT_FALSE(alter->password.has_value());

  auto drop = ParseOne<RoleStatement>("DROP USER IF EXISTS a, b");
  ASSERT_NE(drop, nullptr);
  EXPECT_EQ(drop->action, RoleStatement::Action::kDrop);
  EXPECT_TRUE(drop->if_exists);
  EXPECT_EQ(drop->names, (std::vector<std::string>{"a", "b"}));

  // The new keywords stay usable as names.
  auto user_column = ParseOne<SelectStatement>("SELECT user, role, password, login FROM t");
  ASSERT_NE(user_column, nullptr);
}

TEST(ParserRoleTest, RedundantOptionsAreRefused) {
  EXPECT_SYNTAX_ERROR("CREATE USER a PASSWORD 'x' PASSWORD 'y'", "conflicting or redundant options",
                      28);
  EXPECT_SYNTAX_ERROR("ALTER USER a LOGIN NOLOGIN", "conflicting or redundant options", 20);
  EXPECT_SYNTAX_ERROR("CREATE USER a SUPERUSER", "syntax error at or near \"SUPERUSER\"", 15);
}

}  // namespace
}  // namespace stave::parser
