#pragma once

#include <functional>
#include <memory>

#include "executor/query_result.h"
#include "executor/transaction.h"
#include "parser/ast.h"
#include "planner/catalog.h"
#include "planner/expression_binder.h"
#include "storage/store.h"

namespace stave::executor {

/// Runs INSERT, UPDATE and DELETE into a Transaction (nothing is durable until Commit):
/// binds values and assignments against the table's columns with assignment coercion,
/// checks NOT NULL and primary keys (23502, 23505), and records the row changes.
class DmlExecutor {
 public:
  using TableLookup = std::function<std::shared_ptr<Table>(const planner::CatalogObject&)>;
  using SelectRunner = std::function<QueryResult(const parser::SelectStatement&)>;

  DmlExecutor(const planner::Catalog* catalog, const storage::Store* store, TableLookup tables,
              SelectRunner run_select)
      : catalog_(catalog),
        store_(store),
        tables_(std::move(tables)),
        run_select_(std::move(run_select)) {}

  /// Each returns the command tag ("INSERT 0 3", "UPDATE 2", "DELETE 1") and, with RETURNING,
  /// the rows its select list computes over the affected rows (new rows for INSERT and
  /// UPDATE, old rows for DELETE), in the order they were written.
  QueryResult Insert(const parser::InsertStatement& insert, Transaction* transaction);
  QueryResult Update(const parser::UpdateStatement& update, Transaction* transaction);
  QueryResult Delete(const parser::DeleteStatement& remove, Transaction* transaction);

  /// Binds an INSERT, UPDATE or DELETE without running it, so that the types of its
  /// parameters (`$n`, see parser::ParameterSlot) are inferred; also reports the errors
  /// binding finds (unknown table or column, type mismatches). Returns what the statement
  /// returns: RETURNING's columns, else no rows. Other statements: nothing.
  QueryResult Describe(const parser::Statement& statement) const;

  /// Applies a transaction atomically: locks its tables in id order, checks new keys again
  /// against writes committed meanwhile, and writes every table's log record and rows in
  /// one synced RocksDB write. Throws SqlError (23505,
  /// or an I/O error); on error nothing was written.
  static void Commit(Transaction* transaction, storage::Store* store);

  /// The table `name` that `verb` ("insert into", "copy to") writes: 42P01 if there is
  /// none, 42809 for a stream, view or sink.
  std::shared_ptr<Table> ResolveTable(const parser::QualifiedName& name, int position,
                                      std::string_view verb) const;
  /// The target columns (positions in `object`) of INSERT or COPY FROM, in the order values
  /// are given: `columns` as named (each written at `positions`, else at `position`), or all
  /// columns when none are named. 42703 for an unknown column, 42701 for a repeated one.
  static std::vector<size_t> InsertTargets(const std::vector<std::string>& columns,
                                           const std::vector<int>& positions, int position,
                                           const planner::CatalogObject& object);
  /// Adds the changes for one row written by INSERT or COPY FROM (or the new half of an
  /// UPDATE that moves a key) after NOT NULL and key checks (23502, 23505).
  void AddInsert(Transaction::TableWrites* writes, Transaction* transaction, std::vector<Value> row,
                 int position);

 private:
  /// UPDATE's SET list: target column positions and values coerced to their columns.
  static std::vector<std::pair<size_t, planner::BoundExprPtr>> BindAssignments(
      const parser::UpdateStatement& update, const planner::CatalogObject& object,
      planner::ExpressionBinder* binder);
  /// The result of a statement that affected `rows` (the table's changelog columns) of
  /// `table`: just `tag` without RETURNING, else RETURNING's select list over the rows,
  /// bound with the table's columns in scope under its name or `alias`.
  static QueryResult Returning(const planner::CatalogObject& table, const std::string& alias,
                               const std::vector<parser::SelectItem>& returning,
                               const std::vector<std::vector<Value>>& rows, std::string tag);
  /// The rows the transaction sees in a table, with their keys.
  std::vector<std::pair<std::string, std::vector<Value>>> CurrentRows(
      Transaction::TableWrites* writes) const;

  const planner::Catalog* catalog_;
  const storage::Store* store_;
  TableLookup tables_;
  SelectRunner run_select_;
};

}  // namespace stave::executor
