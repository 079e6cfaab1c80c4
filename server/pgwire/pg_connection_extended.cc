// The extended query protocol of PgConnection: prepared statements and portals.

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "common/sql_error.h"
#include "server/pgwire/message_reader.h"
#include "server/pgwire/pg_connection.h"
#include "server/pgwire/protocol.h"
#include "server/pgwire/value_formats.h"

namespace stave::server::pgwire {
namespace {

constexpr std::string_view kDuplicatePreparedStatement = "42P05";
constexpr std::string_view kDuplicateCursor = "42P03";
constexpr std::string_view kInvalidStatementName = "26000";
constexpr std::string_view kInvalidCursorName = "34000";

// The format code of item `index` of `count` from a Bind message's list: none means text,
// one applies to all.
int16_t FormatOf(const std::vector<int16_t>& formats, size_t index) {
  if (formats.empty()) return kTextFormat;
  return formats.size() == 1 ? formats[0] : formats[index];
}

void CheckFormatCode(int16_t format) {
  if (format != kTextFormat && format != kBinaryFormat) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("unsupported format code: {}", format));
  }
}

// Quotes a statement or portal name as PostgreSQL's messages do ("" for the unnamed one).
std::string Quoted(std::string_view name) { return fmt::format("\"{}\"", name); }

}  // namespace

void PgConnection::RunExtendedMessage(char type, std::string_view body) {
  bool ok = RunReportingErrors([&] {
    switch (type) {
      case 'P':
        HandleParse(body);
        break;
      case 'B':
        HandleBind(body);
        break;
      case 'D':
        HandleDescribe(body);
        break;
      case 'E':
        HandleExecute(body);
        break;
      case 'C':
        HandleClose(body);
        break;
      default:
        break;
    }
  });
  if (!ok) skipping_until_sync_ = true;
  FlushIfLarge();
}

void PgConnection::HandleParse(std::string_view body) {
  ParseMessage message = ParseParseMessage(body);
  std::string name(message.statement_name);
  if (name.empty()) {
    statements_.erase(name);  // Replaced even if the new one fails.
  } else if (statements_.contains(name)) {
    throw SqlError(kDuplicatePreparedStatement,
                   fmt::format("prepared statement {} already exists", Quoted(name)));
  }
  std::vector<std::optional<DataType>> types;
  types.reserve(message.parameter_types.size());
  for (int32_t oid : message.parameter_types) types.push_back(DataTypeFromOid(oid));
  statements_[name] = session_->Prepare(message.query, types);
  writer_.WriteParseComplete();
}

void PgConnection::HandleBind(std::string_view body) {
  BindMessage message = ParseBindMessage(body);
  std::string portal_name(message.portal_name);
  if (portal_name.empty()) {
    portals_.erase(portal_name);
  } else if (portals_.contains(portal_name)) {
    throw SqlError(kDuplicateCursor, fmt::format("portal {} already exists", Quoted(portal_name)));
  }
  auto found = statements_.find(message.statement_name);
  if (found == statements_.end()) {
    throw SqlError(kInvalidStatementName, fmt::format("prepared statement {} does not exist",
                                                      Quoted(message.statement_name)));
  }
  const std::shared_ptr<const PreparedStatement>& statement = found->second;
  size_t count = message.parameters.size();
  if (message.parameter_formats.size() > 1 && message.parameter_formats.size() != count) {
    throw SqlError(sqlstate::kProtocolViolation,
                   fmt::format("bind message has {} parameter formats but {} parameters",
                               message.parameter_formats.size(), count));
  }
  if (count != statement->parameter_types.size()) {
    throw SqlError(
        sqlstate::kProtocolViolation,
        fmt::format("bind message supplies {} parameters, but prepared statement {} "
                    "requires {}",
                    count, Quoted(message.statement_name), statement->parameter_types.size()));
  }
  Portal portal;
  portal.statement = statement;
  portal.parameters.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    int16_t format = FormatOf(message.parameter_formats, i);
    CheckFormatCode(format);
    const std::optional<std::string_view>& bytes = message.parameters[i];
    portal.parameters.push_back(bytes
                                    ? DecodeParameter(*bytes, format, statement->parameter_types[i],
                                                      static_cast<int>(i + 1))
                                    : Value::Null());
  }
  for (int16_t format : message.result_formats) CheckFormatCode(format);
  const executor::QueryResult& description = statement->description;
  if (description.returns_rows) {
    size_t columns = description.columns.size();
    if (message.result_formats.size() > 1 && message.result_formats.size() != columns) {
      throw SqlError(sqlstate::kProtocolViolation,
                     fmt::format("bind message has {} result formats but query has {} columns",
                                 message.result_formats.size(), columns));
    }
    if (!message.result_formats.empty()) {
      for (size_t i = 0; i < columns; ++i) {
        portal.result_formats.push_back(FormatOf(message.result_formats, i));
      }
    }
  }
  portals_[portal_name] = std::move(portal);
  writer_.WriteBindComplete();
}

