#include "parser/ast_builder.h"

#include <antlr4-runtime.h>

#include <charconv>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "StaveSqlBaseVisitor.h"
#include "StaveSqlParser.h"
#include "common/sql_error.h"

namespace stave::parser {
namespace {

using P = grammar::StaveSqlParser;

// PostgreSQL's SQLSTATEs for a bad table definition: invalid_table_definition (a second
// primary key) and duplicate_column (a column named twice in a key).
constexpr std::string_view kInvalidTableDefinition = "42P16";
constexpr std::string_view kDuplicateColumn = "42701";

int PositionOf(const antlr4::Token* token) { return static_cast<int>(token->getStartIndex()) + 1; }

int PositionOf(antlr4::ParserRuleContext* ctx) { return PositionOf(ctx->getStart()); }

// PostgreSQL folds only ASCII letters: other characters are kept as written.
std::string AsciiLower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

// Strips the surrounding quotes of a quoted token and undoubles the quotes inside:
// 'it''s' -> it's, "a""b" -> a"b.
std::string Unquote(const std::string& text, char quote) {
  std::string result;
  result.reserve(text.size());
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    result += text[i];
    if (text[i] == quote) ++i;  // The lexer only lets quotes through in pairs.
  }
  return result;
}

// E'a\nb' -> a, newline, b: the C-like escapes PostgreSQL decodes in escape strings.
std::string UnescapeEscapeString(const std::string& text) {
  std::string result;
  // Skip the E and the quotes.
  for (size_t i = 2; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c == '\'') {
      result += c;
      ++i;  // A doubled quote.
    } else if (c == '\\' && i + 2 < text.size()) {
      char next = text[++i];
      switch (next) {
        case 'n':
          result += '\n';
          break;
        case 't':
          result += '\t';
          break;
        case 'r':
          result += '\r';
          break;
        case 'b':
          result += '\b';
          break;
        case 'f':
          result += '\f';
          break;
        default:
          result += next;  // \\, \' and any other character stand for themselves.
      }
    } else {
      result += c;
    }
  }
  return result;
}

std::string StringContents(P::StringValueContext* ctx) {
  if (ctx->ESCAPE_STRING() != nullptr) return UnescapeEscapeString(ctx->getText());
  return Unquote(ctx->STRING()->getText(), '\'');
}

template <typename T>
std::unique_ptr<T> MakeNode(int position) {
  auto node = std::make_unique<T>();
  node->position = position;
  return node;
}

// Builds the AST. Statements and expressions, whose parse trees are labeled alternatives, are
// dispatched through the generated visitor; as antlrcpp::Any cannot hold move-only values,
// each visit method leaves its result in `statement_` or `expr_` and returns nothing, and
// BuildStatement/BuildExpr take it from there. Chains of binary operators are the exception:
// BuildExpr builds them iteratively (see BuildBinaryChain). The fixed-shape parts (clauses,
// names, types) are built by plain helper functions.
class AstBuilder : public grammar::StaveSqlBaseVisitor {
 public:
  AstBuilder(antlr4::CharStream* input, const StackLimit& stack_limit)
      : input_(input), stack_limit_(stack_limit) {}

  std::vector<StatementPtr> BuildStatements(P::MultiStatementContext* ctx) {
    std::vector<StatementPtr> statements;
    for (P::StatementContext* statement : ctx->statement()) {
      parameters_.clear();
      statements.push_back(BuildStatement(statement));
      for (auto& slot : parameters_) {
        if (slot == nullptr) slot = std::make_shared<ParameterSlot>();
      }
      statements.back()->parameters = std::move(parameters_);
    }
    return statements;
  }

  // --- Statements ---------------------------------------------------------------------

  antlrcpp::Any visitPlainStatement(P::PlainStatementContext* ctx) override {
    ctx->explainableStatement()->accept(this);
    return {};
  }

  antlrcpp::Any visitCreateRole(P::CreateRoleContext* ctx) override {
    statement_ = BuildRole(RoleStatement::Action::kCreate, ctx->kind, {ctx->identifier()},
                           ctx->roleOption());
    return {};
  }

  antlrcpp::Any visitAlterRole(P::AlterRoleContext* ctx) override {
    statement_ =
        BuildRole(RoleStatement::Action::kAlter, ctx->kind, {ctx->identifier()}, ctx->roleOption());
    return {};
  }

  antlrcpp::Any visitDropRole(P::DropRoleContext* ctx) override {
    auto role = BuildRole(RoleStatement::Action::kDrop, ctx->kind, ctx->identifier(), {});
    role->if_exists = ctx->IF() != nullptr;
    statement_ = std::move(role);
    return {};
  }

  std::unique_ptr<RoleStatement> BuildRole(RoleStatement::Action action, antlr4::Token* kind,
                                           const std::vector<P::IdentifierContext*>& names,
                                           const std::vector<P::RoleOptionContext*>& options) {
    auto role = std::make_unique<RoleStatement>();
    role->action = action;
    role->is_user = kind->getType() == P::USER;
    for (P::IdentifierContext* name : names) role->names.push_back(BuildIdentifier(name));
    role->name_position = PositionOf(names.front());
    for (P::RoleOptionContext* option : options) {
      if (option->PASSWORD() != nullptr) {
        if (role->password)
          throw SqlError(sqlstate::kSyntaxError, "conflicting or redundant options",
                         PositionOf(option));
        role->password = option->stringValue() != nullptr
                             ? std::optional<std::string>(StringContents(option->stringValue()))
                             : std::nullopt;
      } else {
        if (role->login)
          throw SqlError(sqlstate::kSyntaxError, "conflicting or redundant options",
                         PositionOf(option));
        role->login = option->LOGIN() != nullptr;
      }
    }
    return role;
  }

  antlrcpp::Any visitExplainSink(P::ExplainSinkContext* ctx) override {
    auto explain = std::make_unique<ExplainStatement>();
    explain->sink = BuildQualifiedName(ctx->qualifiedName());
    explain->sink_position = PositionOf(ctx->qualifiedName());
    statement_ = std::move(explain);
    return {};
  }

  antlrcpp::Any visitExplainView(P::ExplainViewContext* ctx) override {
    auto explain = std::make_unique<ExplainStatement>();
    explain->view = BuildQualifiedName(ctx->qualifiedName());
    explain->view_position = PositionOf(ctx->qualifiedName());
    statement_ = std::move(explain);
    return {};
  }

  antlrcpp::Any visitExplain(P::ExplainContext* ctx) override {
    auto explain = std::make_unique<ExplainStatement>();
    // Built as a statement of its own, the explained statement gets its own text and position.
    explain->statement = BuildStatement(ctx->explainableStatement());
    statement_ = std::move(explain);
    return {};
  }

  antlrcpp::Any visitSelectStatement(P::SelectStatementContext* ctx) override {
    statement_ = BuildQuery(ctx->query());
    return {};
  }

  antlrcpp::Any visitCreateStream(P::CreateStreamContext* ctx) override {
    auto create = std::make_unique<CreateStreamStatement>();
    create->name = BuildQualifiedName(ctx->qualifiedName());
    create->if_not_exists = ctx->IF() != nullptr;
    for (P::StreamElementContext* element : ctx->streamElement()) {
      if (P::ColumnDefinitionContext* column = element->columnDefinition()) {
        create->columns.push_back(BuildColumn(column));
        continue;
      }
      if (create->watermark) {
        throw SqlError(sqlstate::kSyntaxError, "a stream has at most one WATERMARK",
                       PositionOf(element));
      }
      create->watermark = WatermarkDef{BuildIdentifier(element->identifier()),
                                       BuildExpr(element->expression()), PositionOf(element)};
    }
    BuildStreamOptions(ctx->streamOptions(), &create->options, &create->format);
    statement_ = std::move(create);
    return {};
  }

