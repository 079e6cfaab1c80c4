#include "executor/dml.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "common/failpoint.h"
#include "common/sql_error.h"
#include "common/value_cast.h"
#include "executor/expression_evaluator.h"
#include "executor/plan_builder.h"
#include "planner/expression_binder.h"
#include "planner/query_binder.h"
#include "storage/key_codec.h"
#include "storage/row_codec.h"

namespace stave::executor {
namespace {

using planner::BoundExpr;
using planner::BoundExprPtr;

// Whether a value of `from` may be stored into a column of `to` (PostgreSQL's assignment
// casts, for the types Stave has).
bool AssignmentAllowed(DataType from, DataType to) {
  if (from == to || from.id == TypeId::kUnknown) return true;
  if (from.IsNumeric() && to.IsNumeric()) return true;
  if (to.IsString()) return true;
  return IsAssignmentTemporalCast(from, to);
}

[[noreturn]] void ThrowAssignmentMismatch(const planner::Column& column, DataType from,
                                          int position) {
  throw SqlError(sqlstate::kDatatypeMismatch,
                 fmt::format("column \"{}\" is of type {} but expression is of type {}",
                             column.name, column.type.Name(), from.Name()),
                 position)
      .WithHint("You will need to rewrite or cast the expression.");
}

BoundExprPtr CoerceForAssignment(BoundExprPtr expr, const planner::Column& column, int position) {
  if (!AssignmentAllowed(expr->type, column.type))
    ThrowAssignmentMismatch(column, expr->type, position);
  if (expr->type == column.type) return expr;
  BoundExprPtr coerced = planner::ExpressionBinder::Coerce(expr, column.type, position);
  if (coerced->type == column.type) return coerced;
  return BoundExpr::MakeFunction(planner::ScalarFunction::kCast, column.type, {expr});
}

// Evaluates expressions that reference no column, for one VALUES row.
Value EvaluateConstant(const BoundExpr& expr) {
  Chunk one;
  one.ops.push_back(RowOp::kInsert);
  return Evaluate(expr, one).GetValue(0);
}

std::string FormatKey(const planner::CatalogObject& table, const std::vector<Value>& row) {
  std::string names, values;
  for (size_t i = 0; i < table.primary_key.size(); ++i) {
    size_t column = table.primary_key[i];
    if (i > 0) {
      names += ", ";
      values += ", ";
    }
    names += table.columns[column].name;
    values += row[column].is_null() ? "null" : row[column].ToText(table.columns[column].type);
  }
  return fmt::format("Key ({})=({}) already exists.", names, values);
}

// Fits `row` to the table's columns: throws 23502 for NULL in a NOT NULL column, and 22001
// for text longer than a varchar(n) column holds (trailing spaces past n are cut instead).
void CheckColumns(const planner::CatalogObject& table, std::vector<Value>* row, int position) {
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (table.columns[i].type.IsString() && table.columns[i].type.length > 0) {
      try {
        (*row)[i] = FitLength((*row)[i], table.columns[i].type);
      } catch (SqlError& error) {
        throw error.WithPositionIfUnset(position);
      }
    }
    if ((*row)[i].is_null() && table.columns[i].not_null) {
      throw SqlError("23502",
                     fmt::format("null value in column \"{}\" of relation \"{}\" violates not-null "
                                 "constraint",
                                 table.columns[i].name, table.name),
                     position);
    }
  }
}

}  // namespace

