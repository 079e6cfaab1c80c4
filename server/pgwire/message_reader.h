#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stave::server::pgwire {

/// Decodes a big-endian 32-bit word, as every length and integer on the wire is sent.
/// REQUIRES: `data` points to at least 4 bytes.
uint32_t DecodeUint32(const char* data);

/// Reads the fields of one frontend message body (the bytes after the type byte and the
/// length word). Every read checks bounds and throws ProtocolError on a truncated or
/// malformed body, so hostile input can never read past the end. Does not own the bytes:
/// the body and the views returned must outlive the reader's use.
class MessageReader {
 public:
  explicit MessageReader(std::string_view body) : body_(body) {}

  uint8_t ReadByte();
  int16_t ReadInt16();
  int32_t ReadInt32();
  /// A NUL-terminated string, without its terminator. Throws if there is no NUL.
  std::string_view ReadCString();
  /// The next `size` bytes.
  std::string_view ReadBytes(size_t size);

  size_t remaining() const { return body_.size() - position_; }
  bool AtEnd() const { return position_ == body_.size(); }
  /// Throws ProtocolError("invalid message format") if bytes are left over, as PostgreSQL's
  /// pq_getmsgend does.
  void ExpectEnd() const;

 private:
  void Require(size_t size) const;

  std::string_view body_;
  size_t position_ = 0;
};

/// A packet of the startup phase, which has a length word but no type byte.
struct StartupPacket {
  enum class Kind { kStartupMessage, kSslRequest, kGssEncRequest, kCancelRequest };

  Kind kind = Kind::kStartupMessage;
  /// kStartupMessage: the requested protocol version (major << 16 | minor).
  int32_t protocol_version = 0;
  /// kStartupMessage with major version 3: the (name, value) pairs in the order sent.
  /// Parameters of other major versions are not parsed.
  std::vector<std::pair<std::string, std::string>> parameters;
  /// kCancelRequest: the key of the connection whose query should be canceled.
  int32_t process_id = 0;
  int32_t secret_key = 0;
};

/// Parses a startup-phase packet body (everything after the length word). Throws
/// ProtocolError for a malformed packet: a cancel request of the wrong size, a parameter
/// list that does not end in an empty name, a name without a value.
StartupPacket ParseStartupPacket(std::string_view body);

/// Returns the SQL text of a Query ('Q') message body: one NUL-terminated string and nothing
/// after it. Throws ProtocolError otherwise.
std::string_view ParseQueryMessage(std::string_view body);

/// Parse ('P'): prepares `query` as the statement `statement_name` ("" = unnamed) with the
/// given parameter type OIDs (0 = let the server decide).
struct ParseMessage {
  std::string_view statement_name;
  std::string_view query;
  std::vector<int32_t> parameter_types;
};
ParseMessage ParseParseMessage(std::string_view body);

/// Bind ('B'): makes portal `portal_name` from statement `statement_name`. A parameter value
/// is nullopt for NULL. Format code lists are as sent (0, 1 or one per item).
struct BindMessage {
  std::string_view portal_name;
  std::string_view statement_name;
  std::vector<int16_t> parameter_formats;
  std::vector<std::optional<std::string_view>> parameters;
  std::vector<int16_t> result_formats;
};
BindMessage ParseBindMessage(std::string_view body);

/// Describe ('D') and Close ('C'): `kind` is 'S' (statement) or 'P' (portal); anything else
/// is a protocol error.
struct TargetMessage {
  char kind = 'S';
  std::string_view name;
};
TargetMessage ParseTargetMessage(std::string_view body);

/// Execute ('E'): runs portal `portal_name`, returning at most `max_rows` rows (0 = all).
struct ExecuteMessage {
  std::string_view portal_name;
  int32_t max_rows = 0;
};
ExecuteMessage ParseExecuteMessage(std::string_view body);

/// True for the message types a frontend may send after startup (Query, the extended
/// protocol, FunctionCall, COPY data, Terminate). Anything else is a protocol violation.
bool IsFrontendMessageType(char type);

/// The largest length word accepted for a message of `type`: kMaxMessageLength for messages
/// carrying SQL or data, kMaxSmallMessageLength for the others.
uint32_t MaxMessageLength(char type);

}  // namespace stave::server::pgwire
