#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/sql_error.h"
#include "common/value.h"
#include "executor/query_result.h"

namespace stave::server::pgwire {

/// The fields of an ErrorResponse or NoticeResponse that Stave sends.
struct ErrorFields {
  std::string severity = "ERROR";  ///< "ERROR", "FATAL", "NOTICE", ...; sent as S and V.
  std::string sqlstate;            ///< Five characters, sent as C.
  std::string message;             ///< Sent as M.
  std::string detail;              ///< Sent as D when not empty.
  std::string hint;                ///< Sent as H when not empty.
  std::string context;             ///< Sent as W when not empty.
  int position = 0;                ///< 1-based character offset into the query; P when > 0.

  /// The fields of a statement error (severity ERROR).
  static ErrorFields FromSqlError(const SqlError& error);
};

/// Builds backend messages into one growing buffer that the caller sends in one write.
///
/// Each Write* call appends one complete message and has the strong exception guarantee:
/// if it throws (for example because a Value does not hold what its column type says), the
/// buffer is left as it was, so a half-built message is never sent. Strings sent as
/// NUL-terminated fields (names, tags, error texts) are cut at an embedded NUL, which the
/// protocol cannot carry. Not thread-safe.
class MessageWriter {
 public:
  void WriteAuthenticationOk();
  /// An AuthenticationRequest ('R') with `code` (3 cleartext, 5 MD5, 10 SASL, 11 SASL
  /// continue, 12 SASL final) followed by `data` as is.
  void WriteAuthenticationRequest(int32_t code, std::string_view data);
  void WriteParameterStatus(std::string_view name, std::string_view value);
  void WriteBackendKeyData(int32_t process_id, int32_t secret_key);
  /// `transaction_status` is 'I', 'T' or 'E'.
  void WriteReadyForQuery(char transaction_status);
  /// Table OID and attribute number 0, type modifier -1. `formats`: the format code of
  /// each column (kTextFormat or kBinaryFormat of value_formats.h); empty for text.
  /// REQUIRES (checked): `formats` empty or one per column.
  void WriteRowDescription(const std::vector<executor::ResultColumn>& columns,
                           const std::vector<int16_t>& formats = {});
  /// One DataRow: a NULL Value is length -1, any other its ToText(type), or its binary
  /// format where `formats` asks for it (as in WriteRowDescription).
  /// REQUIRES (checked, throws std::invalid_argument): one value per column.
  void WriteDataRow(const std::vector<Value>& row,
                    const std::vector<executor::ResultColumn>& columns,
                    const std::vector<int16_t>& formats = {});
  /// The extended query protocol's acknowledgements.
  void WriteParseComplete();
  void WriteBindComplete();
  void WriteCloseComplete();
  void WriteNoData();
  void WritePortalSuspended();
  /// The type OIDs of a prepared statement's parameters.
  void WriteParameterDescription(const std::vector<DataType>& types);
  /// ParameterDescription with the OIDs given.
  void WriteParameterOids(const std::vector<int32_t>& oids);
  void WriteCommandComplete(std::string_view command_tag);
  void WriteEmptyQueryResponse();
  /// CopyOutResponse of COPY ... TO STDOUT: text format, `columns` columns.
  void WriteCopyOutResponse(size_t columns);
  /// CopyInResponse of COPY ... FROM STDIN: text format, `columns` columns.
  void WriteCopyInResponse(size_t columns);
  /// CopyData: one line of COPY output.
  void WriteCopyData(std::string_view data);
  void WriteCopyDone();
  void WriteErrorResponse(const ErrorFields& fields);
  void WriteNoticeResponse(const ErrorFields& fields);
  /// Tells a client that asked for a newer minor version or for `_pq_.` protocol options
  /// which minor version it gets and which options were not recognized.
  void WriteNegotiateProtocolVersion(int32_t newest_minor_version,
                                     const std::vector<std::string>& unrecognized_options);

  /// The messages built so far.
  const std::string& data() const { return buffer_; }
  size_t size() const { return buffer_.size(); }
  bool empty() const { return buffer_.empty(); }
  /// Forgets the messages built so far, typically after sending them.
  void Clear() { buffer_.clear(); }

 private:
  // Appends one message of `type` whose fields `add_fields` adds, then patches its length
  // word. Restores the buffer if `add_fields` throws.
  template <typename AddFields>
  void WriteMessage(char type, AddFields&& add_fields) {
    size_t start = buffer_.size();
    try {
      AddByte(type);
      AddInt32(0);  // The length word, patched by PatchLength.
      add_fields();
      PatchLength(start);
    } catch (...) {
      buffer_.resize(start);
      throw;
    }
  }
  void PatchLength(size_t start);
  void AddByte(char value) { buffer_.push_back(value); }
  void AddInt16(int16_t value);
  void AddInt32(int32_t value);
  void AddCString(std::string_view value);
  void AddBytes(std::string_view value) { buffer_.append(value); }
  void WriteErrorOrNotice(char type, const ErrorFields& fields);
  // CopyInResponse (G) or CopyOutResponse (H): text format, `columns` columns.
  void WriteCopyResponse(char type, size_t columns);

  std::string buffer_;
};

}  // namespace stave::server::pgwire
