#include "server/pgwire/pg_connection.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>

#include "common/sql_error.h"
#include "server/pgwire/copy_out.h"
#include "server/pgwire/message_reader.h"
#include "server/pgwire/protocol.h"

namespace stave::server::pgwire {
namespace {

constexpr size_t kInputBufferSize = 16 * 1024;
// Bodies are read in steps of at most this, so a lying length word costs no memory.
constexpr size_t kBodyReadStep = 1024 * 1024;
// SSLRequest and GSSENCRequest may each come once before the StartupMessage.
constexpr int kMaxEncryptionRequests = 2;
// idle_session_timeout ended the connection (PostgreSQL's ERRCODE_IDLE_SESSION_TIMEOUT).
constexpr std::string_view kIdleSessionTimeout = "57P05";

std::string ParameterValue(const std::vector<std::pair<std::string, std::string>>& parameters,
                           std::string_view name) {
  for (const auto& [key, value] : parameters) {
    if (key == name) return value;
  }
  return "";
}

}  // namespace

PgConnection::PgConnection(ByteStream* stream, const QuerySessionFactory* session_factory,
                           PgConnectionConfig config)
    : stream_(stream),
      session_factory_(session_factory),
      config_(std::move(config)),
      input_(kInputBufferSize) {}

PgConnection::~PgConnection() = default;

void PgConnection::Run() {
  try {
    if (!RunStartup()) return;
    RunMessageLoop();
  } catch (const ConnectionLost& error) {
    spdlog::debug("pgwire: connection {} from {} lost: {}", config_.process_id, config_.peer,
                  error.what());
  } catch (const ProtocolError& error) {
    spdlog::debug("pgwire: connection {} from {} broke the protocol: {}", config_.process_id,
                  config_.peer, error.what());
    SendFatal(sqlstate::kProtocolViolation, error.what());
  } catch (const std::exception& error) {
    // A failure outside any statement (the session's own bookkeeping, out of memory):
    // the state of the connection is unknown, so it ends.
    spdlog::error("pgwire: connection {} from {} failed: {}", config_.process_id, config_.peer,
                  error.what());
    SendFatal(sqlstate::kInternalError, error.what());
  }
}

bool PgConnection::RunStartup() {
  if (config_.startup_timeout.count() > 0) {
    stream_->SetReadDeadline(std::chrono::steady_clock::now() + config_.startup_timeout);
  }
  int encryption_requests = 0;
  StartupPacket packet;
  while (true) {
    char length_word[4];
    size_t read = Read(length_word, sizeof(length_word));
    if (read == 0) {
      spdlog::debug("pgwire: connection from {} closed or timed out before startup", config_.peer);
      return false;
    }
    if (read < sizeof(length_word)) throw ConnectionLost("incomplete startup packet");
    uint32_t length = DecodeUint32(length_word);
    if (length < 8 || length > kMaxStartupPacketLength) {
      throw ProtocolError("invalid length of startup packet");
    }
    packet = ParseStartupPacket(ReadBody(length - 4));
    if (packet.kind == StartupPacket::Kind::kSslRequest ||
        packet.kind == StartupPacket::Kind::kGssEncRequest) {
      if (++encryption_requests > kMaxEncryptionRequests) {
        throw ProtocolError("too many encryption requests");
      }
      if (packet.kind == StartupPacket::Kind::kSslRequest) {
        HandleSslRequest();
        continue;
      }
      // GSS encryption is not offered; the client goes on in plain text (or asks for SSL).
      if (!stream_->WriteAll("N")) throw ConnectionLost("could not send data to client");
      continue;
    }
    if (packet.kind == StartupPacket::Kind::kCancelRequest) {
      spdlog::debug("pgwire: cancel request from {} for connection {}", config_.peer,
                    packet.process_id);
      if (config_.on_cancel_request) {
        config_.on_cancel_request(packet.process_id, packet.secret_key);
      }
      return false;  // A cancel connection gets no answer; it is closed.
    }
    break;
  }

  auto version = static_cast<uint32_t>(packet.protocol_version);
  uint32_t major = version >> 16;
  uint32_t minor = version & 0xffff;
  if (major != 3) {
    throw ProtocolError("unsupported frontend protocol " + std::to_string(major) + "." +
                        std::to_string(minor) + ": server supports 3.0 to 3." +
                        std::to_string(kNewestMinorVersion));
  }
  // Options named `_pq_.*` are protocol extensions this server does not know; like a newer
  // minor version they are declined with NegotiateProtocolVersion, not an error.
  std::vector<std::string> unrecognized_options;
  std::vector<std::pair<std::string, std::string>> parameters;
  for (auto& [name, value] : packet.parameters) {
    if (name.starts_with("_pq_.")) {
      unrecognized_options.push_back(name);
    } else {
      parameters.emplace_back(std::move(name), std::move(value));
    }
  }
  if (minor > static_cast<uint32_t>(kNewestMinorVersion) || !unrecognized_options.empty()) {
    writer_.WriteNegotiateProtocolVersion(kNewestMinorVersion, unrecognized_options);
  }
  spdlog::debug("pgwire: connection {} from {}: user={} database={} application_name={}",
                config_.process_id, config_.peer, ParameterValue(parameters, "user"),
                ParameterValue(parameters, "database"),
                ParameterValue(parameters, "application_name"));

  // Authentication comes before the session, as in PostgreSQL: a client that may not in
  // learns nothing about the database. It is bounded by the startup timeout too
  // (PostgreSQL's authentication_timeout).
  if (!Authenticate(ParameterValue(parameters, "user"))) return false;
  stream_->SetReadDeadline(std::nullopt);

  try {
    session_ = (*session_factory_)(parameters);
    if (session_ == nullptr) throw std::runtime_error("could not create a session");
    if (config_.cancellation) session_->AttachCancellation(config_.cancellation);
    session_->AttachBackendPid(config_.process_id);
    session_->AttachCopyInput(&copy_in_);
    writer_.WriteAuthenticationOk();
    for (const auto& [name, value] : session_->StartupParameters()) {
      writer_.WriteParameterStatus(name, value);
    }
    writer_.WriteBackendKeyData(config_.process_id, config_.secret_key);
    writer_.WriteReadyForQuery(session_->TransactionStatus());
  } catch (const SqlError& error) {
    // For example an unknown database: the client is told why and the connection ends.
    spdlog::debug("pgwire: connection {} rejected: {}", config_.process_id, error.what());
    writer_.Clear();
    ErrorFields fields = ErrorFields::FromSqlError(error);
    fields.severity = "FATAL";
    writer_.WriteErrorResponse(fields);
    stream_->WriteAll(writer_.data());
    writer_.Clear();
    return false;
  } catch (const std::exception& error) {
    spdlog::error("pgwire: connection {}: session start failed: {}", config_.process_id,
                  error.what());
    writer_.Clear();
    SendFatal(sqlstate::kInternalError, error.what());
    return false;
  }
  Flush();
  return true;
}

void PgConnection::HandleSslRequest() {
  if (!stream_->TlsAvailable() || stream_->IsTls()) {
    // No certificate configured: the client goes on in plain text (or gives up, if it
    // requires TLS).
    if (!stream_->WriteAll("N")) throw ConnectionLost("could not send data to client");
    return;
  }
  // Bytes after the SSLRequest but before the handshake would be plain text smuggled into
  // the encrypted session (CVE-2021-23214), so they are refused.
  if (input_begin_ != input_end_)
    throw ProtocolError("received unencrypted data after SSL request");
  if (!stream_->WriteAll("S")) throw ConnectionLost("could not send data to client");
  std::string error;
  if (!stream_->StartTls(&error)) throw ConnectionLost("TLS handshake failed: " + error);
  spdlog::debug("pgwire: connection {} from {} switched to TLS", config_.process_id, config_.peer);
}

void PgConnection::RunMessageLoop() {
  // Whether the last message answered ReadyForQuery, so the client owes the next command.
  bool ready_for_query = true;
  while (true) {
    char header[5];
    // idle_session_timeout, as in PostgreSQL: only between commands outside a transaction,
    // and only when the client has not already sent more.
    std::optional<std::chrono::steady_clock::time_point> idle_deadline;
    if (ready_for_query && input_begin_ == input_end_ && session_->TransactionStatus() == 'I') {
      std::chrono::milliseconds timeout = session_->IdleSessionTimeout();
      if (timeout.count() > 0) idle_deadline = std::chrono::steady_clock::now() + timeout;
    }
    if (idle_deadline) stream_->SetReadDeadline(idle_deadline);
    size_t read = Read(header, sizeof(header));
    if (idle_deadline) stream_->SetReadDeadline(std::nullopt);
    if (read == 0) {
      if (idle_deadline && std::chrono::steady_clock::now() >= *idle_deadline) {
        spdlog::debug("pgwire: connection {} idle for too long", config_.process_id);
        SendFatal(kIdleSessionTimeout, "terminating connection due to idle-session timeout");
        return;
      }
      spdlog::debug("pgwire: connection {} closed by the client", config_.process_id);
      return;
    }
    if (read < sizeof(header)) throw ConnectionLost("unexpected EOF within message header");
    char type = header[0];
    uint32_t length = DecodeUint32(header + 1);
    ready_for_query = type == 'S' || (!skipping_until_sync_ && (type == 'Q' || type == 'F'));
    if (!IsFrontendMessageType(type)) {
      throw ProtocolError("invalid frontend message type " +
                          std::to_string(static_cast<unsigned char>(type)));
    }
    if (length < 4) throw ProtocolError("invalid message length");
    uint32_t limit = MaxMessageLength(type);
    if (limit > kMaxSmallMessageLength) limit = std::min(limit, config_.max_message_length);
    if (length > limit) {
      // Refused from the length word alone: the body is never read, let alone allocated.
      throw ProtocolError(fmt::format(
          "invalid message length: a message of type '{}' may have at most {} bytes, not {}", type,
          limit, length));
    }
    size_t body_length = length - 4;

    if (type == 'X') {
      spdlog::debug("pgwire: connection {} terminated by the client", config_.process_id);
      return;
    }
    if (type == 'S') {  // Sync ends an extended-protocol batch, failed or not.
      SkipBody(body_length);
      skipping_until_sync_ = false;
      HandleSync();
      continue;
    }
    if (skipping_until_sync_) {
      SkipBody(body_length);
      if (type == 'H') Flush();
      continue;
    }
    switch (type) {
      case 'Q': {
        std::string body = ReadBody(body_length);
        RunQuery(ParseQueryMessage(body));
        break;
      }
      case 'P':
      case 'B':
      case 'D':
      case 'E':
      case 'C': {
        std::string body = ReadBody(body_length);
        RunExtendedMessage(type, body);
        break;
      }
      case 'H':  // Flush
        SkipBody(body_length);
        Flush();
        break;
      case 'F': {
        SkipBody(body_length);
        ErrorFields fields;
        fields.sqlstate = sqlstate::kFeatureNotSupported;
        fields.message = "function call protocol is not supported";
        ReportError(fields);
        writer_.WriteReadyForQuery(session_->TransactionStatus());
        Flush();
        break;
      }
      default:
        // CopyData, CopyDone, CopyFail outside COPY: a client still sending data after a
        // failed COPY. PostgreSQL ignores them, and so does Stave.
        SkipBody(body_length);
        break;
    }
  }
}

void PgConnection::RunQuery(std::string_view sql) {
  // A simple query ends the unnamed statement and portal, as in PostgreSQL.
  statements_.erase("");
  portals_.erase("");
  RunReportingErrors([&] {
    bool had_statements = session_->RunSimpleQuery(
        sql, [this](const executor::QueryResult& result) { SendResult(result); });
    if (!had_statements) writer_.WriteEmptyQueryResponse();
  });
  SendChangedParameters();
  writer_.WriteReadyForQuery(session_->TransactionStatus());
  Flush();
}

bool PgConnection::RunReportingErrors(const std::function<void()>& run) {
  try {
    run();
    return true;
  } catch (const ProtocolError&) {
    throw;  // Ends the connection.
  } catch (const SqlError& error) {
    if (connection_lost_) throw ConnectionLost("could not send data to client");
    ReportError(ErrorFields::FromSqlError(error));
  } catch (const std::exception& error) {
    if (connection_lost_) throw ConnectionLost("could not send data to client");
    spdlog::warn("pgwire: connection {}: internal error in statement: {}", config_.process_id,
                 error.what());
    ErrorFields fields;
    fields.sqlstate = sqlstate::kInternalError;
    fields.message = error.what();
    ReportError(fields);
  } catch (...) {
    if (connection_lost_) throw ConnectionLost("could not send data to client");
    ErrorFields fields;
    fields.sqlstate = sqlstate::kInternalError;
    fields.message = "unknown internal error";
    ReportError(fields);
  }
  return false;
}

void PgConnection::SendChangedParameters() {
  for (const auto& [name, value] : session_->TakeChangedParameters()) {
    writer_.WriteParameterStatus(name, value);
  }
}

void PgConnection::SendNotices(const executor::QueryResult& result) {
  for (const executor::Notice& notice : result.notices) {
    ErrorFields fields;
    fields.severity = notice.severity;
    fields.sqlstate = notice.sqlstate;
    fields.message = notice.message;
    writer_.WriteNoticeResponse(fields);
  }
}

void PgConnection::SendResult(const executor::QueryResult& result) {
  SendNotices(result);
  if (result.copy_out) {
    writer_.WriteCopyOutResponse(result.columns.size());
    if (result.copy_out->header) {
      writer_.WriteCopyData(CopyHeaderLine(result.columns, *result.copy_out));
    }
    for (const std::vector<Value>& row : result.rows) {
      writer_.WriteCopyData(CopyOutLine(row, result.columns, *result.copy_out));
      FlushIfLarge();
    }
    writer_.WriteCopyDone();
  } else if (result.returns_rows) {
    writer_.WriteRowDescription(result.columns);
    for (const std::vector<Value>& row : result.rows) {
      writer_.WriteDataRow(row, result.columns);
      FlushIfLarge();
    }
  }
  writer_.WriteCommandComplete(result.command_tag);
  FlushIfLarge();
}

void PgConnection::ReportError(const ErrorFields& fields) {
  writer_.WriteErrorResponse(fields);
  session_->OnError();
}

void PgConnection::SendFatal(std::string_view sqlstate, std::string_view message) {
  ErrorFields fields;
  fields.severity = "FATAL";
  fields.sqlstate = sqlstate;
  fields.message = message;
  try {
    writer_.WriteErrorResponse(fields);
    stream_->WriteAll(writer_.data());  // Best effort: the connection ends either way.
    writer_.Clear();
  } catch (const std::exception&) {
  }
}

size_t PgConnection::Read(char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    if (input_begin_ == input_end_) {
      if (size - done >= input_.size()) {  // A big read bypasses the buffer.
        size_t read = stream_->ReadSome(data + done, size - done);
        if (read == 0) return done;
        done += read;
        continue;
      }
      size_t read = stream_->ReadSome(input_.data(), input_.size());
      if (read == 0) return done;
      input_begin_ = 0;
      input_end_ = read;
    }
    size_t take = std::min(input_end_ - input_begin_, size - done);
    std::memcpy(data + done, input_.data() + input_begin_, take);
    input_begin_ += take;
    done += take;
  }
  return done;
}

std::string PgConnection::ReadBody(size_t size) {
  std::string body;
  while (body.size() < size) {
    size_t step = std::min(size - body.size(), kBodyReadStep);
    size_t old_size = body.size();
    if (body.capacity() < old_size + step) body.reserve(std::max(old_size + step, 2 * old_size));
    body.resize(old_size + step);
    if (Read(body.data() + old_size, step) < step) {
      throw ConnectionLost("unexpected EOF within message");
    }
  }
  return body;
}

void PgConnection::SkipBody(size_t size) {
  char scratch[4096];
  while (size > 0) {
    size_t step = std::min(size, sizeof(scratch));
    if (Read(scratch, step) < step) throw ConnectionLost("unexpected EOF within message");
    size -= step;
  }
}

void PgConnection::Flush() {
  if (writer_.empty()) return;
  if (!stream_->WriteAll(writer_.data())) {
    connection_lost_ = true;
    writer_.Clear();
    throw ConnectionLost("could not send data to client");
  }
  writer_.Clear();
}

void PgConnection::FlushIfLarge() {
  if (writer_.size() >= config_.flush_threshold) Flush();
}

}  // namespace stave::server::pgwire
