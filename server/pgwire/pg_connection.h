#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "executor/query_result.h"
#include "server/pgwire/authentication.h"
#include "server/pgwire/byte_stream.h"
#include "server/pgwire/message_writer.h"
#include "server/pgwire/protocol.h"
#include "server/query_session.h"

namespace stave::server::pgwire {

/// What a PgConnection needs to know about its place in the server.
struct PgConnectionConfig {
  /// The BackendKeyData key a client quotes in a CancelRequest for this connection.
  int32_t process_id = 0;
  int32_t secret_key = 0;
  /// Only for log lines: where the client connects from.
  std::string peer;
  /// The client's address without the port, for error messages.
  std::string peer_address;
  /// How this client must authenticate (the server picks it by the client's address).
  AuthMethod auth_method = AuthMethod::kTrust;
  /// The users and their verifiers. May be empty under trust: any user name is accepted.
  CredentialLookup credentials;
  /// Refuse the client (28000) unless it switched to TLS with an SSLRequest first.
  bool require_tls = false;
  /// How long the client may take from connecting to sending its StartupMessage
  /// (PostgreSQL's authentication_timeout); zero means no limit.
  std::chrono::milliseconds startup_timeout{60'000};
  /// The largest message (length word included) accepted for messages that carry SQL or
  /// data: Query, Parse, Bind, FunctionCall, CopyData. A longer one is a protocol violation
  /// (FATAL 08P01) detected from its length word, before any of its body is read.
  uint32_t max_message_length = kDefaultMaxMessageLength;
  /// Pending output is sent once it grows past this, so big results stream to the client
  /// instead of piling up in memory.
  size_t flush_threshold = 64 * 1024;
  /// Called when the connection turns out to be a CancelRequest, with the key it quotes
  /// (not verified: that is the callee's job). May be empty.
  std::function<void(int32_t process_id, int32_t secret_key)> on_cancel_request;
  /// What a CancelRequest quoting this connection's key triggers; handed to the session.
  /// May be null.
  std::shared_ptr<Cancellation> cancellation;
};

/// The PostgreSQL v3 protocol for one client connection, from the startup packet to the
/// end: SSL negotiation (TLS when the stream offers it; GSS is declined), StartupMessage,
/// authentication (trust, password, MD5 or SCRAM-SHA-256), then
/// simple Query messages and the extended query protocol (Parse, Bind, Describe, Execute,
/// Close, Sync, Flush; named and unnamed statements and portals, text and binary formats,
/// row limits) run through a QuerySession made by the factory. After an error in the
/// extended protocol every message up to the next Sync is skipped, as in PostgreSQL.
///
/// Errors of statements are reported and the connection goes on; protocol violations
/// (bad lengths, unknown message types, malformed messages) get a FATAL ErrorResponse 08P01
/// and end the connection. Memory use is bounded by what the client actually sends, never by
/// a length word it claims. Not thread-safe: one thread runs it.
class PgConnection {
 public:
  /// `stream` and `session_factory` must outlive the connection.
  PgConnection(ByteStream* stream, const QuerySessionFactory* session_factory,
               PgConnectionConfig config);
  ~PgConnection();

  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  /// Runs the connection until the client terminates or disconnects, a protocol error, or a
  /// failure of the stream. Does not throw; the caller closes the stream afterwards.
  void Run();

 private:
  /// The client went away (end of stream in the middle of a message, or a failed write).
  /// Nothing more can be said to it; the connection just ends.
  class ConnectionLost : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
  };
  class AuthenticationFailed;
  /// The copy-in exchange of COPY ... FROM STDIN (pg_connection_copy.cc).
  class CopyIn : public CopyInput {
   public:
    explicit CopyIn(PgConnection* connection) : connection_(connection) {}
    void Begin(size_t columns) override;
    std::optional<std::string> Next() override;

   private:
    PgConnection* connection_;
  };