std::shared_ptr<Table> DmlExecutor::ResolveTable(const parser::QualifiedName& name, int position,
                                                 std::string_view verb) const {
  std::string resolved = planner::ResolveObjectName(name, position);
  planner::CatalogObjectPtr object = catalog_->Find(resolved);
  if (!object) {
    throw SqlError(sqlstate::kUndefinedTable,
                   fmt::format("relation \"{}\" does not exist", resolved), position);
  }
  if (object->type != planner::ObjectType::kTable) {
    throw SqlError(
        sqlstate::kWrongObjectType,
        fmt::format("cannot {} {} \"{}\"", verb, planner::ObjectTypeName(object->type), resolved),
        position)
        .WithHint(object->type == planner::ObjectType::kStream
                      ? "A stream is fed by its connector. Create a table to write rows with SQL."
                  : object->type == planner::ObjectType::kSink
                      ? "A sink writes its input to an external system; it holds no rows."
                      : "A materialized view is maintained from its query.");
  }
  std::shared_ptr<Table> table = tables_(*object);
  if (!table)
    throw SqlError(sqlstate::kUndefinedTable,
                   fmt::format("relation \"{}\" does not exist", resolved), position);
  return table;
}

void DmlExecutor::AddInsert(Transaction::TableWrites* writes, Transaction* transaction,
                            std::vector<Value> row, int position) {
  const planner::CatalogObject& table = writes->table->object();
  CheckColumns(table, &row, position);
  if (table.HasRowId()) {
    std::lock_guard lock(writes->table->mutex());
    row.push_back(Value::Int(writes->table->AllocateRowId()));
  }
  std::string key = writes->table->KeyOf(row);
  if (!table.HasRowId() && transaction->Lookup(writes, key)) {
    throw SqlError(
        "23505",
        fmt::format("duplicate key value violates unique constraint \"{}_pkey\"", table.name),
        position)
        .WithDetail(FormatKey(table, row));
  }
  writes->overlay[key] = row;
  writes->changes.push_back({RowOp::kInsert, std::move(key), std::move(row)});
}

QueryResult DmlExecutor::Returning(const planner::CatalogObject& table, const std::string& alias,
                                   const std::vector<parser::SelectItem>& returning,
                                   const std::vector<std::vector<Value>>& rows, std::string tag) {
  QueryResult result;
  result.command_tag = std::move(tag);
  if (returning.empty()) return result;
  result.returns_rows = true;
  planner::BindScope scope{table.name, alias, table.columns, {}, {}};
  planner::ExpressionBinder binder(&scope);
  std::vector<BoundExprPtr> expressions;
  const std::string& name = alias.empty() ? table.name : alias;
  for (const parser::SelectItem& item : returning) {
    if (item.expr->kind == parser::ExprKind::kStar) {
      const auto& star = static_cast<const parser::StarExpr&>(*item.expr);
      if (!star.qualifier.empty() && star.qualifier.back() != name) {
        throw SqlError(
            sqlstate::kUndefinedTable,
            fmt::format("missing FROM-clause entry for table \"{}\"", star.qualifier.back()),
            item.expr->position);
      }
      for (size_t i = 0; i < table.columns.size(); ++i) {
        expressions.push_back(BoundExpr::MakeColumn(i, table.columns[i].type));
        result.columns.push_back({table.columns[i].name, table.columns[i].type});
      }
      continue;
    }
    if (planner::ContainsAggregate(*item.expr)) {
      throw SqlError(sqlstate::kGroupingError, "aggregate functions are not allowed in RETURNING",
                     item.expr->position);
    }
    BoundExprPtr bound = binder.Bind(*item.expr);
    DataType type = bound->type.id == TypeId::kUnknown ? DataType(TypeId::kVarchar) : bound->type;
    expressions.push_back(bound);
    result.columns.push_back(
        {item.alias.empty() ? planner::DefaultColumnName(*item.expr) : item.alias, type});
  }
  std::vector<DataType> types;
  for (const planner::Column& column : table.ChangelogColumns()) types.push_back(column.type);
  Chunk chunk = Chunk::WithTypes(types);
  for (const std::vector<Value>& row : rows) chunk.AppendRow(row, RowOp::kInsert);
  std::vector<Column> values;
  for (const BoundExprPtr& expr : expressions) values.push_back(Evaluate(*expr, chunk));
  for (size_t r = 0; r < chunk.size(); ++r) {
    std::vector<Value>& row = result.rows.emplace_back();
    for (const Column& column : values) row.push_back(column.GetValue(r));
  }
  return result;
}

