// COPY ... FROM STDIN: the table and columns a client's rows go to.

#include "executor/database.h"

namespace stave::executor {

std::unique_ptr<CopyFrom> Database::StartCopyFrom(const parser::CopyStatement& copy,
                                                  Transaction* transaction) {
  statements_total_->fetch_add(1, std::memory_order_relaxed);
  DmlExecutor dml = MakeDml();
  std::shared_ptr<Table> table = dml.ResolveTable(copy.table, copy.table_position, "copy to");
  std::vector<size_t> targets = DmlExecutor::InsertTargets(copy.columns, copy.column_positions,
                                                           copy.table_position, table->object());
  return std::make_unique<CopyFrom>(std::move(dml), std::move(table), std::move(targets),
                                    copy.format, transaction);
}

}  // namespace stave::executor
