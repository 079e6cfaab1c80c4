#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/copy_format.h"
#include "common/data_type.h"
#include "common/value.h"

namespace stave::executor {

/// One column of a result set, as RowDescription describes it.
struct ResultColumn {
  std::string name;
  DataType type;
};

/// A NoticeResponse that goes with a statement's result, as PostgreSQL sends for
/// `DROP ... IF EXISTS` of a missing object or COMMIT outside a transaction.
struct Notice {
  std::string severity;  ///< "NOTICE" or "WARNING".
  std::string sqlstate;
  std::string message;
};

/// The outcome of one statement: a command tag ("SELECT 3", "CREATE STREAM", "SET") and,
/// for statements that return rows, the columns and the rows (one Value per column; a NULL
/// Value is SQL NULL).
struct QueryResult {
  std::string command_tag;
  bool returns_rows = false;  ///< RowDescription + DataRows precede CommandComplete.
  std::vector<ResultColumn> columns;
  std::vector<std::vector<Value>> rows;
  /// COPY ... TO STDOUT: the rows go to the client as CopyData in this format instead of
  /// RowDescription and DataRows.
  std::optional<CopyFormat> copy_out;
  /// Sent before the statement's CommandComplete.
  std::vector<Notice> notices;
};

}  // namespace stave::executor
