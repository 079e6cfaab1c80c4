#include "server/pgwire/message_reader.h"

#include <cstring>

#include "server/pgwire/protocol.h"

namespace stave::server::pgwire {

uint32_t DecodeUint32(const char* data) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

void MessageReader::Require(size_t size) const {
  if (size > remaining()) throw ProtocolError("invalid message format: message is truncated");
}

uint8_t MessageReader::ReadByte() {
  Require(1);
  return static_cast<uint8_t>(body_[position_++]);
}

int16_t MessageReader::ReadInt16() {
  Require(2);
  const auto* bytes = reinterpret_cast<const unsigned char*>(body_.data() + position_);
  position_ += 2;
  return static_cast<int16_t>((bytes[0] << 8) | bytes[1]);
}

int32_t MessageReader::ReadInt32() {
  Require(4);
  uint32_t value = DecodeUint32(body_.data() + position_);
  position_ += 4;
  return static_cast<int32_t>(value);
}

std::string_view MessageReader::ReadCString() {
  size_t end = body_.find('\0', position_);
  if (end == std::string_view::npos) {
    throw ProtocolError("invalid string in message: missing NUL terminator");
  }
  std::string_view value = body_.substr(position_, end - position_);
  position_ = end + 1;
  return value;
}

std::string_view MessageReader::ReadBytes(size_t size) {
  Require(size);
  std::string_view value = body_.substr(position_, size);
  position_ += size;
  return value;
}

void MessageReader::ExpectEnd() const {
  if (!AtEnd()) throw ProtocolError("invalid message format: unexpected data at end of message");
}

StartupPacket ParseStartupPacket(std::string_view body) {
  MessageReader reader(body);
  StartupPacket packet;
  int32_t code = reader.ReadInt32();
  switch (code) {
    case kSslRequestCode:
      packet.kind = StartupPacket::Kind::kSslRequest;
      reader.ExpectEnd();
      return packet;
    case kGssEncRequestCode:
      packet.kind = StartupPacket::Kind::kGssEncRequest;
      reader.ExpectEnd();
      return packet;
    case kCancelRequestCode:
      packet.kind = StartupPacket::Kind::kCancelRequest;
      packet.process_id = reader.ReadInt32();
      packet.secret_key = reader.ReadInt32();
      reader.ExpectEnd();
      return packet;
    default:
      break;
  }
  packet.kind = StartupPacket::Kind::kStartupMessage;
  packet.protocol_version = code;
  if ((code >> 16) != 3) return packet;  // The caller rejects the version; layout unknown.
  // Pairs of NUL-terminated name and value, ended by an empty name (a lone NUL).
  while (true) {
    if (reader.AtEnd()) {
      throw ProtocolError("invalid startup packet layout: expected terminator as last byte");
    }
    std::string_view name = reader.ReadCString();
    if (name.empty()) break;
    if (reader.AtEnd()) {
      throw ProtocolError("invalid startup packet layout: parameter \"" + std::string(name) +
                          "\" has no value");
    }
    std::string_view value = reader.ReadCString();
    packet.parameters.emplace_back(name, value);
  }
  if (!reader.AtEnd()) {
    throw ProtocolError("invalid startup packet layout: expected terminator as last byte");
  }
  return packet;
}

std::string_view ParseQueryMessage(std::string_view body) {
  MessageReader reader(body);
  std::string_view sql = reader.ReadCString();
  reader.ExpectEnd();
  return sql;
}

bool IsFrontendMessageType(char type) {
  switch (type) {
    case 'B':  // Bind
    case 'C':  // Close
    case 'D':  // Describe
    case 'E':  // Execute
    case 'F':  // FunctionCall
    case 'H':  // Flush
    case 'P':  // Parse
    case 'Q':  // Query
    case 'S':  // Sync
    case 'X':  // Terminate
    case 'c':  // CopyDone
    case 'd':  // CopyData
    case 'f':  // CopyFail
      return true;
    default:
      return false;
  }
}

uint32_t MaxMessageLength(char type) {
  switch (type) {
    case 'Q':
    case 'P':
    case 'B':
    case 'F':
    case 'd':
      return kMaxMessageLength;
    default:
      return kMaxSmallMessageLength;
  }
}

ParseMessage ParseParseMessage(std::string_view body) {
  MessageReader reader(body);
  ParseMessage message;
  message.statement_name = reader.ReadCString();
  message.query = reader.ReadCString();
  int16_t count = reader.ReadInt16();
  if (count < 0) throw ProtocolError("invalid message format: negative parameter count");
  for (int16_t i = 0; i < count; ++i) message.parameter_types.push_back(reader.ReadInt32());
  reader.ExpectEnd();
  return message;
}

BindMessage ParseBindMessage(std::string_view body) {
  MessageReader reader(body);
  BindMessage message;
  message.portal_name = reader.ReadCString();
  message.statement_name = reader.ReadCString();
  // Counts are unsigned 16-bit numbers on the wire (PostgreSQL reads them with pq_getmsgint).
  auto read_count = [&reader] { return static_cast<uint16_t>(reader.ReadInt16()); };
  uint16_t formats = read_count();
  for (uint16_t i = 0; i < formats; ++i) message.parameter_formats.push_back(reader.ReadInt16());
  uint16_t parameters = read_count();
  for (uint16_t i = 0; i < parameters; ++i) {
    int32_t length = reader.ReadInt32();
    if (length == -1) {
      message.parameters.emplace_back(std::nullopt);
    } else if (length < 0) {
      throw ProtocolError("invalid message format: negative parameter length");
    } else {
      message.parameters.emplace_back(reader.ReadBytes(static_cast<size_t>(length)));
    }
  }
  uint16_t result_formats = read_count();
  for (uint16_t i = 0; i < result_formats; ++i) {
    message.result_formats.push_back(reader.ReadInt16());
  }
  reader.ExpectEnd();
  return message;
}

TargetMessage ParseTargetMessage(std::string_view body) {
  MessageReader reader(body);
  TargetMessage message;
  message.kind = static_cast<char>(reader.ReadByte());
  if (message.kind != 'S' && message.kind != 'P') {
    throw ProtocolError("invalid DESCRIBE or CLOSE message subtype " +
                        std::to_string(static_cast<unsigned char>(message.kind)));
  }
  message.name = reader.ReadCString();
  reader.ExpectEnd();
  return message;
}

ExecuteMessage ParseExecuteMessage(std::string_view body) {
  MessageReader reader(body);
  ExecuteMessage message;
  message.portal_name = reader.ReadCString();
  message.max_rows = reader.ReadInt32();
  reader.ExpectEnd();
  return message;
}

}  // namespace stave::server::pgwire
