#pragma once

#include <cstdint>
#include <stdexcept>

namespace stave::server::pgwire {

/// Constants of the PostgreSQL frontend/backend protocol v3 (PostgreSQL docs, "Message
/// Formats"). Lengths count the length word itself but not the type byte.

/// Protocol 3.0 as sent in a StartupMessage: major version in the high 16 bits.
inline constexpr int32_t kProtocolVersion30 = 3 << 16;
/// The newest minor version of protocol 3 this server speaks.
inline constexpr int32_t kNewestMinorVersion = 0;
/// Request codes that take the place of a protocol version in the startup phase.
inline constexpr int32_t kCancelRequestCode = (1234 << 16) | 5678;  // 80877102
inline constexpr int32_t kSslRequestCode = (1234 << 16) | 5679;     // 80877103
inline constexpr int32_t kGssEncRequestCode = (1234 << 16) | 5680;  // 80877104

/// PostgreSQL's MAX_STARTUP_PACKET_LENGTH: a longer startup packet is a protocol violation.
inline constexpr uint32_t kMaxStartupPacketLength = 10000;
/// The largest message length that may be configured for messages that carry SQL or data
/// (Query, Parse, Bind, FunctionCall, CopyData): 1 GiB, as PostgreSQL's PQ_LARGE_MESSAGE_LIMIT.
inline constexpr uint32_t kMaxMessageLength = 1u << 30;
/// The default limit for those messages: 64 MiB. A streaming server's statements and
/// parameters are small, and with a thousand connections each allowed 1 GiB of message a
/// few clients could exhaust memory; 64 MiB still takes any realistic statement.
inline constexpr uint32_t kDefaultMaxMessageLength = 64u << 20;
/// The largest message length accepted for all other messages (PQ_SMALL_MESSAGE_LIMIT).
inline constexpr uint32_t kMaxSmallMessageLength = 10000;

/// The frontend broke the protocol (bad length, missing NUL terminator, unknown message
/// type, ...). The connection answers with a FATAL ErrorResponse 08P01 and closes.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace stave::server::pgwire