  antlrcpp::Any visitCreateTable(P::CreateTableContext* ctx) override {
    auto create = std::make_unique<CreateTableStatement>();
    create->name = BuildQualifiedName(ctx->qualifiedName());
    create->if_not_exists = ctx->IF() != nullptr;
    // Like PostgreSQL, check the primary keys only once every column is built (a NULL/NOT
    // NULL conflict is reported first), in the order they are written.
    std::vector<PrimaryKeyClause> primary_keys;
    for (P::TableElementContext* element : ctx->tableElement()) {
      if (P::ColumnDefinitionContext* column_ctx = element->columnDefinition()) {
        ColumnDef& column = create->columns.emplace_back(BuildColumn(column_ctx));
        for (P::ColumnConstraintContext* constraint : column_ctx->columnConstraint()) {
          if (constraint->PRIMARY() != nullptr) {
            primary_keys.push_back({{column.name}, PositionOf(constraint)});
          }
        }
      } else {
        P::TableConstraintContext* constraint = element->tableConstraint();
        PrimaryKeyClause& primary_key = primary_keys.emplace_back();
        primary_key.position = PositionOf(constraint);
        for (P::IdentifierContext* column : constraint->identifier()) {
          primary_key.columns.push_back(BuildIdentifier(column));
        }
      }
    }
    for (PrimaryKeyClause& primary_key : primary_keys) {
      if (create->primary_key_position != 0) {
        throw SqlError(
            kInvalidTableDefinition,
            "multiple primary keys for table \"" + create->name.back() + "\" are not allowed",
            primary_key.position);
      }
      for (size_t i = 0; i < primary_key.columns.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          if (primary_key.columns[j] == primary_key.columns[i]) {
            throw SqlError(
                kDuplicateColumn,
                "column \"" + primary_key.columns[i] + "\" appears twice in primary key constraint",
                primary_key.position);
          }
        }
      }
      create->primary_key = std::move(primary_key.columns);
      create->primary_key_position = primary_key.position;
    }
    create->append_only = ctx->APPEND() != nullptr;
    if (P::WithClauseContext* with = ctx->withClause()) {
      for (P::PropertyContext* property : with->property()) {
        create->options.push_back(BuildOption(property));
      }
    }
    statement_ = std::move(create);
    return {};
  }

  antlrcpp::Any visitCreateMaterializedView(P::CreateMaterializedViewContext* ctx) override {
    auto create = std::make_unique<CreateMaterializedViewStatement>();
    create->name = BuildQualifiedName(ctx->qualifiedName());
    create->if_not_exists = ctx->IF() != nullptr;
    create->query = BuildQuery(ctx->query());
    create->query->emit_on_window_close = ctx->emitOnWindowClose() != nullptr;
    statement_ = std::move(create);
    return {};
  }

  antlrcpp::Any visitCreateView(P::CreateViewContext* ctx) override {
    throw SqlError(sqlstate::kFeatureNotSupported, "CREATE VIEW is not supported", PositionOf(ctx))
        .WithHint(
            "Stave's views are materialized and kept up to date as their inputs change: write "
            "CREATE MATERIALIZED VIEW name AS query.");
  }

  antlrcpp::Any visitCreateSink(P::CreateSinkContext* ctx) override {
    auto create = std::make_unique<CreateSinkStatement>();
    create->name = BuildQualifiedName(ctx->name);
    create->if_not_exists = ctx->IF() != nullptr;
    if (ctx->input != nullptr) {
      create->from = BuildQualifiedName(ctx->input);
      create->from_position = PositionOf(ctx->input);
    } else {
      create->query = BuildQuery(ctx->query());
      create->query->emit_on_window_close = ctx->emitOnWindowClose() != nullptr;
    }
    BuildStreamOptions(ctx->streamOptions(), &create->options, &create->format);
    statement_ = std::move(create);
    return {};
  }

  antlrcpp::Any visitInsertStatement(P::InsertStatementContext* ctx) override {
    auto insert = std::make_unique<InsertStatement>();
    insert->table = BuildQualifiedName(ctx->qualifiedName());
    insert->table_position = PositionOf(ctx->qualifiedName());
    for (P::IdentifierContext* column : ctx->columns) {
      insert->columns.push_back(BuildIdentifier(column));
      insert->column_positions.push_back(PositionOf(column));
    }
    if (ctx->query() != nullptr) {
      insert->query = BuildQuery(ctx->query());
    } else {
      for (P::ValuesRowContext* row_ctx : ctx->valuesRow()) {
        std::vector<ExprPtr>& row = insert->values.emplace_back();
        for (P::ExpressionContext* value : row_ctx->expression()) {
          row.push_back(BuildExpr(value));
        }
      }
    }
    insert->returning = BuildReturning(ctx->returningClause());
    statement_ = std::move(insert);
    return {};
  }

  antlrcpp::Any visitUpdateStatement(P::UpdateStatementContext* ctx) override {
    auto update = std::make_unique<UpdateStatement>();
    update->table = BuildTableRef(ctx->tableReference());
    for (P::AssignmentContext* assignment_ctx : ctx->assignment()) {
      Assignment& assignment = update->assignments.emplace_back();
      assignment.column = BuildIdentifier(assignment_ctx->identifier());
      assignment.value = BuildExpr(assignment_ctx->expression());
      assignment.position = PositionOf(assignment_ctx);
    }
    if (ctx->where != nullptr) update->where = BuildExpr(ctx->where);
    update->returning = BuildReturning(ctx->returningClause());
    statement_ = std::move(update);
    return {};
  }

  antlrcpp::Any visitDeleteStatement(P::DeleteStatementContext* ctx) override {
    auto delete_statement = std::make_unique<DeleteStatement>();
    delete_statement->table = BuildTableRef(ctx->tableReference());
    if (ctx->where != nullptr) delete_statement->where = BuildExpr(ctx->where);
    delete_statement->returning = BuildReturning(ctx->returningClause());
    statement_ = std::move(delete_statement);
    return {};
  }

  antlrcpp::Any visitDrop(P::DropContext* ctx) override {
    auto drop = std::make_unique<DropStatement>();
    P::ObjectTypeContext* type = ctx->objectType();
    if (type->STREAM() != nullptr) {
      drop->object_kind = ObjectKind::kStream;
    } else if (type->MATERIALIZED() != nullptr) {
      drop->object_kind = ObjectKind::kMaterializedView;
    } else if (type->TABLE() != nullptr) {
      drop->object_kind = ObjectKind::kTable;
    } else if (type->SINK() != nullptr) {
      drop->object_kind = ObjectKind::kSink;
    } else {
      drop->object_kind = ObjectKind::kView;
    }
    drop->name = BuildQualifiedName(ctx->qualifiedName());
    drop->if_exists = ctx->IF() != nullptr;
    drop->cascade = ctx->CASCADE() != nullptr;
    statement_ = std::move(drop);
    return {};
  }

  antlrcpp::Any visitShowObjects(P::ShowObjectsContext* ctx) override {
    auto show = std::make_unique<ShowObjectsStatement>();
    P::ObjectTypePluralContext* type = ctx->objectTypePlural();
    if (type->STREAMS() != nullptr) {
      show->object_kind = ObjectKind::kStream;
    } else if (type->MATERIALIZED() != nullptr) {
      show->object_kind = ObjectKind::kMaterializedView;
    } else if (type->TABLES() != nullptr) {
      show->object_kind = ObjectKind::kTable;
    } else if (type->SINKS() != nullptr) {
      show->object_kind = ObjectKind::kSink;
    } else {
      show->object_kind = ObjectKind::kView;
    }
    statement_ = std::move(show);
    return {};
  }

  antlrcpp::Any visitShowTimeZone(P::ShowTimeZoneContext*) override {
    statement_ = MakeShowVariable("timezone");
    return {};
  }

  antlrcpp::Any visitShowTransactionIsolation(P::ShowTransactionIsolationContext*) override {
    statement_ = MakeShowVariable("transaction_isolation");
    return {};
  }

  antlrcpp::Any visitShowAll(P::ShowAllContext*) override {
    statement_ = MakeShowVariable("all");
    return {};
  }

  antlrcpp::Any visitShowVariable(P::ShowVariableContext* ctx) override {
    std::string name = BuildVariableName(ctx->variableName());
    // No setting has these names: they show the engine's jobs and checkpoints.
    if (name == "jobs" || name == "checkpoints") {
      auto show = std::make_unique<ShowSystemTableStatement>();
      show->table = name;
      statement_ = std::move(show);
      return {};
    }
    statement_ = MakeShowVariable(std::move(name));
    return {};
  }

  antlrcpp::Any visitSetTimeZone(P::SetTimeZoneContext* ctx) override {
    auto set = std::make_unique<SetVariableStatement>();
    set->name = "timezone";
    set->local = ctx->scope != nullptr && ctx->scope->getType() == P::LOCAL;
    P::TimeZoneValueContext* value = ctx->timeZoneValue();
    if (value->DEFAULT() != nullptr) {
      set->is_default = true;
    } else if (value->stringValue() != nullptr) {
      set->values.push_back(StringContents(value->stringValue()));
    } else if (value->signedNumber() != nullptr) {
      set->values.push_back(SignedNumberText(value->signedNumber()));
    } else if (value->identifier()->getStart()->getType() == P::LOCAL) {
      // SET TIME ZONE LOCAL is PostgreSQL's spelling of SET TIME ZONE DEFAULT.
      set->is_default = true;
    } else {
      set->values.push_back(BuildIdentifier(value->identifier()));
    }
    statement_ = std::move(set);
    return {};
  }

  antlrcpp::Any visitSetVariable(P::SetVariableContext* ctx) override {
    auto set = std::make_unique<SetVariableStatement>();
    set->name = BuildVariableName(ctx->variableName());
    set->local = ctx->scope != nullptr && ctx->scope->getType() == P::LOCAL;
    set->is_default = ctx->DEFAULT() != nullptr;
    for (P::SetValueContext* value : ctx->setValue()) {
      set->values.push_back(BuildSetValue(value));
    }
    statement_ = std::move(set);
    return {};
  }

  antlrcpp::Any visitAlterSystemSet(P::AlterSystemSetContext* ctx) override {
    auto set = std::make_unique<SetVariableStatement>();
    set->name = BuildVariableName(ctx->variableName());
    set->system = true;
    set->is_default = ctx->DEFAULT() != nullptr;
    for (P::SetValueContext* value : ctx->setValue()) {
      set->values.push_back(BuildSetValue(value));
    }
    statement_ = std::move(set);
    return {};
  }

  antlrcpp::Any visitAlterSink(P::AlterSinkContext* ctx) override {
    auto alter = std::make_unique<AlterSinkStatement>();
    alter->name = BuildQualifiedName(ctx->qualifiedName());
    alter->pause = ctx->action->getType() == P::PAUSE;
    statement_ = std::move(alter);
    return {};
  }

  antlrcpp::Any visitReset(P::ResetContext* ctx) override {
    auto reset = std::make_unique<ResetVariableStatement>();
    if (ctx->ALL() != nullptr) {
      reset->name = "all";
    } else if (ctx->TIME() != nullptr) {
      reset->name = "timezone";
    } else {
      reset->name = BuildVariableName(ctx->variableName());
    }
    statement_ = std::move(reset);
    return {};
  }

  antlrcpp::Any visitBeginTransaction(P::BeginTransactionContext*) override {
    statement_ = MakeTransaction(TransactionKind::kBegin);
    return {};
  }

  antlrcpp::Any visitStartTransaction(P::StartTransactionContext*) override {
    statement_ = MakeTransaction(TransactionKind::kBegin);
    return {};
  }

  antlrcpp::Any visitCommit(P::CommitContext*) override {
    statement_ = MakeTransaction(TransactionKind::kCommit);
    return {};
  }

  antlrcpp::Any visitRollback(P::RollbackContext*) override {
    statement_ = MakeTransaction(TransactionKind::kRollback);
    return {};
  }

  antlrcpp::Any visitCheckpoint(P::CheckpointContext*) override {
    statement_ = std::make_unique<CheckpointStatement>();
    return {};
  }

  antlrcpp::Any visitBackup(P::BackupContext* ctx) override {
    auto backup = std::make_unique<BackupStatement>();
    backup->directory = StringContents(ctx->stringValue());
    statement_ = std::move(backup);
    return {};
  }

  // --- Boolean expressions and predicates ---------------------------------------------

  // Only reached for a value with a predicate (see SkipWrappers). The predicate's node stands
  // at this level of the tree, so it is visited directly rather than through BuildExpr.
  antlrcpp::Any visitPredicated(P::PredicatedContext* ctx) override {
    predicate_operand_ = BuildExpr(ctx->valueExpression());
    ctx->predicate()->accept(this);
    return {};
  }

  antlrcpp::Any visitLogicalNot(P::LogicalNotContext* ctx) override {
    auto not_expr = MakeNode<UnaryExpr>(PositionOf(ctx));
    not_expr->op = UnaryOp::kNot;
    not_expr->operand = BuildExpr(ctx->booleanExpression());
    expr_ = std::move(not_expr);
    return {};
  }

  static BinaryOp ComparisonOf(P::ComparisonOperatorContext* ctx) {
    switch (ctx->getStart()->getType()) {
      case P::NEQ:
        return BinaryOp::kNotEqual;
      case P::LT:
        return BinaryOp::kLess;
      case P::LTE:
        return BinaryOp::kLessEqual;
      case P::GT:
        return BinaryOp::kGreater;
      case P::GTE:
        return BinaryOp::kGreaterEqual;
      default:
        return BinaryOp::kEqual;
    }
  }

  antlrcpp::Any visitComparison(P::ComparisonContext* ctx) override {
    ExprPtr left = TakePredicateOperand();
    BinaryOp op = ComparisonOf(ctx->comparisonOperator());
    expr_ = MakeBinary(op, std::move(left), BuildExpr(ctx->right));
    return {};
  }

  antlrcpp::Any visitQuantifiedArrayComparison(P::QuantifiedArrayComparisonContext* ctx) override {
    ExprPtr operand = TakePredicateOperand();
    auto quantified = MakeNode<QuantifiedComparisonExpr>(operand->position);
    quantified->operand = std::move(operand);
    quantified->op = ComparisonOf(ctx->comparisonOperator());
    quantified->all = ctx->quantifier->getType() == P::ALL;
    quantified->array = BuildExpr(ctx->array);
    expr_ = std::move(quantified);
    return {};
  }

  antlrcpp::Any visitBetween(P::BetweenContext* ctx) override {
    ExprPtr operand = TakePredicateOperand();
    auto between = MakeNode<BetweenExpr>(operand->position);
    between->operand = std::move(operand);
    between->lower = BuildExpr(ctx->lower);
    between->upper = BuildExpr(ctx->upper);
    between->negated = ctx->NOT() != nullptr;
    expr_ = std::move(between);
    return {};
  }

  antlrcpp::Any visitInList(P::InListContext* ctx) override {
    ExprPtr operand = TakePredicateOperand();
    auto in_list = MakeNode<InListExpr>(operand->position);
    in_list->operand = std::move(operand);
    for (P::ExpressionContext* item : ctx->expression()) {
      in_list->list.push_back(BuildExpr(item));
    }
    in_list->negated = ctx->NOT() != nullptr;
    expr_ = std::move(in_list);
    return {};
  }

  antlrcpp::Any visitInSubquery(P::InSubqueryContext* ctx) override {
    ExprPtr operand = TakePredicateOperand();
    auto in = MakeNode<SubqueryExpr>(operand->position);
    in->subquery_kind = SubqueryKind::kIn;
    in->operand = std::move(operand);
    in->negated = ctx->NOT() != nullptr;
    in->query = BuildQuery(ctx->query());
    expr_ = std::move(in);
    return {};
  }

  antlrcpp::Any visitQuantifiedComparison(P::QuantifiedComparisonContext* ctx) override {
    ExprPtr operand = TakePredicateOperand();
    auto quantified = MakeNode<SubqueryExpr>(operand->position);
    quantified->subquery_kind =
        ctx->quantifier->getType() == P::ALL ? SubqueryKind::kAll : SubqueryKind::kAny;
    quantified->operand = std::move(operand);
    quantified->op = ComparisonOf(ctx->comparisonOperator());
    quantified->query = BuildQuery(ctx->query());
    expr_ = std::move(quantified);
    return {};
  }

  antlrcpp::Any visitExists(P::ExistsContext* ctx) override {
    auto exists = MakeNode<SubqueryExpr>(PositionOf(ctx));
    exists->subquery_kind = SubqueryKind::kExists;
    exists->query = BuildQuery(ctx->query());
    expr_ = std::move(exists);
    return {};
  }

  antlrcpp::Any visitScalarSubquery(P::ScalarSubqueryContext* ctx) override {
    auto scalar = MakeNode<SubqueryExpr>(PositionOf(ctx));
    scalar->subquery_kind = SubqueryKind::kScalar;
    scalar->query = BuildQuery(ctx->query());
    expr_ = std::move(scalar);
    return {};
  }

  antlrcpp::Any visitArraySubquery(P::ArraySubqueryContext* ctx) override {
    auto array = MakeNode<SubqueryExpr>(PositionOf(ctx));
    array->subquery_kind = SubqueryKind::kArray;
    array->query = BuildQuery(ctx->query());
    expr_ = std::move(array);
    return {};
  }

  antlrcpp::Any visitLike(P::LikeContext* ctx) override {
    ExprPtr operand = TakePredicateOperand();
    auto like = MakeNode<LikeExpr>(operand->position);
    like->operand = std::move(operand);
    like->pattern = BuildExpr(ctx->pattern);
    if (ctx->escape) like->escape = BuildExpr(ctx->escape);
    like->negated = ctx->NOT() != nullptr;
    like->case_insensitive = ctx->op->getType() == P::ILIKE;
    expr_ = std::move(like);
    return {};
  }

  // a ~ b is PostgreSQL's textregexeq(a, b), and so on: functions the binder knows.
  antlrcpp::Any visitRegexMatch(P::RegexMatchContext* ctx) override {
    ExprPtr operand = TakePredicateOperand();
    auto call = MakeNode<FunctionCallExpr>(operand->position);
    switch (ctx->regexOperator()->op->getType()) {
      case P::TILDE:
        call->name = {"textregexeq"};
        break;
      case P::TILDE_ASTERISK:
        call->name = {"texticregexeq"};
        break;
      case P::NOT_TILDE:
        call->name = {"textregexne"};
        break;
      default:
        call->name = {"texticregexne"};
        break;
    }
    call->args.push_back(std::move(operand));
    call->args.push_back(BuildExpr(ctx->pattern));
    expr_ = std::move(call);
    return {};
  }

  antlrcpp::Any visitNullPredicate(P::NullPredicateContext* ctx) override {
    ExprPtr operand = TakePredicateOperand();
    auto is_null = MakeNode<IsNullExpr>(operand->position);
    is_null->operand = std::move(operand);
    is_null->negated = ctx->NOT() != nullptr;
    expr_ = std::move(is_null);
    return {};
  }

  // --- Value expressions --------------------------------------------------------------

  antlrcpp::Any visitArithmeticUnary(P::ArithmeticUnaryContext* ctx) override {
    auto unary = MakeNode<UnaryExpr>(PositionOf(ctx));
    unary->op = ctx->op->getType() == P::MINUS ? UnaryOp::kNegate : UnaryOp::kPlus;
    unary->operand = BuildExpr(ctx->valueExpression());
    expr_ = std::move(unary);
    return {};
  }

  // --- Primary expressions ------------------------------------------------------------

  antlrcpp::Any visitNullLiteral(P::NullLiteralContext* ctx) override {
    expr_ = MakeLiteral(LiteralKind::kNull, "", PositionOf(ctx));
    return {};
  }

  antlrcpp::Any visitBooleanLiteral(P::BooleanLiteralContext* ctx) override {
    bool value = ctx->booleanValue()->TRUE_() != nullptr;
    expr_ = MakeLiteral(LiteralKind::kBoolean, value ? "true" : "false", PositionOf(ctx));
    return {};
  }

  antlrcpp::Any visitNumericLiteral(P::NumericLiteralContext* ctx) override {
    // Numbers keep their text, even beyond the range of int64: the binder decides.
    antlr4::Token* token = ctx->getStart();
    LiteralKind kind =
        token->getType() == P::INTEGER_VALUE ? LiteralKind::kInteger : LiteralKind::kDecimal;
    expr_ = MakeLiteral(kind, token->getText(), PositionOf(token));
    return {};
  }

  antlrcpp::Any visitStringLiteral(P::StringLiteralContext* ctx) override {
    expr_ = MakeLiteral(LiteralKind::kString, StringContents(ctx->stringValue()), PositionOf(ctx));
    return {};
  }

  antlrcpp::Any visitParameter(P::ParameterContext* ctx) override {
    auto parameter = MakeNode<ParameterExpr>(PositionOf(ctx));
    std::string digits = ctx->getStart()->getText().substr(1);
    int number = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    // PostgreSQL's limit: a Bind message counts parameters in 16 bits.
    if (error != std::errc() || end != digits.data() + digits.size() || number < 1 ||
        number > kMaxParameterNumber) {
      throw SqlError("42P02", "there is no parameter $" + digits, PositionOf(ctx));
    }
    parameter->number = number;
    if (parameters_.size() < static_cast<size_t>(number)) parameters_.resize(number);
    if (parameters_[number - 1] == nullptr) {
      parameters_[number - 1] = std::make_shared<ParameterSlot>();
    }
    parameter->slot = parameters_[number - 1];
    expr_ = std::move(parameter);
    return {};
  }

  antlrcpp::Any visitTypeConstructor(P::TypeConstructorContext* ctx) override {
    auto cast = MakeNode<CastExpr>(PositionOf(ctx));
    cast->operand = MakeLiteral(LiteralKind::kString, StringContents(ctx->stringValue()),
                                PositionOf(ctx->stringValue()));
    cast->type.name = BuildTypeName(ctx->dataTypeName());
    cast->type.position = PositionOf(ctx);
    if (P::IntervalFieldContext* field = ctx->intervalField()) {
      cast->type.interval_field = AsciiLower(field->getText());
    }
    expr_ = std::move(cast);
    return {};
  }

  // EXTRACT(field FROM x) is the function extract('field', x), as in PostgreSQL 14+.
  antlrcpp::Any visitExtract(P::ExtractContext* ctx) override {
    auto call = MakeNode<FunctionCallExpr>(PositionOf(ctx));
    call->name = {"extract"};
    std::string field =
        ctx->field != nullptr ? BuildIdentifier(ctx->field) : StringContents(ctx->fieldText);
    int field_position =
        ctx->field != nullptr ? PositionOf(ctx->field) : PositionOf(ctx->fieldText);
    call->args.push_back(MakeLiteral(LiteralKind::kString, std::move(field), field_position));
    call->args.push_back(BuildExpr(ctx->valueExpression()));
    expr_ = std::move(call);
    return {};
  }

  // POSITION(substring IN text) is position(text, substring), as in PostgreSQL: strpos by
  // another name (the name of its column).
  antlrcpp::Any visitPosition(P::PositionContext* ctx) override {
    auto call = MakeNode<FunctionCallExpr>(PositionOf(ctx));
    call->name = {"position"};
    call->args.push_back(BuildExpr(ctx->text));
    call->args.push_back(BuildExpr(ctx->substring));
    expr_ = std::move(call);
    return {};
  }

  // SUBSTRING(text FROM start FOR count) is substring(text, start, count); without FROM it starts
  // at 1, as in PostgreSQL.
  antlrcpp::Any visitSubstringFromFor(P::SubstringFromForContext* ctx) override {
    auto call = MakeNode<FunctionCallExpr>(PositionOf(ctx));
    call->name = {"substring"};
    call->args.push_back(BuildExpr(ctx->text));
    if (ctx->start != nullptr) {
      call->args.push_back(BuildExpr(ctx->start));
    } else {
      call->args.push_back(MakeLiteral(LiteralKind::kInteger, "1", PositionOf(ctx)));
    }
    if (ctx->count != nullptr) call->args.push_back(BuildExpr(ctx->count));
    expr_ = std::move(call);
    return {};
  }

  // TRIM([BOTH | LEADING | TRAILING] [characters] FROM text) is btrim, ltrim or rtrim of
  // (text, characters); without characters it trims spaces.
  antlrcpp::Any visitTrimFrom(P::TrimFromContext* ctx) override {
    auto call = MakeNode<FunctionCallExpr>(PositionOf(ctx));
    int side = ctx->side != nullptr ? static_cast<int>(ctx->side->getType()) : P::BOTH;
    call->name = {side == P::LEADING ? "ltrim" : side == P::TRAILING ? "rtrim" : "btrim"};
    call->args.push_back(BuildExpr(ctx->text));
    if (ctx->characters != nullptr) call->args.push_back(BuildExpr(ctx->characters));
    expr_ = std::move(call);
    return {};
  }

  antlrcpp::Any visitFunctionCall(P::FunctionCallContext* ctx) override {
    auto call = MakeNode<FunctionCallExpr>(PositionOf(ctx));
    P::FunctionNameContext* name = ctx->functionName();
    if (name->qualifiedName() != nullptr) {
      call->name = BuildQualifiedName(name->qualifiedName());
    } else {
      call->name = {AsciiLower(name->getStart()->getText())};  // LEFT or RIGHT.
    }
    call->star = ctx->ASTERISK() != nullptr;
    call->distinct = ctx->setQuantifier() != nullptr && ctx->setQuantifier()->DISTINCT() != nullptr;
    for (P::ExpressionContext* arg : ctx->expression()) {
      call->args.push_back(BuildExpr(arg));
    }
    for (P::SortItemContext* sort : ctx->sortItem()) call->order_by.push_back(BuildOrderItem(sort));
    if (P::FilterClauseContext* filter = ctx->filterClause()) {
      call->filter = BuildExpr(filter->condition);
    }
    if (P::OverClauseContext* over = ctx->overClause()) {
      auto window = std::make_shared<WindowSpec>();
      for (P::ExpressionContext* partition : over->partition) {
        window->partition_by.push_back(BuildExpr(partition));
      }
      for (P::SortItemContext* sort : over->sortItem()) {
        window->order_by.push_back(BuildOrderItem(sort));
      }
      call->over = std::move(window);
    }
    expr_ = std::move(call);
    return {};
  }

  antlrcpp::Any visitSimpleCase(P::SimpleCaseContext* ctx) override {
    auto case_expr = MakeNode<CaseExpr>(PositionOf(ctx));
    case_expr->operand = BuildExpr(ctx->operand);
    BuildCaseBranches(ctx->whenClause(), ctx->elseResult, case_expr.get());
    expr_ = std::move(case_expr);
    return {};
  }

  antlrcpp::Any visitSearchedCase(P::SearchedCaseContext* ctx) override {
    auto case_expr = MakeNode<CaseExpr>(PositionOf(ctx));
    BuildCaseBranches(ctx->whenClause(), ctx->elseResult, case_expr.get());
    expr_ = std::move(case_expr);
    return {};
  }

  antlrcpp::Any visitCast(P::CastContext* ctx) override {
    auto cast = MakeNode<CastExpr>(PositionOf(ctx));
    cast->operand = BuildExpr(ctx->expression());
    cast->type = BuildType(ctx->dataType());
    expr_ = std::move(cast);
    return {};
  }

  antlrcpp::Any visitPostfixCast(P::PostfixCastContext* ctx) override {
    auto cast = MakeNode<CastExpr>(PositionOf(ctx));
    cast->operand = BuildExpr(ctx->primaryExpression());
    cast->type = BuildType(ctx->dataType());
    expr_ = std::move(cast);
    return {};
  }

  antlrcpp::Any visitArrayConstructor(P::ArrayConstructorContext* ctx) override {
    auto constructor = MakeNode<ArrayConstructorExpr>(PositionOf(ctx));
    for (P::ExpressionContext* element : ctx->expression()) {
      constructor->elements.push_back(BuildExpr(element));
    }
    expr_ = std::move(constructor);
    return {};
  }

  antlrcpp::Any visitSubscript(P::SubscriptContext* ctx) override {
    auto subscript = MakeNode<SubscriptExpr>(PositionOf(ctx));
    subscript->array = BuildExpr(ctx->primaryExpression());
    subscript->index = BuildExpr(ctx->index);
    expr_ = std::move(subscript);
    return {};
  }

  antlrcpp::Any visitFieldSelection(P::FieldSelectionContext* ctx) override {
    ExprPtr operand = BuildExpr(ctx->expression());
    std::string field = BuildIdentifier(ctx->field);
    // information_schema._pg_expandarray(a) is SQL in PostgreSQL: the rows (a[s], s) over
    // the subscripts s of a, numbered from 1 (also for an int2vector, whose subscripts start
    // at 0). Its fields are therefore the set-returning calls unnest(a) and
    // information_schema._pg_expandarray_subscripts(a, 1) (generate_subscripts(a, 1) counted
    // from 1), which run side by side.
    if (auto* call = dynamic_cast<FunctionCallExpr*>(operand.get());
        call != nullptr && IsExpandArray(*call) && (field == "x" || field == "n")) {
      if (field == "x") {
        call->name = {"unnest"};
      } else {
        call->name = {"information_schema", "_pg_expandarray_subscripts"};
        auto dimension = MakeNode<LiteralExpr>(call->position);
        dimension->literal_kind = LiteralKind::kInteger;
        dimension->value = "1";
        call->args.push_back(std::move(dimension));
      }
      expr_ = std::move(operand);
      return {};
    }
    // Any other record: Stave's only records are _pg_expandarray's, carried as their text
    // form; the field of one is the call information_schema._pg_expandarray_field(record,
    // 'field') (planner/field_selection_binding.cc).
    auto selection = MakeNode<FunctionCallExpr>(PositionOf(ctx));
    selection->name = {"information_schema", "_pg_expandarray_field"};
    selection->args.push_back(std::move(operand));
    auto name = MakeNode<LiteralExpr>(PositionOf(ctx));
    name->literal_kind = LiteralKind::kString;
    name->value = std::move(field);
    selection->args.push_back(std::move(name));
    expr_ = std::move(selection);
    return {};
  }

  antlrcpp::Any visitColumnReference(P::ColumnReferenceContext* ctx) override {
    auto column = MakeNode<ColumnRefExpr>(PositionOf(ctx));
    column->names = BuildQualifiedName(ctx->qualifiedName());
    expr_ = std::move(column);
    return {};
  }

 private:
  // --- Dispatch -----------------------------------------------------------------------

  // Builds a whole statement, or the statement that EXPLAIN wraps.
  StatementPtr BuildStatement(antlr4::ParserRuleContext* ctx) {
    statement_.reset();
    ctx->accept(this);
    if (statement_ == nullptr) {
      throw SqlError(sqlstate::kInternalError, "parser: statement syntax without an AST builder",
                     PositionOf(ctx));
    }
    statement_->position = PositionOf(ctx);
    statement_->text = TextOf(ctx);
    return std::move(statement_);
  }

  // Builds any expression-like context: expression, booleanExpression, predicate,
  // valueExpression or primaryExpression. Every level of the expression tree passes through
  // here, so this is where its depth is bounded (kMaxExpressionDepth) and where the stack is
  // checked.
  ExprPtr BuildExpr(antlr4::ParserRuleContext* ctx) {
    ctx = SkipWrappers(ctx);
    stack_limit_.Check();
    if (depth_ >= kMaxExpressionDepth) ThrowTooDeep(ctx);
    DepthScope scope(&depth_);
    if (IsBinaryLink(ctx)) return BuildBinaryChain(ctx);
    expr_.reset();
    ctx->accept(this);
    if (expr_ == nullptr) {
      throw SqlError(sqlstate::kInternalError, "parser: expression syntax without an AST builder",
                     PositionOf(ctx));
    }
    return std::move(expr_);
  }

  // Skips the parse tree levels that leave no AST node: the expression rule itself, a
  // predicated value without a predicate, a plain primary expression, and parentheses (the
  // inner expression keeps its own position). Skipping them here keeps depth_ equal to the
  // depth of the AST, and the recursion shallow.
  static antlr4::ParserRuleContext* SkipWrappers(antlr4::ParserRuleContext* ctx) {
    while (true) {
      if (auto* expression = dynamic_cast<P::ExpressionContext*>(ctx)) {
        ctx = expression->booleanExpression();
      } else if (auto* predicated = dynamic_cast<P::PredicatedContext*>(ctx);
                 predicated != nullptr && predicated->predicate() == nullptr) {
        ctx = predicated->valueExpression();
      } else if (auto* value = dynamic_cast<P::ValueExpressionDefaultContext*>(ctx)) {
        ctx = value->primaryExpression();
      } else if (auto* parens = dynamic_cast<P::ParenthesizedExpressionContext*>(ctx)) {
        ctx = parens->expression();
      } else {
        return ctx;
      }
    }
  }

  // The left-associative binary operators (AND, OR, arithmetic, ||). ANTLR parses a chain of
  // them such as "a OR b OR c ..." in a loop, but its tree, like ours, is as deep as the chain
  // is long: BuildBinaryChain walks it iteratively, so that only kMaxExpressionDepth limits
  // such chains, not the stack.
  struct BinaryLink {
    BinaryOp op;
    antlr4::ParserRuleContext* left;
    antlr4::ParserRuleContext* right;
  };

  static bool IsBinaryLink(antlr4::ParserRuleContext* ctx) {
    return dynamic_cast<P::LogicalBinaryContext*>(ctx) != nullptr ||
           dynamic_cast<P::ArithmeticBinaryContext*>(ctx) != nullptr ||
           dynamic_cast<P::OtherOperatorContext*>(ctx) != nullptr;
  }

  static BinaryLink GetBinaryLink(antlr4::ParserRuleContext* ctx) {
    if (auto* logical = dynamic_cast<P::LogicalBinaryContext*>(ctx)) {
      BinaryOp op = logical->op->getType() == P::AND ? BinaryOp::kAnd : BinaryOp::kOr;
      return {op, logical->left, logical->right};
    }
    if (auto* other = dynamic_cast<P::OtherOperatorContext*>(ctx)) {
      BinaryOp op = BinaryOp::kConcat;
      switch (other->op->getType()) {
        case P::ARROW:
          op = BinaryOp::kJsonGet;
          break;
        case P::DOUBLE_ARROW:
          op = BinaryOp::kJsonGetText;
          break;
        case P::HASH_ARROW:
          op = BinaryOp::kJsonPath;
          break;
        case P::HASH_DOUBLE_ARROW:
          op = BinaryOp::kJsonPathText;
          break;
        case P::CONTAINS:
          op = BinaryOp::kContains;
          break;
        case P::CONTAINED_BY:
          op = BinaryOp::kContainedBy;
          break;
        default:
          break;
      }
      return {op, other->left, other->right};
    }
    auto* arithmetic = static_cast<P::ArithmeticBinaryContext*>(ctx);
    BinaryOp op = BinaryOp::kAdd;
    switch (arithmetic->op->getType()) {
      case P::PLUS:
        op = BinaryOp::kAdd;
        break;
      case P::MINUS:
        op = BinaryOp::kSubtract;
        break;
      case P::ASTERISK:
        op = BinaryOp::kMultiply;
        break;
      case P::SLASH:
        op = BinaryOp::kDivide;
        break;
      case P::PERCENT:
        op = BinaryOp::kModulo;
        break;
      case P::CARET:
        op = BinaryOp::kPower;
        break;
    }
    return {op, arithmetic->left, arithmetic->right};
  }

  // Called with depth_ at the depth of the topmost operator of the chain.
  ExprPtr BuildBinaryChain(antlr4::ParserRuleContext* ctx) {
    std::vector<antlr4::ParserRuleContext*> chain;  // Topmost operator first.
    while (IsBinaryLink(ctx)) {
      chain.push_back(ctx);
      ctx = SkipWrappers(GetBinaryLink(ctx).left);
    }
    // The chain's operators occupy depths top..top+n-1 and its leftmost operand lies below.
    const int top = depth_;
    depth_ = top - 1 + static_cast<int>(chain.size());
    ExprPtr result = BuildExpr(ctx);
    for (size_t i = chain.size(); i-- > 0;) {
      depth_ = top + static_cast<int>(i);  // The depth of this operator.
      BinaryLink link = GetBinaryLink(chain[i]);
      result = MakeBinary(link.op, std::move(result), BuildExpr(link.right));
    }
    depth_ = top;
    return result;
  }

  [[noreturn]] static void ThrowTooDeep(antlr4::ParserRuleContext* ctx) {
    throw SqlError(
        StackLimit::kStatementTooComplex,
        "expression is nested more than " + std::to_string(kMaxExpressionDepth) + " levels deep",
        PositionOf(ctx));
  }

  // Counts one level of expression depth for as long as it lives.
  class DepthScope {
   public:
    explicit DepthScope(int* depth) : depth_(depth), saved_(*depth) { ++*depth_; }
    ~DepthScope() { *depth_ = saved_; }
    DepthScope(const DepthScope&) = delete;
    DepthScope& operator=(const DepthScope&) = delete;

   private:
    int* depth_;
    int saved_;
  };

  // A predicate's operand is its sibling in the "predicated" alternative; visitPredicated
  // hands it over here. It must be taken before the predicate's own subexpressions are built,
  // as they may contain predicates too.
  ExprPtr TakePredicateOperand() { return std::move(predicate_operand_); }

  // --- Queries ------------------------------------------------------------------------

  std::unique_ptr<SelectStatement> BuildQuery(P::QueryContext* ctx) {
    std::unique_ptr<SelectStatement> select = BuildQueryExpression(ctx->queryExpression());
    // ORDER BY, LIMIT and OFFSET after a query apply to all of it; a query in parentheses
    // may have its own, but not twice the same.
    if (!ctx->sortItem().empty()) {
      if (!select->order_by.empty()) {
        throw SqlError(sqlstate::kSyntaxError, "multiple ORDER BY clauses not allowed",
                       PositionOf(ctx->ORDER()->getSymbol()));
      }
      for (P::SortItemContext* sort : ctx->sortItem()) {
        select->order_by.push_back(BuildOrderItem(sort));
      }
    }
    if (P::LimitClauseContext* limit = ctx->limitClause()) {
      if (select->limit) {
        throw SqlError(sqlstate::kSyntaxError, "multiple LIMIT clauses not allowed",
                       PositionOf(limit));
      }
      // LIMIT ALL leaves the limit absent.
      if (limit->expression()) select->limit = BuildExpr(limit->expression());
    }
    if (P::OffsetClauseContext* offset = ctx->offsetClause()) {
      if (select->offset) {
        throw SqlError(sqlstate::kSyntaxError, "multiple OFFSET clauses not allowed",
                       PositionOf(offset));
      }
      select->offset = BuildExpr(offset->expression());
    }
    return select;
  }

  std::unique_ptr<SelectStatement> BuildQueryExpression(P::QueryExpressionContext* ctx) {
    if (ctx->op == nullptr) return BuildQueryTerm(ctx->queryTerm());
    return BuildSetOperation(ctx, BuildQueryExpression(ctx->left), BuildQueryTerm(ctx->right));
  }

  std::unique_ptr<SelectStatement> BuildQueryTerm(P::QueryTermContext* ctx) {
    if (ctx->op == nullptr) return BuildQueryPrimary(ctx->queryPrimary());
    return BuildSetOperation(ctx, BuildQueryTerm(ctx->left), BuildQueryPrimary(ctx->right));
  }

  std::unique_ptr<SelectStatement> BuildQueryPrimary(P::QueryPrimaryContext* ctx) {
    if (ctx->querySpecification() != nullptr) {
      return BuildQuerySpecification(ctx->querySpecification());
    }
    if (ctx->VALUES() != nullptr) {
      auto values = MakeNode<SelectStatement>(PositionOf(ctx));
      values->text = TextOf(ctx);
      for (P::ValuesRowContext* row_ctx : ctx->valuesRow()) {
        std::vector<ExprPtr>& row = values->values.emplace_back();
        for (P::ExpressionContext* value : row_ctx->expression()) row.push_back(BuildExpr(value));
      }
      return values;
    }
    return BuildQuery(ctx->query());  // Parenthesized.
  }

  // `left op [ALL|DISTINCT] right`, for a query expression or a query term.
  template <typename Context>
  std::unique_ptr<SelectStatement> BuildSetOperation(Context* ctx,
                                                     std::unique_ptr<SelectStatement> left,
                                                     std::unique_ptr<SelectStatement> right) {
    auto set = MakeNode<SelectStatement>(PositionOf(ctx));
    set->text = TextOf(ctx);
    switch (ctx->op->getType()) {
      case P::UNION:
        set->set_operator = SetOperator::kUnion;
        break;
      case P::EXCEPT:
        set->set_operator = SetOperator::kExcept;
        break;
      default:
        set->set_operator = SetOperator::kIntersect;
        break;
    }
    set->set_all = ctx->setQuantifier() != nullptr && ctx->setQuantifier()->ALL() != nullptr;
    set->set_left = std::move(left);
    set->set_right = std::move(right);
    return set;
  }

  OrderItem BuildOrderItem(P::SortItemContext* sort) {
    OrderItem order;
    order.expr = BuildExpr(sort->expression());
    order.descending = sort->ordering != nullptr && sort->ordering->getType() == P::DESC;
    if (sort->nullOrdering != nullptr) {
      order.nulls_first = sort->nullOrdering->getType() == P::FIRST;
    }
    return order;
  }

  std::unique_ptr<SelectStatement> BuildQuerySpecification(P::QuerySpecificationContext* ctx) {
    auto select = MakeNode<SelectStatement>(PositionOf(ctx));
    select->text = TextOf(ctx);
    select->distinct =
        ctx->setQuantifier() != nullptr && ctx->setQuantifier()->DISTINCT() != nullptr;
    if (P::DistinctOnContext* distinct_on = ctx->distinctOn()) {
      for (P::ExpressionContext* expr : distinct_on->expression()) {
        select->distinct_on.push_back(BuildExpr(expr));
      }
    }
    for (P::SelectItemContext* item : ctx->selectItem()) {
      select->items.push_back(BuildSelectItem(item));
    }
    // A FROM list is a left-deep tree of cross joins.
    for (P::FromItemContext* item : ctx->fromItem()) {
      TableRef built = BuildFromItem(item);
      if (!select->from) {
        select->from = std::move(built);
        continue;
      }
      TableRef join;
      join.from_kind = FromKind::kJoin;
      join.join_kind = JoinKind::kCross;
      join.position = select->from->position;
      join.left = std::make_shared<const TableRef>(std::move(*select->from));
      join.right = std::make_shared<const TableRef>(std::move(built));
      select->from = std::move(join);
    }
    if (ctx->where != nullptr) select->where = BuildExpr(ctx->where);
    for (P::ExpressionContext* group : ctx->groupBy) {
      select->group_by.push_back(BuildExpr(group));
    }
    if (ctx->having != nullptr) select->having = BuildExpr(ctx->having);
    return select;
  }

  TableRef BuildFromItem(P::FromItemContext* ctx) {
    if (auto* primary = dynamic_cast<P::FromPrimaryItemContext*>(ctx)) {
      return BuildFromPrimary(primary->fromPrimary());
    }
    TableRef join;
    join.from_kind = FromKind::kJoin;
    join.position = PositionOf(ctx);
    if (auto* cross = dynamic_cast<P::CrossJoinContext*>(ctx)) {
      join.join_kind = JoinKind::kCross;
      join.left = std::make_shared<const TableRef>(BuildFromItem(cross->left));
      join.right = std::make_shared<const TableRef>(BuildFromPrimary(cross->right));
      return join;
    }
    auto* qualified = dynamic_cast<P::QualifiedJoinContext*>(ctx);
    if (qualified == nullptr) {
      throw SqlError(sqlstate::kInternalError, "parser: unknown FROM item syntax", PositionOf(ctx));
    }
    join.join_kind = JoinKind::kInner;
    if (P::JoinTypeContext* type = qualified->joinType()) {
      if (type->LEFT() != nullptr) join.join_kind = JoinKind::kLeft;
      if (type->RIGHT() != nullptr) join.join_kind = JoinKind::kRight;
      if (type->FULL() != nullptr) join.join_kind = JoinKind::kFull;
    }
    join.left = std::make_shared<const TableRef>(BuildFromItem(qualified->left));
    join.right = std::make_shared<const TableRef>(BuildFromItem(qualified->right));
    P::JoinConditionContext* condition = qualified->joinCondition();
    if (condition->ON() != nullptr) {
      join.condition = std::shared_ptr<const Expr>(BuildExpr(condition->expression()));
    } else {
      join.using_position = PositionOf(condition);
      for (P::IdentifierContext* column : condition->identifier()) {
        join.using_columns.push_back(BuildIdentifier(column));
      }
    }
    return join;
  }

  TableRef BuildFromPrimary(P::FromPrimaryContext* ctx) {
    if (auto* table = dynamic_cast<P::FromTableContext*>(ctx)) {
      return BuildTableRef(table->tableReference());
    }
    if (auto* parenthesized = dynamic_cast<P::FromParenthesizedContext*>(ctx)) {
      return BuildFromItem(parenthesized->fromItem());
    }
    if (auto* window = dynamic_cast<P::FromWindowContext*>(ctx)) return BuildWindow(window);
    if (auto* function = dynamic_cast<P::FromFunctionContext*>(ctx)) {
      return BuildFromFunction(function);
    }
    auto* subquery = dynamic_cast<P::FromSubqueryContext*>(ctx);
    if (subquery == nullptr) {
      throw SqlError(sqlstate::kInternalError, "parser: unknown FROM item syntax", PositionOf(ctx));
    }
    TableRef ref;
    ref.from_kind = FromKind::kSubquery;
    ref.position = PositionOf(ctx);
    ref.alias = BuildIdentifier(subquery->alias);
    for (P::IdentifierContext* column : subquery->columnAliases) {
      ref.column_aliases.push_back(BuildIdentifier(column));
    }
    ref.subquery = BuildQuery(subquery->query());
    return ref;
  }

  TableRef BuildWindow(P::FromWindowContext* ctx) {
    TableRef ref;
    ref.from_kind = FromKind::kWindow;
    ref.position = PositionOf(ctx);
    std::string function = BuildIdentifier(ctx->function);
    size_t arguments = ctx->expression().size();
    if (function != "tumble" && function != "hop") {
      // `f(a, b, c)` also fits the window functions' syntax: it is another table function
      // whose first two arguments are names.
      TableRef ref;
      ref.from_kind = FromKind::kFunction;
      ref.position = PositionOf(ctx);
      ref.function_name = function;
      ref.name = {function};
      auto relation = std::make_shared<ColumnRefExpr>();
      relation->names = BuildQualifiedName(ctx->relation);
      relation->position = PositionOf(ctx->relation);
      ref.function_arguments.push_back(relation);
      auto time_column = std::make_shared<ColumnRefExpr>();
      time_column->names = {BuildIdentifier(ctx->timeColumn)};
      time_column->position = PositionOf(ctx->timeColumn);
      ref.function_arguments.push_back(time_column);
      for (P::ExpressionContext* argument : ctx->expression()) {
        ref.function_arguments.push_back(std::shared_ptr<const Expr>(BuildExpr(argument)));
      }
      if (ctx->alias != nullptr) ref.alias = BuildIdentifier(ctx->alias);
      return ref;
    }
    if (function == "tumble" && arguments == 1) {
      ref.window_function = WindowFunction::kTumble;
    } else if (function == "hop" && arguments == 2) {
      ref.window_function = WindowFunction::kHop;
    } else {
      throw SqlError(sqlstate::kUndefinedFunction,
                     "table function " + function + " with " + std::to_string(arguments + 2) +
                         " arguments does not exist",
                     PositionOf(ctx->function))
          .WithHint(
              "Stave's window table functions are TUMBLE(relation, time_column, size) and "
              "HOP(relation, time_column, slide, size).");
    }
    ref.name = BuildQualifiedName(ctx->relation);
    ref.time_column = BuildIdentifier(ctx->timeColumn);
    ref.time_column_position = PositionOf(ctx->timeColumn);
    for (P::ExpressionContext* argument : ctx->expression()) {
      ref.window_arguments.push_back(std::shared_ptr<const Expr>(BuildExpr(argument)));
    }
    if (ctx->alias != nullptr) ref.alias = BuildIdentifier(ctx->alias);
    return ref;
  }

  TableRef BuildFromFunction(P::FromFunctionContext* ctx) {
    TableRef ref;
    ref.from_kind = FromKind::kFunction;
    ref.position = PositionOf(ctx);
    ref.function_name = BuildIdentifier(ctx->function);
    ref.name = {ref.function_name};
    if (ctx->schema != nullptr) {
      std::string schema = BuildIdentifier(ctx->schema);
      if (schema != "pg_catalog") {
        throw SqlError(sqlstate::kUndefinedFunction,
                       "function " + schema + "." + ref.function_name + " does not exist",
                       PositionOf(ctx));
      }
      ref.name.insert(ref.name.begin(), schema);
    }
    for (P::ExpressionContext* argument : ctx->expression()) {
      ref.function_arguments.push_back(std::shared_ptr<const Expr>(BuildExpr(argument)));
    }
    ref.with_ordinality = ctx->ORDINALITY() != nullptr;
    if (ctx->alias != nullptr) ref.alias = BuildIdentifier(ctx->alias);
    for (P::IdentifierContext* column : ctx->columnAliases) {
      ref.column_aliases.push_back(BuildIdentifier(column));
    }
    return ref;
  }

  static TableRef BuildTableRef(P::TableReferenceContext* ctx) {
    TableRef table;
    table.name = BuildQualifiedName(ctx->qualifiedName());
    if (ctx->alias != nullptr) table.alias = BuildIdentifier(ctx->alias);
    table.position = PositionOf(ctx);
    return table;
  }

  std::vector<SelectItem> BuildReturning(P::ReturningClauseContext* ctx) {
    std::vector<SelectItem> items;
    if (ctx == nullptr) return items;
    for (P::SelectItemContext* item : ctx->selectItem()) items.push_back(BuildSelectItem(item));
    return items;
  }

  SelectItem BuildSelectItem(P::SelectItemContext* ctx) {
    SelectItem item;
    if (auto* all = dynamic_cast<P::SelectAllContext*>(ctx)) {
      auto star = MakeNode<StarExpr>(PositionOf(all));
      if (all->qualifiedName() != nullptr) {
        star->qualifier = BuildQualifiedName(all->qualifiedName());
      }
      item.expr = std::move(star);
      return item;
    }
    auto* single = dynamic_cast<P::SelectSingleContext*>(ctx);
    if (single == nullptr) {
      throw SqlError(sqlstate::kInternalError, "parser: unknown select item syntax",
                     PositionOf(ctx));
    }
    item.expr = BuildExpr(single->expression());
    if (single->alias != nullptr) {
      item.alias = BuildAnyWord(single->alias);
    } else if (single->bareAlias != nullptr) {
      item.alias = BuildIdentifier(single->bareAlias);
    }
    return item;
  }

  void BuildCaseBranches(const std::vector<P::WhenClauseContext*>& whens,
                         P::ExpressionContext* else_result, CaseExpr* case_expr) {
    for (P::WhenClauseContext* when : whens) {
      ExprPtr condition = BuildExpr(when->condition);
      case_expr->when_then.emplace_back(std::move(condition), BuildExpr(when->result));
    }
    if (else_result != nullptr) case_expr->else_result = BuildExpr(else_result);
  }

  // --- CREATE STREAM / CREATE TABLE ---------------------------------------------------

  // One PRIMARY KEY clause of CREATE TABLE, column-level or table-level.
  struct PrimaryKeyClause {
    std::vector<std::string> columns;
    int position = 0;
  };

  ColumnDef BuildColumn(P::ColumnDefinitionContext* ctx) {
    ColumnDef column;
    column.name = BuildIdentifier(ctx->identifier());
    column.type = BuildType(ctx->dataType());
    column.position = PositionOf(ctx);
    // Remembers an explicit NULL or NOT NULL, to reject both on one column like PostgreSQL.
    std::optional<bool> declared_not_null;
    for (P::ColumnConstraintContext* constraint : ctx->columnConstraint()) {
      if (constraint->PRIMARY() != nullptr) {
        column.primary_key = true;
        continue;
      }
      bool not_null = constraint->NOT() != nullptr;
      if (declared_not_null.has_value() && *declared_not_null != not_null) {
        throw SqlError(sqlstate::kSyntaxError,
                       "conflicting NULL/NOT NULL declarations for column \"" + column.name + "\"",
                       PositionOf(constraint));
      }
      declared_not_null = not_null;
      column.not_null = not_null;
    }
    return column;
  }

  // The WITH and FORMAT clauses of CREATE STREAM and CREATE SINK.
  void BuildStreamOptions(P::StreamOptionsContext* ctx, std::vector<Option>* options,
                          std::string* format) {
    if (P::WithClauseContext* with = ctx->withClause()) {
      for (P::PropertyContext* property : with->property()) {
        options->push_back(BuildOption(property));
      }
    }
    if (P::FormatClauseContext* format_clause = ctx->formatClause()) {
      // Format names are matched case-insensitively, so even a quoted one is folded.
      *format = AsciiLower(format_clause->identifier() != nullptr
                               ? BuildIdentifier(format_clause->identifier())
                               : StringContents(format_clause->stringValue()));
    }
  }

  Option BuildOption(P::PropertyContext* ctx) {
    Option option;
    option.position = PositionOf(ctx);
    P::PropertyKeyContext* key = ctx->propertyKey();
    if (key->stringValue() != nullptr) {
      option.key = StringContents(key->stringValue());
    } else {
      for (P::AnyWordContext* part : key->anyWord()) {
        if (!option.key.empty()) option.key += '.';
        option.key += BuildAnyWord(part);
      }
    }
    P::PropertyValueContext* value = ctx->propertyValue();
    if (value->stringValue() != nullptr) {
      option.value = StringContents(value->stringValue());
    } else if (value->signedNumber() != nullptr) {
      option.value = SignedNumberText(value->signedNumber());
    } else {
      option.value = BuildAnyWord(value->anyWord());
    }
    return option;
  }

  // --- SHOW / SET / transactions ------------------------------------------------------

  // Configuration parameter names are case-insensitive, so even quoted parts are folded.
  std::string BuildVariableName(P::VariableNameContext* ctx) {
    std::string name;
    for (P::IdentifierContext* part : ctx->identifier()) {
      if (!name.empty()) name += '.';
      name += BuildIdentifier(part);
    }
    return AsciiLower(std::move(name));
  }

  std::string BuildSetValue(P::SetValueContext* ctx) {
    if (ctx->stringValue() != nullptr) return StringContents(ctx->stringValue());
    if (ctx->signedNumber() != nullptr) return SignedNumberText(ctx->signedNumber());
    if (ctx->ON() != nullptr) return "on";
    if (ctx->booleanValue() != nullptr) {
      return ctx->booleanValue()->TRUE_() != nullptr ? "true" : "false";
    }
    return BuildIdentifier(ctx->identifier());
  }

  static StatementPtr MakeShowVariable(std::string name) {
    auto show = std::make_unique<ShowVariableStatement>();
    show->name = std::move(name);
    return show;
  }

  static StatementPtr MakeTransaction(TransactionKind kind) {
    auto transaction = std::make_unique<TransactionStatement>();
    transaction->transaction_kind = kind;
    return transaction;
  }

  // --- Names, types and literals ------------------------------------------------------

  // Unquoted identifiers fold to lower case; quoted ones keep their case.
  /// A plain call of information_schema._pg_expandarray with one argument.
  static bool IsExpandArray(const FunctionCallExpr& call) {
    bool named = (call.name.size() == 2 && call.name[0] == "information_schema" &&
                  call.name[1] == "_pg_expandarray") ||
                 (call.name.size() == 1 && call.name[0] == "_pg_expandarray");
    return named && call.args.size() == 1 && !call.star && !call.distinct && !call.over &&
           call.order_by.empty();
  }

  static std::string BuildIdentifier(P::IdentifierContext* ctx) {
    if (antlr4::tree::TerminalNode* quoted = ctx->QUOTED_IDENTIFIER()) {
      std::string name = Unquote(quoted->getText(), '"');
      if (name.empty()) {
        throw SqlError(sqlstate::kSyntaxError,
                       "zero-length delimited identifier at or near \"\"\"\"", PositionOf(ctx));
      }
      return name;
    }
    return AsciiLower(ctx->getStart()->getText());
  }

  static std::string BuildAnyWord(P::AnyWordContext* ctx) {
    if (ctx->identifier() != nullptr) return BuildIdentifier(ctx->identifier());
    return AsciiLower(ctx->getStart()->getText());  // A reserved keyword.
  }

  static QualifiedName BuildQualifiedName(P::QualifiedNameContext* ctx) {
    QualifiedName name;
    for (P::IdentifierContext* part : ctx->identifier()) {
      name.push_back(BuildIdentifier(part));
    }
    return name;
  }

  static std::string BuildTypeName(P::DataTypeNameContext* ctx) {
    std::string name;
    for (P::IdentifierContext* part : ctx->identifier()) {
      if (!name.empty()) name += '.';
      name += BuildIdentifier(part);
    }
    return name;
  }

  static TypeName BuildType(P::DataTypeContext* ctx) {
    TypeName type;
    type.position = PositionOf(ctx);
    if (ctx->DOUBLE() != nullptr) {
      type.name = "double precision";
    } else if (ctx->CHARACTER() != nullptr) {
      type.name = "character varying";
    } else {
      type.name = BuildTypeName(ctx->dataTypeName());
      if (ctx->withTimeZone != nullptr) {
        type.name +=
            ctx->withTimeZone->getType() == P::WITH ? " with time zone" : " without time zone";
      }
    }
    if (P::TypeModifiersContext* modifiers = ctx->typeModifiers()) {
      for (antlr4::tree::TerminalNode* number : modifiers->INTEGER_VALUE()) {
        type.modifiers.push_back(ParseTypeModifier(number->getSymbol()));
      }
    }
    type.array_dimensions = static_cast<int>(ctx->arrayBrackets().size());
    return type;
  }

  static int64_t ParseTypeModifier(antlr4::Token* token) {
    std::string text = token->getText();
    int64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
      // PostgreSQL's lexer turns an integer this large into a float, which a type modifier
      // cannot be: a syntax error at the number.
      throw SqlError(sqlstate::kSyntaxError, "syntax error at or near \"" + text + "\"",
                     PositionOf(token));
    }
    return value;
  }

  static std::string SignedNumberText(P::SignedNumberContext* ctx) {
    std::string text = ctx->number()->getStart()->getText();
    if (ctx->sign != nullptr && ctx->sign->getType() == P::MINUS) return "-" + text;
    return text;
  }

  static ExprPtr MakeLiteral(LiteralKind kind, std::string value, int position) {
    auto literal = MakeNode<LiteralExpr>(position);
    literal->literal_kind = kind;
    literal->value = std::move(value);
    return literal;
  }

  static ExprPtr MakeBinary(BinaryOp op, ExprPtr left, ExprPtr right) {
    auto binary = MakeNode<BinaryExpr>(left->position);
    binary->op = op;
    binary->left = std::move(left);
    binary->right = std::move(right);
    return binary;
  }

  // The exact text of `ctx` in the query string, from its first to its last token.
  std::string TextOf(antlr4::ParserRuleContext* ctx) const {
    return input_->getText(
        antlr4::misc::Interval(ctx->getStart()->getStartIndex(), ctx->getStop()->getStopIndex()));
  }

  antlr4::CharStream* input_;
  const StackLimit& stack_limit_;
  StatementPtr statement_;     // The result of the last statement visit.
  ExprPtr expr_;               // The result of the last expression visit.
  ExprPtr predicate_operand_;  // See TakePredicateOperand().
  int depth_ = 0;              // The depth of the expression being built; 1 at the root.
  // The parameter slots of the top-level statement being built, by number - 1.
  std::vector<std::shared_ptr<ParameterSlot>> parameters_;
};

}  // namespace

std::vector<StatementPtr> BuildAst(grammar::StaveSqlParser::MultiStatementContext* tree,
                                   antlr4::CharStream* input, const StackLimit& stack_limit) {
  AstBuilder builder(input, stack_limit);
  return builder.BuildStatements(tree);
}

}  // namespace stave::parser
