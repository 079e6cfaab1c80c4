#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/copy_format.h"
#include "common/sql_error.h"
#include "executor/dml.h"
#include "executor/transaction.h"

namespace stave::executor {

/// COPY table [(columns)] FROM STDIN: decodes the data a client sends, in PostgreSQL's text
/// or CSV format, into rows of the table and adds them to a Transaction as INSERT does (NOT
/// NULL, primary keys); the caller commits it, so a COPY writes all its rows or none.
///
/// Data arrives in pieces of any size (the protocol's CopyData messages need not end at a
/// line): each line is decoded and added as soon as it is complete, so the input itself is
/// never held whole, only the rows. Errors are PostgreSQL's, CONTEXT included: 22P04 for
/// lines with too few or too many fields or an unterminated CSV quote ("COPY t, line 3:
/// "…""), 22P02/22003/22008… for a bad value ("COPY t, line 3, column b: "x""), 23502 and
/// 23505 from the table's constraints. A line `\.` ends the data, as in PostgreSQL.
/// Not thread-safe.
class CopyFrom {
 public:
  /// `targets`: the positions in the table of the columns each line gives, in order.
  /// `transaction` must outlive this object.
  CopyFrom(DmlExecutor dml, std::shared_ptr<Table> table, std::vector<size_t> targets,
           CopyFormat format, Transaction* transaction);

  /// How many fields each line holds.
  size_t columns() const { return targets_.size(); }

  /// Decodes and adds every line that `data` completes. Throws SqlError.
  void Feed(std::string_view data);

  /// The end of the data (CopyDone): decodes a last line that has no line end. Returns how
  /// many rows were added. Throws SqlError.
  uint64_t Finish();

  /// "COPY t, line n": where the data is, for an error not found in the data (CopyFail).
  std::string Context() const;

 private:
  /// Decodes the complete lines of pending_ (also an unterminated last one when `at_end`).
  void DecodeLines(bool at_end);
  /// Where the line that starts at line_start_ ends (its line-end characters excluded), and
  /// sets next_line_ after them; nullopt when pending_ does not hold all of it yet.
  std::optional<size_t> FindLineEnd(bool at_end);
  void AddLine(std::string_view line);
  /// Splits a line into fields_ (nullopt: NULL), PostgreSQL's CopyReadAttributesText/CSV.
  void SplitText(std::string_view line);
  void SplitCsv(std::string_view line);
  /// An error found in `line`: its CONTEXT names the line, and the column if given.
  SqlError InLine(const SqlError& error, std::string_view line, const std::string* column = nullptr,
                  const std::optional<std::string>* value = nullptr) const;

  DmlExecutor dml_;
  std::shared_ptr<Table> table_;
  std::vector<size_t> targets_;
  CopyFormat format_;
  Transaction* transaction_;
  Transaction::TableWrites* writes_;

  std::string pending_;    // Data received but not decoded yet: the current line's start.
  size_t line_start_ = 0;  // In pending_.
  size_t scanned_ = 0;     // How far the line end was searched for, in pending_.
  size_t next_line_ = 0;   // Set by FindLineEnd.
  bool in_quote_ = false;  // CSV: at scanned_, inside a quoted field.
  bool ended_ = false;     // `\.` was seen: the rest of the data is ignored.
  bool header_skipped_ = false;
  uint64_t line_number_ = 0;         // Of the last line found, from 1.
  uint64_t quoted_line_breaks_ = 0;  // In the line being scanned, inside CSV quotes.
  uint64_t rows_ = 0;
  std::vector<std::optional<std::string>> fields_;
};

}  // namespace stave::executor