std::vector<size_t> DmlExecutor::InsertTargets(const std::vector<std::string>& columns,
                                               const std::vector<int>& positions,
                                               int statement_position,
                                               const planner::CatalogObject& object) {
  std::vector<size_t> targets;
  if (columns.empty()) {
    for (size_t i = 0; i < object.columns.size(); ++i) targets.push_back(i);
  } else {
    for (size_t i = 0; i < columns.size(); ++i) {
      auto it = std::find_if(object.columns.begin(), object.columns.end(),
                             [&](const planner::Column& c) { return c.name == columns[i]; });
      int position = i < positions.size() ? positions[i] : statement_position;
      if (it == object.columns.end()) {
        throw SqlError(
            sqlstate::kUndefinedColumn,
            fmt::format("column \"{}\" of relation \"{}\" does not exist", columns[i], object.name),
            position);
      }
      size_t index = static_cast<size_t>(it - object.columns.begin());
      if (std::find(targets.begin(), targets.end(), index) != targets.end()) {
        throw SqlError("42701", fmt::format("column \"{}\" specified more than once", columns[i]),
                       position);
      }
      targets.push_back(index);
    }
  }
  return targets;
}

QueryResult DmlExecutor::Insert(const parser::InsertStatement& insert, Transaction* transaction) {
  std::shared_ptr<Table> table = ResolveTable(insert.table, insert.table_position, "insert into");
  const planner::CatalogObject& object = table->object();
  std::vector<size_t> targets =
      InsertTargets(insert.columns, insert.column_positions, insert.position, object);

  std::vector<std::vector<Value>> rows;
  // Without a column list, fewer values than columns fill the first columns (the others
  // take their defaults), as in PostgreSQL.
  auto fill_first = [&](size_t width) {
    if (insert.columns.empty() && width < targets.size()) targets.resize(width);
  };
  if (insert.query) {
    QueryResult result = run_select_(*insert.query);
    fill_first(result.columns.size());
    if (result.columns.size() != targets.size()) {
      throw SqlError(sqlstate::kSyntaxError,
                     result.columns.size() > targets.size()
                         ? "INSERT has more expressions than target columns"
                         : "INSERT has more target columns than expressions",
                     insert.query->position);
    }
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!AssignmentAllowed(result.columns[i].type, object.columns[targets[i]].type)) {
        ThrowAssignmentMismatch(object.columns[targets[i]], result.columns[i].type,
                                insert.query->position);
      }
    }
    for (auto& source : result.rows) {
      std::vector<Value> row(object.columns.size());
      for (size_t i = 0; i < targets.size(); ++i) {
        try {
          row[targets[i]] =
              CastValue(source[i], result.columns[i].type, object.columns[targets[i]].type);
        } catch (SqlError& error) {
          throw error.WithPositionIfUnset(insert.query->position);
        }
      }
      rows.push_back(std::move(row));
    }
  } else {
    planner::BindScope empty;
    planner::ExpressionBinder binder(&empty);
    for (const auto& values : insert.values) {
      if (values.size() != insert.values.front().size()) {
        throw SqlError(sqlstate::kSyntaxError, "VALUES lists must all be the same length",
                       values.empty() ? insert.position : values.front()->position);
      }
    }
    if (!insert.values.empty()) fill_first(insert.values.front().size());
    for (const auto& values : insert.values) {
      if (values.size() != targets.size()) {
        throw SqlError(sqlstate::kSyntaxError,
                       values.size() > targets.size()
                           ? "INSERT has more expressions than target columns"
                           : "INSERT has more target columns than expressions",
                       values.empty() ? insert.position : values.front()->position);
      }
      std::vector<Value> row(object.columns.size());
      for (size_t i = 0; i < targets.size(); ++i) {
        const planner::Column& column = object.columns[targets[i]];
        BoundExprPtr bound =
            CoerceForAssignment(binder.Bind(*values[i]), column, values[i]->position);
        try {
          row[targets[i]] = EvaluateConstant(*bound);
        } catch (SqlError& error) {
          throw error.WithPositionIfUnset(values[i]->position);
        }
      }
      rows.push_back(std::move(row));
    }
  }
  Transaction::TableWrites* writes = transaction->For(table);
  std::vector<std::vector<Value>> affected;
  for (auto& row : rows) {
    AddInsert(writes, transaction, std::move(row), insert.position);
    affected.push_back(writes->changes.back().row);
  }
  return Returning(object, "", insert.returning, affected,
                   fmt::format("INSERT 0 {}", affected.size()));
}

