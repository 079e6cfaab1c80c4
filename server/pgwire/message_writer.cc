#include "server/pgwire/message_writer.h"

#include <limits>
#include <stdexcept>
#include <string>

#include "server/pgwire/value_formats.h"

namespace stave::server::pgwire {

ErrorFields ErrorFields::FromSqlError(const SqlError& error) {
  ErrorFields fields;
  fields.severity = "ERROR";
  fields.sqlstate = error.sqlstate();
  fields.message = error.what();
  fields.detail = error.detail();
  fields.hint = error.hint();
  fields.context = error.context();
  fields.position = error.position();
  return fields;
}

void MessageWriter::PatchLength(size_t start) {
  size_t length = buffer_.size() - start - 1;  // The length word counts itself, not the type.
  if (length > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw std::length_error("backend message too large for the protocol");
  }
  auto value = static_cast<uint32_t>(length);
  buffer_[start + 1] = static_cast<char>(value >> 24);
  buffer_[start + 2] = static_cast<char>(value >> 16);
  buffer_[start + 3] = static_cast<char>(value >> 8);
  buffer_[start + 4] = static_cast<char>(value);
}

void MessageWriter::AddInt16(int16_t value) {
  auto bits = static_cast<uint16_t>(value);
  buffer_.push_back(static_cast<char>(bits >> 8));
  buffer_.push_back(static_cast<char>(bits));
}

void MessageWriter::AddInt32(int32_t value) {
  auto bits = static_cast<uint32_t>(value);
  buffer_.push_back(static_cast<char>(bits >> 24));
  buffer_.push_back(static_cast<char>(bits >> 16));
  buffer_.push_back(static_cast<char>(bits >> 8));
  buffer_.push_back(static_cast<char>(bits));
}

void MessageWriter::AddCString(std::string_view value) {
  buffer_.append(value.substr(0, value.find('\0')));
  buffer_.push_back('\0');
}

void MessageWriter::WriteAuthenticationOk() {
  WriteMessage('R', [&] { AddInt32(0); });
}

void MessageWriter::WriteAuthenticationRequest(int32_t code, std::string_view data) {
  WriteMessage('R', [&] {
    AddInt32(code);
    AddBytes(data);
  });
}

void MessageWriter::WriteParameterStatus(std::string_view name, std::string_view value) {
  WriteMessage('S', [&] {
    AddCString(name);
    AddCString(value);
  });
}

void MessageWriter::WriteBackendKeyData(int32_t process_id, int32_t secret_key) {
  WriteMessage('K', [&] {
    AddInt32(process_id);
    AddInt32(secret_key);
  });
}

void MessageWriter::WriteReadyForQuery(char transaction_status) {
  WriteMessage('Z', [&] { AddByte(transaction_status); });
}

namespace {

void CheckFormats(const std::vector<int16_t>& formats, size_t columns) {
  if (!formats.empty() && formats.size() != columns) {
    throw std::invalid_argument("result format codes do not match the result columns");
  }
}

bool IsBinary(const std::vector<int16_t>& formats, size_t column) {
  return !formats.empty() && formats[column] == kBinaryFormat;
}

}  // namespace

void MessageWriter::WriteRowDescription(const std::vector<executor::ResultColumn>& columns,
                                        const std::vector<int16_t>& formats) {
  if (columns.size() > static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
    throw std::invalid_argument("too many result columns for the protocol");
  }
  CheckFormats(formats, columns.size());
  WriteMessage('T', [&] {
    AddInt16(static_cast<int16_t>(columns.size()));
    for (size_t i = 0; i < columns.size(); ++i) {
      const executor::ResultColumn& column = columns[i];
      AddCString(column.name);
      AddInt32(0);  // Table OID: not a column of a table.
      AddInt16(0);  // Attribute number.
      AddInt32(column.type.Oid());
      AddInt16(column.type.TypeLength());
      AddInt32(column.type.Typmod());  // numeric(p, s) as PostgreSQL encodes it, else -1.
      AddInt16(IsBinary(formats, i) ? kBinaryFormat : kTextFormat);
    }
  });
}

void MessageWriter::WriteDataRow(const std::vector<Value>& row,
                                 const std::vector<executor::ResultColumn>& columns,
                                 const std::vector<int16_t>& formats) {
  if (row.size() != columns.size()) {
    throw std::invalid_argument("result row has " + std::to_string(row.size()) + " values but " +
                                std::to_string(columns.size()) + " columns");
  }
  if (columns.size() > static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
    throw std::invalid_argument("too many result columns for the protocol");
  }
  CheckFormats(formats, columns.size());
  WriteMessage('D', [&] {
    AddInt16(static_cast<int16_t>(columns.size()));
    for (size_t i = 0; i < row.size(); ++i) {
      if (row[i].is_null()) {
        AddInt32(-1);
        continue;
      }
      std::string text = IsBinary(formats, i) ? EncodeBinaryValue(row[i], columns[i].type)
                                              : row[i].ToText(columns[i].type);
      if (text.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
        throw std::length_error("result value too large for the protocol");
      }
      AddInt32(static_cast<int32_t>(text.size()));
      AddBytes(text);
    }
  });
}

void MessageWriter::WriteParseComplete() {
  WriteMessage('1', [] {});
}

void MessageWriter::WriteBindComplete() {
  WriteMessage('2', [] {});
}

void MessageWriter::WriteCloseComplete() {
  WriteMessage('3', [] {});
}

void MessageWriter::WriteNoData() {
  WriteMessage('n', [] {});
}

void MessageWriter::WritePortalSuspended() {
  WriteMessage('s', [] {});
}

void MessageWriter::WriteParameterDescription(const std::vector<DataType>& types) {
  std::vector<int32_t> oids;
  oids.reserve(types.size());
  for (DataType type : types) oids.push_back(type.Oid());
  WriteParameterOids(oids);
}

void MessageWriter::WriteParameterOids(const std::vector<int32_t>& oids) {
  if (oids.size() > static_cast<size_t>(std::numeric_limits<uint16_t>::max())) {
    throw std::invalid_argument("too many parameters for the protocol");
  }
  WriteMessage('t', [&] {
    AddInt16(static_cast<int16_t>(static_cast<uint16_t>(oids.size())));
    for (int32_t oid : oids) AddInt32(oid);
  });
}

void MessageWriter::WriteCommandComplete(std::string_view command_tag) {
  WriteMessage('C', [&] { AddCString(command_tag); });
}

void MessageWriter::WriteEmptyQueryResponse() {
  WriteMessage('I', [] {});
}

void MessageWriter::WriteErrorResponse(const ErrorFields& fields) {
  WriteErrorOrNotice('E', fields);
}

void MessageWriter::WriteCopyOutResponse(size_t columns) { WriteCopyResponse('H', columns); }

void MessageWriter::WriteCopyInResponse(size_t columns) { WriteCopyResponse('G', columns); }

void MessageWriter::WriteCopyResponse(char type, size_t columns) {
  if (columns > static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
    throw std::invalid_argument("too many result columns for the protocol");
  }
  WriteMessage(type, [&] {
    AddByte(0);  // Text, not binary.
    AddInt16(static_cast<int16_t>(columns));
    for (size_t i = 0; i < columns; ++i) AddInt16(0);
  });
}

void MessageWriter::WriteCopyData(std::string_view data) {
  WriteMessage('d', [&] { AddBytes(data); });
}

void MessageWriter::WriteCopyDone() {
  WriteMessage('c', [] {});
}

void MessageWriter::WriteNoticeResponse(const ErrorFields& fields) {
  WriteErrorOrNotice('N', fields);
}

void MessageWriter::WriteErrorOrNotice(char type, const ErrorFields& fields) {
  WriteMessage(type, [&] {
    AddByte('S');
    AddCString(fields.severity);
    AddByte('V');  // The non-localized severity; Stave does not localize.
    AddCString(fields.severity);
    AddByte('C');
    AddCString(fields.sqlstate);
    AddByte('M');
    AddCString(fields.message);
    if (!fields.detail.empty()) {
      AddByte('D');
      AddCString(fields.detail);
    }
    if (!fields.hint.empty()) {
      AddByte('H');
      AddCString(fields.hint);
    }
    if (fields.position > 0) {
      AddByte('P');
      AddCString(std::to_string(fields.position));
    }
    if (!fields.context.empty()) {
      AddByte('W');
      AddCString(fields.context);
    }
    AddByte('\0');
  });
}

void MessageWriter::WriteNegotiateProtocolVersion(
    int32_t newest_minor_version, const std::vector<std::string>& unrecognized_options) {
  WriteMessage('v', [&] {
    AddInt32(newest_minor_version);
    AddInt32(static_cast<int32_t>(unrecognized_options.size()));
    for (const std::string& option : unrecognized_options) AddCString(option);
  });
}

}  // namespace stave::server::pgwire
