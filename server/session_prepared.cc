// The extended query protocol's side of Session: statements prepared by Parse and run by
// Execute with parameters.

#include <fmt/format.h>

#include "common/sql_error.h"
#include "parser/parse_cache.h"
#include "parser/parser.h"
#include "server/session.h"

namespace stave::server {
namespace {

/// What Session keeps of a prepared statement: the syntax tree, whose parameter slots are
/// filled in before each run. A statement without parameters is the parse cache's, shared.
struct SessionPreparedStatement : PreparedStatement {
  std::shared_ptr<const parser::Statement> statement;
  /// Instead of `statement`: DECLARE, FETCH, MOVE or CLOSE (they take no parameters).
  std::optional<parser::CursorStatement> cursor;
};

// Whether `$n` may stand for a value in a statement of `kind`. Definitions that are kept
// (views, sinks, streams, tables) are planned again from their text when the server starts,
// where no value would be at hand, so they take none, as in PostgreSQL.
bool TakesParameters(parser::StatementKind kind) {
  using Kind = parser::StatementKind;
  return kind == Kind::kSelect || kind == Kind::kInsert || kind == Kind::kUpdate ||
         kind == Kind::kDelete || kind == Kind::kExplain;
}

// Sets every slot's mode (and, for kBound, value); back to kNoValue when the scope ends,
// so a statement never runs with the values of an earlier Execute.
class SlotModeScope {
 public:
  SlotModeScope(const std::vector<std::shared_ptr<parser::ParameterSlot>>& slots,
                parser::ParameterSlot::Mode mode, const std::vector<Value>* values = nullptr)
      : slots_(slots) {
    for (size_t i = 0; i < slots_.size(); ++i) {
      slots_[i]->mode = mode;
      if (values != nullptr) slots_[i]->value = (*values)[i];
    }
  }
  ~SlotModeScope() {
    for (const auto& slot : slots_) {
      slot->mode = parser::ParameterSlot::Mode::kNoValue;
      slot->value = Value::Null();
    }
  }
  SlotModeScope(const SlotModeScope&) = delete;
  SlotModeScope& operator=(const SlotModeScope&) = delete;

