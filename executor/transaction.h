#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/table.h"

namespace stave::executor {

/// A session's uncommitted table writes: the changes of its DML statements per table, in
/// order, and an overlay of the rows they wrote, so later statements of the same
/// transaction see earlier ones. Applied atomically by Database::Commit; discarded by
/// ROLLBACK. Not thread-safe: owned by one session.
class Transaction {
 public:
  struct TableWrites {
    std::shared_ptr<Table> table;
    std::vector<TableChange> changes;
    /// Key → the row as this transaction leaves it (nullopt: deleted).
    std::map<std::string, std::optional<std::vector<Value>>> overlay;
  };

  /// The writes to `table`, created on first use.
  TableWrites* For(const std::shared_ptr<Table>& table);
  /// The row of `key` as this transaction sees it: its own write, else the latest durable one.
  std::optional<std::vector<Value>> Lookup(TableWrites* writes, const std::string& key) const;

  bool empty() const { return tables_.empty(); }
  std::map<uint32_t, TableWrites>& tables() { return tables_; }

 private:
  std::map<uint32_t, TableWrites> tables_;  // By table id: commits lock tables in id order.
};

}  // namespace stave::executor
