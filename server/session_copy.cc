#include <fmt/format.h>

#include "common/sql_error.h"
#include "parser/parser.h"
#include "server/session.h"

namespace stave::server {

executor::QueryResult Session::RunCopy(const parser::CopyStatement& copy) {
  executor::QueryResult result;
  try {
    std::vector<parser::StatementPtr> statements = parser::Parse(copy.query);
    if (statements.size() != 1) {
      throw SqlError(sqlstate::kSyntaxError, "COPY (query) TO takes a single query", 1);
    }
    if (statements.front()->kind != parser::StatementKind::kSelect) {
      throw SqlError(sqlstate::kFeatureNotSupported, "COPY (query) TO takes a SELECT query", 1);
    }
    result = RunInImplicitTransaction(*statements.front());
  } catch (const SqlError& error) {
    throw AtQueryPosition(error, copy.query_position);
  }
  result.returns_rows = false;
  result.copy_out = copy.format;
  result.command_tag = fmt::format("COPY {}", result.rows.size());
  return result;
}

}  // namespace stave::server
