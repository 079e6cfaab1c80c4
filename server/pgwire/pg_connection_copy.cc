// The copy-in exchange of COPY ... FROM STDIN: CopyInResponse, then the client's CopyData
// messages up to CopyDone or CopyFail.

#include <fmt/format.h>

#include <algorithm>

#include "common/sql_error.h"
#include "server/pgwire/message_reader.h"
#include "server/pgwire/pg_connection.h"

namespace stave::server::pgwire {

void PgConnection::CopyIn::Begin(size_t columns) {
  connection_->writer_.WriteCopyInResponse(columns);
  connection_->Flush();
}

std::optional<std::string> PgConnection::CopyIn::Next() {
  PgConnection& connection = *connection_;
  while (true) {
    char header[5];
    if (connection.Read(header, sizeof(header)) < sizeof(header)) {
      connection.connection_lost_ = true;  // So the statement's error handling lets it end.
      throw ConnectionLost("unexpected EOF on client connection with an open transaction");
    }
    char type = header[0];
    uint32_t length = DecodeUint32(header + 1);
    if (!IsFrontendMessageType(type)) {
      throw ProtocolError("invalid frontend message type " +
                          std::to_string(static_cast<unsigned char>(type)));
    }
    if (length < 4) throw ProtocolError("invalid message length");
    uint32_t limit = MaxMessageLength(type);
    if (limit > kMaxSmallMessageLength)
      limit = std::min(limit, connection.config_.max_message_length);
    if (length > limit) {
      throw ProtocolError(fmt::format(
          "invalid message length: a message of type '{}' may have at most {} bytes, not {}", type,
          limit, length));
    }
    size_t body_length = length - 4;
    switch (type) {
      case 'd':  // CopyData
        return connection.ReadBody(body_length);
      case 'c':  // CopyDone
        connection.SkipBody(body_length);
        return std::nullopt;
      case 'f': {  // CopyFail: the client gives up, with its reason.
        std::string body = connection.ReadBody(body_length);
        std::string reason(body.c_str());  // A C string; what follows a NUL is ignored.
        throw SqlError(sqlstate::kQueryCanceled, "COPY from stdin failed: " + reason);
      }
      case 'H':  // Flush and Sync are ignored during copy-in, as in PostgreSQL.
      case 'S':
        connection.SkipBody(body_length);
        continue;
      default:
        throw ProtocolError(fmt::format("unexpected message type 0x{:02X} during COPY from stdin",
                                        static_cast<unsigned char>(type)));
    }
  }
}

}  // namespace stave::server::pgwire