std::vector<std::pair<std::string, std::vector<Value>>> DmlExecutor::CurrentRows(
    Transaction::TableWrites* writes) const {
  const planner::CatalogObject& object = writes->table->object();
  storage::RowTypes visible;
  for (const auto& column : object.columns) visible.push_back(column.type);
  std::map<std::string, std::vector<Value>> rows;
  std::shared_ptr<const storage::Snapshot> snapshot = store_->NewSnapshot().ValueOrThrow();
  std::optional<SqlError> error;
  snapshot
      ->ScanStateTable(StateTableId(object.id, Table::kRowsSlot),
                       [&](std::string_view key, std::string_view value) {
                         std::string_view logical = key.substr(2);  // Skip the virtual node.
                         auto row = storage::DecodeRow(value, visible);
                         if (!row) {
                           error =
                               SqlError("XX001", "corrupt row in table \"" + object.name + "\"");
                           return false;
                         }
                         if (object.HasRowId()) {
                           std::string_view rest = logical;
                           Value row_id;
                           storage::DecodeKeyValue(&rest, TypeId::kInt64, &row_id);
                           row->push_back(row_id);
                         }
                         rows.emplace(std::string(logical), std::move(*row));
                         return true;
                       })
      .ThrowIfError();
  if (error) throw *error;
  for (const auto& [key, row] : writes->overlay) {
    if (row) {
      rows[key] = *row;
    } else {
      rows.erase(key);
    }
  }
  return {rows.begin(), rows.end()};
}

std::vector<std::pair<size_t, BoundExprPtr>> DmlExecutor::BindAssignments(
    const parser::UpdateStatement& update, const planner::CatalogObject& object,
    planner::ExpressionBinder* binder) {
  std::vector<std::pair<size_t, BoundExprPtr>> assignments;
  for (const parser::Assignment& assignment : update.assignments) {
    auto it = std::find_if(object.columns.begin(), object.columns.end(),
                           [&](const planner::Column& c) { return c.name == assignment.column; });
    if (it == object.columns.end()) {
      throw SqlError(sqlstate::kUndefinedColumn,
                     fmt::format("column \"{}\" of relation \"{}\" does not exist",
                                 assignment.column, object.name),
                     assignment.position);
    }
    size_t index = static_cast<size_t>(it - object.columns.begin());
    for (const auto& [other, expr] : assignments) {
      if (other == index) {
        throw SqlError("42601",
                       fmt::format("multiple assignments to same column \"{}\"", assignment.column),
                       assignment.position);
      }
    }
    assignments.emplace_back(index, CoerceForAssignment(binder->Bind(*assignment.value), *it,
                                                        assignment.value->position));
  }
  return assignments;
}

