#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace stave {

/// The outcome of an operation at an I/O boundary (RocksDB, sockets, external systems).
/// Errors from those libraries are converted into a Status where they are called.
class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk,
    kNotFound,
    kIoError,
    kDiskFull,
    kCorruption,
    kInvalidArgument,
    kUnavailable
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status NotFound(std::string message) {
    return Status(Code::kNotFound, std::move(message));
  }
  static Status IoError(std::string message) { return Status(Code::kIoError, std::move(message)); }
  /// An I/O error because the device has no space left (ENOSPC): SQLSTATE 53100.
  static Status DiskFull(std::string message) {
    return Status(Code::kDiskFull, std::move(message));
  }
  static Status Corruption(std::string message) {
    return Status(Code::kCorruption, std::move(message));
  }
  static Status InvalidArgument(std::string message) {
    return Status(Code::kInvalidArgument, std::move(message));
  }
  static Status Unavailable(std::string message) {
    return Status(Code::kUnavailable, std::move(message));
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

  /// The SQLSTATE a user sees for this status (PostgreSQL's class 53 for a full disk, 58030
  /// for other I/O errors). REQUIRES: !ok().
  std::string_view sqlstate() const;

  /// Throws a SqlError carrying this status (with a fitting SQLSTATE) if it is not ok.
  /// Used where an I/O failure must reach a user as a statement error.
  void ThrowIfError() const;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

/// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}        // NOLINT: implicit on purpose.
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit on purpose.
    assert(!std::get<Status>(data_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }
  /// REQUIRES: ok().
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  /// Returns the value, or throws the status as a SqlError.
  T ValueOrThrow() && {
    if (!ok()) status().ThrowIfError();
    return std::get<T>(std::move(data_));
  }

 private:
  std::variant<T, Status> data_;
};

}  // namespace stave
