#include "executor/transaction.h"

namespace stave::executor {

Transaction::TableWrites* Transaction::For(const std::shared_ptr<Table>& table) {
  TableWrites& writes = tables_[table->id()];
  if (!writes.table) writes.table = table;
  return &writes;
}

std::optional<std::vector<Value>> Transaction::Lookup(TableWrites* writes,
                                                      const std::string& key) const {
  auto it = writes->overlay.find(key);
  if (it != writes->overlay.end()) return it->second;
  return writes->table->Lookup(key);
}

}  // namespace stave::executor