QueryResult DmlExecutor::Update(const parser::UpdateStatement& update, Transaction* transaction) {
  std::shared_ptr<Table> table = ResolveTable(update.table.name, update.table.position, "update");
  const planner::CatalogObject& object = table->object();
  if (object.append_only) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("cannot update the APPEND ONLY table \"{}\"", object.name),
                   update.position);
  }
  planner::BindScope scope{object.name, update.table.alias, object.columns, {}, {}};
  planner::ExpressionBinder binder(&scope);
  BoundExprPtr where = update.where ? binder.BindPredicate(*update.where, "WHERE") : nullptr;
  std::vector<std::pair<size_t, BoundExprPtr>> assignments =
      BindAssignments(update, object, &binder);

  Transaction::TableWrites* writes = transaction->For(table);
  auto current = CurrentRows(writes);
  storage::RowTypes types = table->changelog_types();
  Chunk chunk = Chunk::WithTypes(types);
  for (const auto& [key, row] : current) chunk.AppendRow(row, RowOp::kInsert);
  std::vector<uint8_t> matched =
      where ? EvaluatePredicate(*where, chunk) : std::vector<uint8_t>(chunk.size(), 1);
  Chunk selected = chunk.Select(matched);
  std::vector<Column> values;
  for (const auto& [index, expr] : assignments) values.push_back(Evaluate(*expr, selected));

  // Old rows leave first, so a key freed by one row may be taken by another.
  std::vector<std::pair<std::vector<Value>, std::vector<Value>>> changed;
  for (size_t r = 0; r < selected.size(); ++r) {
    std::vector<Value> old_row = selected.GetRow(r);
    std::vector<Value> new_row = old_row;
    for (size_t a = 0; a < assignments.size(); ++a)
      new_row[assignments[a].first] = values[a].GetValue(r);
    CheckColumns(object, &new_row, update.position);
    changed.emplace_back(std::move(old_row), std::move(new_row));
  }
  std::vector<std::vector<Value>> moved;  // New rows whose key changed: inserted last.
  std::vector<std::vector<Value>> affected;
  for (const auto& [old_row, new_row] : changed) affected.push_back(new_row);
  for (auto& [old_row, new_row] : changed) {
    std::string old_key = table->KeyOf(old_row);
    std::string new_key = table->KeyOf(new_row);
    if (old_key == new_key) {
      writes->overlay[new_key] = new_row;
      writes->changes.push_back({RowOp::kUpdateDelete, old_key, std::move(old_row)});
      writes->changes.push_back({RowOp::kUpdateInsert, new_key, std::move(new_row)});
    } else {
      writes->overlay[old_key] = std::nullopt;
      writes->changes.push_back({RowOp::kDelete, old_key, std::move(old_row)});
      moved.push_back(std::move(new_row));
    }
  }
  for (auto& new_row : moved) {
    AddInsert(writes, transaction, std::move(new_row), update.position);
  }
  return Returning(object, update.table.alias, update.returning, affected,
                   fmt::format("UPDATE {}", changed.size()));
}

QueryResult DmlExecutor::Delete(const parser::DeleteStatement& remove, Transaction* transaction) {
  std::shared_ptr<Table> table =
      ResolveTable(remove.table.name, remove.table.position, "delete from");
  const planner::CatalogObject& object = table->object();
  if (object.append_only) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("cannot delete from the APPEND ONLY table \"{}\"", object.name),
                   remove.position);
  }
  planner::BindScope scope{object.name, remove.table.alias, object.columns, {}, {}};
  planner::ExpressionBinder binder(&scope);
  BoundExprPtr where = remove.where ? binder.BindPredicate(*remove.where, "WHERE") : nullptr;
  Transaction::TableWrites* writes = transaction->For(table);
  auto current = CurrentRows(writes);
  Chunk chunk = Chunk::WithTypes(table->changelog_types());
  for (const auto& [key, row] : current) chunk.AppendRow(row, RowOp::kInsert);
  std::vector<uint8_t> matched =
      where ? EvaluatePredicate(*where, chunk) : std::vector<uint8_t>(chunk.size(), 1);
  std::vector<std::vector<Value>> affected;
  for (size_t r = 0; r < current.size(); ++r) {
    if (!matched[r]) continue;
    writes->overlay[current[r].first] = std::nullopt;
    writes->changes.push_back({RowOp::kDelete, current[r].first, current[r].second});
    affected.push_back(current[r].second);
  }
  return Returning(object, remove.table.alias, remove.returning, affected,
                   fmt::format("DELETE {}", affected.size()));
}