 private:
  const std::vector<std::shared_ptr<parser::ParameterSlot>>& slots_;
};

}  // namespace

std::shared_ptr<const PreparedStatement> Session::Prepare(
    std::string_view sql, const std::vector<std::optional<DataType>>& parameter_types) {
  if (std::optional<parser::CursorStatement> cursor = parser::ParseCursorStatement(sql)) {
    if (!parameter_types.empty() || sql.find('$') != std::string_view::npos) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "bound parameters are not supported in cursor statements");
    }
    auto prepared = std::make_shared<SessionPreparedStatement>();
    prepared->description = DescribeCursorStatement(*cursor);
    prepared->cursor = std::move(cursor);
    return prepared;
  }
  if (parser::ParseCopy(sql)) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "COPY is supported in the simple query protocol only");
  }
  // A statement that may have parameters gets a tree of its own, whose slots this session
  // fills in; one without is immutable, so the parse cache's tree is shared.
  bool may_have_parameters = !parameter_types.empty() || sql.find('$') != std::string_view::npos;
  std::vector<parser::StatementPtr> own;
  std::shared_ptr<const parser::ParseCache::Statements> shared;
  if (may_have_parameters) {
    own = parser::Parse(sql);
  } else {
    shared = parser::ParseCache::Shared().Parse(sql);
  }
  const std::vector<parser::StatementPtr>& statements = may_have_parameters ? own : *shared;
  if (statements.size() > 1) {
    throw SqlError(sqlstate::kSyntaxError,
                   "cannot insert multiple commands into a prepared statement");
  }
  auto prepared = std::make_shared<SessionPreparedStatement>();
  if (statements.empty()) {
    prepared->empty = true;
    for (const std::optional<DataType>& type : parameter_types) {
      prepared->parameter_types.push_back(type.value_or(TypeId::kVarchar));
    }
    return prepared;
  }
  if (transaction_ == TransactionState::kFailed &&
      statements.front()->kind != parser::StatementKind::kTransaction) {
    throw SqlError(
        sqlstate::kInFailedTransaction,
        "current transaction is aborted, commands ignored until end of transaction block");
  }
  if (may_have_parameters) {
    parser::StatementPtr statement = std::move(own.front());
    // Parameters declared but never used still count, as in PostgreSQL.
    while (statement->parameters.size() < parameter_types.size()) {
      statement->parameters.push_back(std::make_shared<parser::ParameterSlot>());
    }
    prepared->statement = std::move(statement);
  } else {
    prepared->statement = std::shared_ptr<const parser::Statement>(shared, shared->front().get());
  }
  const std::vector<std::shared_ptr<parser::ParameterSlot>>& slots =
      prepared->statement->parameters;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (i < parameter_types.size() && parameter_types[i]) slots[i]->type = *parameter_types[i];
  }
  if (!slots.empty() && !TakesParameters(prepared->statement->kind)) {
    if (prepared->statement->kind == parser::StatementKind::kCreateMaterializedView) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "materialized views may not be defined using bound parameters");
    }
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "bound parameters are only supported in SELECT, INSERT, UPDATE, DELETE and "
                   "EXPLAIN");
  }
  {
    SlotModeScope describing(slots, parser::ParameterSlot::Mode::kDescribe);
    prepared->description = Describe(*prepared->statement);
  }
  for (const auto& slot : slots) {
    // A parameter nothing decides is text, as PostgreSQL resolves an unknown.
    constexpr int32_t kTextOid = 25;
    bool untyped = slot->type.id == TypeId::kUnknown;
    if (untyped) slot->type = TypeId::kVarchar;
    prepared->parameter_types.push_back(slot->type);
    prepared->parameter_oids.push_back(untyped ? kTextOid : slot->type.Oid());
  }
  return prepared;
}

executor::QueryResult Session::Describe(const parser::Statement& statement) {
  executor::QueryResult description;
  switch (statement.kind) {
    case parser::StatementKind::kShowVariable: {
      const auto& show = static_cast<const parser::ShowVariableStatement&>(statement);
      // SHOW reads a setting and changes nothing: running it tells its columns.
      executor::QueryResult result = Show(show);
      description.returns_rows = true;
      description.columns = std::move(result.columns);
      return description;
    }
    case parser::StatementKind::kSetVariable:
    case parser::StatementKind::kResetVariable:
    case parser::StatementKind::kTransaction:
      return description;
    default: {
      planner::ScopedSessionValues session_values(this);
      return database_->Describe(statement);
    }
  }
}

executor::QueryResult Session::ExecutePrepared(const PreparedStatement& statement,
                                               const std::vector<Value>& parameters) {
  const auto& prepared = static_cast<const SessionPreparedStatement&>(statement);
  if (prepared.cursor) {
    if (transaction_ == TransactionState::kIdle) {
      writes_ = std::make_unique<executor::Transaction>();
      transaction_ = TransactionState::kImplicit;
    }
    return RunCursorStatement(*prepared.cursor);
  }
  const parser::Statement& parsed = *prepared.statement;
  if (parameters.size() != parsed.parameters.size()) {
    throw SqlError(sqlstate::kProtocolViolation,
                   fmt::format("bind message supplies {} parameters, but prepared statement "
                               "requires {}",
                               parameters.size(), parsed.parameters.size()));
  }
  SlotModeScope bound(parsed.parameters, parser::ParameterSlot::Mode::kBound, &parameters);
  if (transaction_ == TransactionState::kIdle) {
    // Statements until the next Sync are one transaction, as PostgreSQL runs them.
    writes_ = std::make_unique<executor::Transaction>();
    transaction_ = TransactionState::kImplicit;
  }
  return RunInImplicitTransaction(parsed);
}

void Session::Sync() {
  if (transaction_ == TransactionState::kImplicit) CommitImplicit();
}

}  // namespace stave::server