void PgConnection::HandleDescribe(std::string_view body) {
  TargetMessage message = ParseTargetMessage(body);
  if (message.kind == 'S') {
    auto found = statements_.find(message.name);
    if (found == statements_.end()) {
      throw SqlError(kInvalidStatementName,
                     fmt::format("prepared statement {} does not exist", Quoted(message.name)));
    }
    const PreparedStatement& statement = *found->second;
    if (statement.parameter_oids.empty()) {
      writer_.WriteParameterDescription(statement.parameter_types);
    } else {
      writer_.WriteParameterOids(statement.parameter_oids);
    }
    // Result formats are not known before Bind: the description says text.
    if (statement.description.returns_rows) {
      writer_.WriteRowDescription(statement.description.columns);
    } else {
      writer_.WriteNoData();
    }
    return;
  }
  auto found = portals_.find(message.name);
  if (found == portals_.end()) {
    if (std::optional<executor::QueryResult> cursor = session_->DescribeCursor(message.name)) {
      writer_.WriteRowDescription(cursor->columns);
      return;
    }
    throw SqlError(kInvalidCursorName,
                   fmt::format("portal {} does not exist", Quoted(message.name)));
  }
  const Portal& portal = found->second;
  if (portal.statement->description.returns_rows) {
    writer_.WriteRowDescription(portal.statement->description.columns, portal.result_formats);
  } else {
    writer_.WriteNoData();
  }
}

void PgConnection::HandleExecute(std::string_view body) {
  ExecuteMessage message = ParseExecuteMessage(body);
  auto found = portals_.find(message.portal_name);
  if (found == portals_.end()) {
    throw SqlError(kInvalidCursorName,
                   fmt::format("portal {} does not exist", Quoted(message.portal_name)));
  }
  Portal& portal = found->second;
  if (portal.statement->empty) {
    writer_.WriteEmptyQueryResponse();
    return;
  }
  if (!portal.executed) {
    // The whole result is computed by the first Execute; later ones continue through it.
    portal.result = session_->ExecutePrepared(*portal.statement, portal.parameters);
    portal.executed = true;
    SendChangedParameters();
    SendNotices(portal.result);
    if (portal.result.returns_rows &&
        portal.result.columns.size() != portal.statement->description.columns.size()) {
      // The catalog changed since Parse (a view dropped and created again): the rows no
      // longer match what the client was told.
      throw SqlError("0A000", "cached plan must not change result type");
    }
  }
  executor::QueryResult& result = portal.result;
  if (!result.returns_rows) {
    writer_.WriteCommandComplete(result.command_tag);
    return;
  }
  size_t remaining = result.rows.size() - portal.next_row;
  size_t batch = message.max_rows > 0 ? std::min<size_t>(remaining, message.max_rows) : remaining;
  for (size_t i = 0; i < batch; ++i) {
    writer_.WriteDataRow(result.rows[portal.next_row], result.columns, portal.result_formats);
    // Rows already sent are not needed again.
    result.rows[portal.next_row] = {};
    ++portal.next_row;
    FlushIfLarge();
  }
  if (portal.next_row < result.rows.size()) {
    writer_.WritePortalSuspended();
    return;
  }
  // As PostgreSQL, the tag of a query counts the rows of this Execute.
  if (result.command_tag.starts_with("SELECT")) {
    writer_.WriteCommandComplete(fmt::format("SELECT {}", batch));
  } else {
    writer_.WriteCommandComplete(result.command_tag);
  }
}

void PgConnection::HandleClose(std::string_view body) {
  TargetMessage message = ParseTargetMessage(body);
  // Closing what does not exist is not an error.
  if (message.kind == 'S') {
    auto found = statements_.find(message.name);
    if (found != statements_.end()) statements_.erase(found);
  } else {
    auto found = portals_.find(message.name);
    if (found != portals_.end()) portals_.erase(found);
  }
  writer_.WriteCloseComplete();
}

void PgConnection::HandleSync() {
  RunReportingErrors([&] { session_->Sync(); });
  // Portals live until the end of their transaction.
  if (session_->TransactionStatus() == 'I') portals_.clear();
  SendChangedParameters();
  writer_.WriteReadyForQuery(session_->TransactionStatus());
  Flush();
}

}  // namespace stave::server::pgwire