QueryResult DmlExecutor::Describe(const parser::Statement& statement) const {
  switch (statement.kind) {
    case parser::StatementKind::kInsert: {
      const auto& insert = static_cast<const parser::InsertStatement&>(statement);
      std::shared_ptr<Table> table =
          ResolveTable(insert.table, insert.table_position, "insert into");
      const planner::CatalogObject& object = table->object();
      std::vector<size_t> targets =
          InsertTargets(insert.columns, insert.column_positions, insert.position, object);
      if (insert.query) {
        planner::BindQuery(*insert.query, *catalog_, planner::QueryPurpose::kBatch);
        return Returning(object, "", insert.returning, {}, "");
      }
      planner::BindScope empty;
      planner::ExpressionBinder binder(&empty);
      for (const auto& values : insert.values) {
        for (size_t i = 0; i < values.size() && i < targets.size(); ++i) {
          CoerceForAssignment(binder.Bind(*values[i]), object.columns[targets[i]],
                              values[i]->position);
        }
      }
      return Returning(object, "", insert.returning, {}, "");
    }
    case parser::StatementKind::kUpdate: {
      const auto& update = static_cast<const parser::UpdateStatement&>(statement);
      std::shared_ptr<Table> table =
          ResolveTable(update.table.name, update.table.position, "update");
      const planner::CatalogObject& object = table->object();
      planner::BindScope scope{object.name, update.table.alias, object.columns, {}, {}};
      planner::ExpressionBinder binder(&scope);
      // Assignments first: in `SET a = $1 WHERE a = $1` PostgreSQL types $1 by the target.
      BindAssignments(update, object, &binder);
      if (update.where) binder.BindPredicate(*update.where, "WHERE");
      return Returning(object, update.table.alias, update.returning, {}, "");
    }
    case parser::StatementKind::kDelete: {
      const auto& remove = static_cast<const parser::DeleteStatement&>(statement);
      std::shared_ptr<Table> table =
          ResolveTable(remove.table.name, remove.table.position, "delete from");
      const planner::CatalogObject& object = table->object();
      planner::BindScope scope{object.name, remove.table.alias, object.columns, {}, {}};
      planner::ExpressionBinder binder(&scope);
      if (remove.where) binder.BindPredicate(*remove.where, "WHERE");
      return Returning(object, remove.table.alias, remove.returning, {}, "");
    }
    default:
      return {};
  }
}

void DmlExecutor::Commit(Transaction* transaction, storage::Store* store) {
  std::vector<std::unique_lock<std::mutex>> locks;
  for (auto& [id, writes] : transaction->tables()) locks.emplace_back(writes.table->mutex());
  // Keys this transaction inserts must still be free: another session may have committed
  // the same key since the statement checked.
  for (auto& [id, writes] : transaction->tables()) {
    const planner::CatalogObject& object = writes.table->object();
    if (object.HasRowId()) continue;
    std::map<std::string, bool> present;  // Key → present after the changes so far.
    for (const TableChange& change : writes.changes) {
      auto it = present.find(change.key);
      bool exists = it != present.end() ? it->second : writes.table->Lookup(change.key).has_value();
      if (change.op == RowOp::kInsert && exists) {
        throw SqlError(
            "23505",
            fmt::format("duplicate key value violates unique constraint \"{}_pkey\"", object.name))
            .WithDetail(FormatKey(object, change.row));
      }
      present[change.key] = RowSign(change.op) > 0;
    }
  }
  storage::WriteBatch batch;
  std::vector<std::pair<Table*, uint64_t>> published;
  for (auto& [id, writes] : transaction->tables()) {
    if (writes.changes.empty()) continue;
    uint64_t sequence = writes.table->AddToBatch(writes.changes, &batch);
    published.emplace_back(writes.table.get(), sequence + 1);
  }
  if (published.empty()) return;
  failpoint::Hit("table_write_before_sync");
  store->WriteDurably(&batch).ThrowIfError();
  for (auto& [table, next] : published) table->Published(next);
  failpoint::Hit("table_write_after_sync");
}

}  // namespace stave::executor