  // The startup phase; returns true when a session is ready for queries.
  bool RunStartup();
  void RunMessageLoop();
  // Answers an SSLRequest: 'S' and the TLS handshake when the stream offers TLS, else 'N'.
  void HandleSslRequest();
  // Authentication (pg_connection_auth.cc): runs config_.auth_method for `user`. Returns
  // false, after a FATAL error to the client, when the client may not in.
  bool Authenticate(const std::string& user);
  // Throws AuthenticationFailed.
  void RunAuthentication(const std::string& user);
  void AuthenticateCleartext(const std::optional<UserCredentials>& credentials);
  void AuthenticateMd5(const std::optional<UserCredentials>& credentials);
  void AuthenticateScram(const std::optional<UserCredentials>& credentials);
  // Reads one PasswordMessage/SASLInitialResponse/SASLResponse ('p') and returns its body.
  std::string ReadPasswordMessage();
  void RunQuery(std::string_view sql);
  // Runs `run`, reporting a statement error (SqlError or another exception) as an
  // ErrorResponse; returns false if it failed. Protocol errors and a lost connection
  // propagate.
  bool RunReportingErrors(const std::function<void()>& run);
  // Runs one extended-protocol message (Parse, Bind, Describe, Execute, Close). A statement
  // error is reported, and the messages up to the next Sync are skipped.
  void RunExtendedMessage(char type, std::string_view body);
  // The extended protocol's messages (pg_connection_extended.cc); each throws SqlError.
  void HandleParse(std::string_view body);
  void HandleBind(std::string_view body);
  void HandleDescribe(std::string_view body);
  void HandleExecute(std::string_view body);
  void HandleClose(std::string_view body);
  void HandleSync();
  void SendChangedParameters();
  void SendResult(const executor::QueryResult& result);
  // NoticeResponses of a statement, before its CommandComplete.
  void SendNotices(const executor::QueryResult& result);
  // Reports a statement error: ErrorResponse, then QuerySession::OnError.
  void ReportError(const ErrorFields& fields);
  // Best-effort FATAL ErrorResponse before the connection ends.
  void SendFatal(std::string_view sqlstate, std::string_view message);

  // Reads exactly `size` bytes unless the stream ends first; returns how many were read.
  size_t Read(char* data, size_t size);
  // Reads a message body of `size` bytes, growing the buffer only as bytes arrive. Throws
  // ConnectionLost if the stream ends first.
  std::string ReadBody(size_t size);
  // Discards `size` bytes without buffering them. Throws ConnectionLost if the stream ends.
  void SkipBody(size_t size);
  // Sends the pending output. Throws ConnectionLost if the client is gone.
  void Flush();
  void FlushIfLarge();

  /// A portal of the extended protocol: a prepared statement bound to parameter values, and
  /// its result from the first Execute on, which later Executes hand out in parts.
  struct Portal {
    std::shared_ptr<const PreparedStatement> statement;
    std::vector<Value> parameters;
    std::vector<int16_t> result_formats;  // One per result column; empty: all text.
    bool executed = false;
    executor::QueryResult result;
    size_t next_row = 0;  // The first row the next Execute sends.
  };

  ByteStream* stream_;
  const QuerySessionFactory* session_factory_;
  PgConnectionConfig config_;
  std::unique_ptr<QuerySession> session_;
  CopyIn copy_in_{this};
  MessageWriter writer_;
  std::vector<char> input_;  // Bytes read from the stream but not consumed yet.
  size_t input_begin_ = 0;
  size_t input_end_ = 0;
  // Prepared statements and portals by name; "" is the unnamed one, which the next Parse
  // (Bind) replaces. Portals end with the transaction they were made in.
  std::map<std::string, std::shared_ptr<const PreparedStatement>, std::less<>> statements_;
  std::map<std::string, Portal, std::less<>> portals_;
  bool skipping_until_sync_ = false;  // After an extended-protocol error, as PostgreSQL does.
  bool connection_lost_ = false;      // Set when a write failed inside a session callback.
};

}  // namespace stave::server::pgwire
