#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stave::server::testing {

/// Builds the bytes a PostgreSQL client sends, and splits what a server answers into
/// messages, for tests that speak the protocol by hand.

inline void AppendInt32(std::string* out, uint32_t value) {
  out->push_back(static_cast<char>(value >> 24));
  out->push_back(static_cast<char>(value >> 16));
  out->push_back(static_cast<char>(value >> 8));
  out->push_back(static_cast<char>(value));
}

inline uint32_t ReadUint32(std::string_view data, size_t at) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data() + at);
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

inline uint16_t ReadUint16(std::string_view data, size_t at) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data() + at);
  return static_cast<uint16_t>((bytes[0] << 8) | bytes[1]);
}

/// A startup-phase packet: length word, then `body`.
inline std::string StartupPacketBytes(std::string_view body) {
  std::string out;
  AppendInt32(&out, static_cast<uint32_t>(body.size() + 4));
  out.append(body);
  return out;
}

inline std::string StartupMessageBytes(
    const std::vector<std::pair<std::string, std::string>>& parameters,
    uint32_t version = 3 << 16) {
  std::string body;
  AppendInt32(&body, version);
  for (const auto& [name, value] : parameters) {
    body.append(name).push_back('\0');
    body.append(value).push_back('\0');
  }
  body.push_back('\0');
  return StartupPacketBytes(body);
}

inline std::string RequestCodeBytes(uint32_t code) {
  std::string body;
  AppendInt32(&body, code);
  return StartupPacketBytes(body);
}

inline std::string SslRequestBytes() { return RequestCodeBytes(80877103); }
inline std::string GssEncRequestBytes() { return RequestCodeBytes(80877104); }

inline std::string CancelRequestBytes(int32_t process_id, int32_t secret_key) {
  std::string body;
  AppendInt32(&body, 80877102);
  AppendInt32(&body, static_cast<uint32_t>(process_id));
  AppendInt32(&body, static_cast<uint32_t>(secret_key));
  return StartupPacketBytes(body);
}

/// A regular message: type, length word, body.
inline std::string MessageBytes(char type, std::string_view body) {
  std::string out(1, type);
  AppendInt32(&out, static_cast<uint32_t>(body.size() + 4));
  out.append(body);
  return out;
}

inline std::string QueryBytes(std::string_view sql) {
  std::string body(sql);
  body.push_back('\0');
  return MessageBytes('Q', body);
}

/// One backend message.
struct BackendMessage {
  char type;
  std::string body;
};

/// Splits `data` into messages. Throws std::runtime_error if it ends inside a message.
inline std::vector<BackendMessage> ParseBackendMessages(std::string_view data) {
  std::vector<BackendMessage> messages;
  size_t at = 0;
  while (at < data.size()) {
    if (data.size() - at < 5) throw std::runtime_error("truncated message header");
    uint32_t length = ReadUint32(data, at + 1);
    if (length < 4 || data.size() - at - 1 < length) throw std::runtime_error("truncated message");
    messages.push_back({data[at], std::string(data.substr(at + 5, length - 4))});
    at += 1 + length;
  }
  return messages;
}

/// The message types in order, e.g. "RSSSSKZ".
inline std::string MessageTypes(const std::vector<BackendMessage>& messages) {
  std::string types;
  for (const BackendMessage& message : messages) types.push_back(message.type);
  return types;
}

/// The value of field `code` of an ErrorResponse/NoticeResponse body, "" if absent.
inline std::string ErrorField(const BackendMessage& message, char code) {
  size_t at = 0;
  const std::string& body = message.body;
  while (at < body.size() && body[at] != '\0') {
    char field = body[at];
    size_t end = body.find('\0', at + 1);
    if (end == std::string::npos) break;
    if (field == code) return body.substr(at + 1, end - at - 1);
    at = end + 1;
  }
  return "";
}

/// The values of a DataRow body; a NULL is "<NULL>".
inline std::vector<std::string> DataRowValues(const BackendMessage& message) {
  std::vector<std::string> values;
  const std::string& body = message.body;
  uint16_t count = ReadUint16(body, 0);
  size_t at = 2;
  for (uint16_t i = 0; i < count; ++i) {
    auto length = static_cast<int32_t>(ReadUint32(body, at));
    at += 4;
    if (length < 0) {
      values.push_back("<NULL>");
      continue;
    }
    values.push_back(body.substr(at, static_cast<size_t>(length)));
    at += static_cast<size_t>(length);
  }
  return values;
}

/// Extended query protocol messages, as a client sends them.
inline void AppendInt16(std::string* out, uint16_t value) {
  out->push_back(static_cast<char>(value >> 8));
  out->push_back(static_cast<char>(value & 0xff));
}

inline std::string ParseBytes(std::string_view name, std::string_view sql,
                              const std::vector<uint32_t>& type_oids = {}) {
  std::string body(name);
  body.push_back('\0');
  body.append(sql);
  body.push_back('\0');
  AppendInt16(&body, static_cast<uint16_t>(type_oids.size()));
  for (uint32_t oid : type_oids) AppendInt32(&body, oid);
  return MessageBytes('P', body);
}

/// A parameter value; nullopt is NULL.
using WireValue = std::optional<std::string>;

inline std::string BindBytes(std::string_view portal, std::string_view statement,
                             const std::vector<uint16_t>& parameter_formats,
                             const std::vector<WireValue>& values,
                             const std::vector<uint16_t>& result_formats = {}) {
  std::string body(portal);
  body.push_back('\0');
  body.append(statement);
  body.push_back('\0');
  AppendInt16(&body, static_cast<uint16_t>(parameter_formats.size()));
  for (uint16_t format : parameter_formats) AppendInt16(&body, format);
  AppendInt16(&body, static_cast<uint16_t>(values.size()));
  for (const WireValue& value : values) {
    if (!value) {
      AppendInt32(&body, 0xffffffffu);
      continue;
    }
    AppendInt32(&body, static_cast<uint32_t>(value->size()));
    body.append(*value);
  }
  AppendInt16(&body, static_cast<uint16_t>(result_formats.size()));
  for (uint16_t format : result_formats) AppendInt16(&body, format);
  return MessageBytes('B', body);
}

inline std::string DescribeBytes(char kind, std::string_view name) {
  std::string body(1, kind);
  body.append(name);
  body.push_back('\0');
  return MessageBytes('D', body);
}

inline std::string CloseBytes(char kind, std::string_view name) {
  std::string body(1, kind);
  body.append(name);
  body.push_back('\0');
  return MessageBytes('C', body);
}

inline std::string ExecuteBytes(std::string_view portal, uint32_t max_rows = 0) {
  std::string body(portal);
  body.push_back('\0');
  AppendInt32(&body, max_rows);
  return MessageBytes('E', body);
}

inline std::string SyncBytes() { return MessageBytes('S', ""); }

}  // namespace stave::server::testing
