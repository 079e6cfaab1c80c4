#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>

namespace stave {

/// How a client stops its running statement: a CancelRequest (psql's Ctrl-C, libpq's
/// PQcancel, JDBC's Statement.cancel) arrives on another connection and thread, while the
/// statement checks now and then whether it should stop (the batch executor between chunks).
/// It also carries the statement's deadline (SET statement_timeout).
///
/// Thread-safety: Cancel may be called from any thread; the other members only from the
/// thread that runs the session's statements.
class Cancellation {
 public:
  using Clock = std::chrono::steady_clock;

  /// A statement starts: an earlier request is forgotten (a cancel that arrives between
  /// statements cancels nothing, as in PostgreSQL), and `deadline`, if any, applies.
  void BeginStatement(std::optional<Clock::time_point> deadline);
  /// The statement is over: requests until the next BeginStatement are ignored.
  void EndStatement();

  /// Begins a statement for its scope. Ends it however the scope is left.
  class Statement {
   public:
    Statement(Cancellation* cancellation, std::optional<Clock::time_point> deadline)
        : cancellation_(cancellation) {
      cancellation_->BeginStatement(deadline);
    }
    ~Statement() { cancellation_->EndStatement(); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

   private:
    Cancellation* cancellation_;
  };

  /// Asks the running statement, if any, to stop. Thread-safe.
  void Cancel();

  /// Throws SqlError 57014 "canceling statement due to user request" after Cancel, or
  /// "... due to statement timeout" once the deadline has passed. Cheap enough to call
  /// once per chunk of rows.
  void ThrowIfCancelled() const;

 private:
  std::mutex mutex_;                           // Orders Cancel against Begin/EndStatement.
  bool running_ = false;                       // GUARDED_BY(mutex_)
  std::atomic<bool> requested_{false};         // Read without the mutex by ThrowIfCancelled.
  std::optional<Clock::time_point> deadline_;  // The statement thread's own.
};

/// Calls `cancellation->ThrowIfCancelled()` unless it is null (a statement nobody can
/// cancel: recovery, internal queries, tests).
inline void ThrowIfCancelled(const Cancellation* cancellation) {
  if (cancellation != nullptr) cancellation->ThrowIfCancelled();
}

}  // namespace stave
