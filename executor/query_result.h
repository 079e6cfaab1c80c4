#pragma once

#include <string>
#include <vector>

#include "common/data_type.h"
#include "common/value.h"

namespace stave::executor {

/// One column of a result set, as RowDescription describes it.
struct ResultColumn {
  std::string name;
  DataType type;
};

/// The outcome of one statement: a command tag ("SELECT 3", "CREATE STREAM", "SET") and,
/// for statements that return rows, the columns and the rows (one Value per column; a NULL
/// Value is SQL NULL).
struct QueryResult {
  std::string command_tag;
  bool returns_rows = false;  ///< RowDescription + DataRows precede CommandComplete.
  std::vector<ResultColumn> columns;
  std::vector<std::vector<Value>> rows;
};

}  // namespace stave::executor
