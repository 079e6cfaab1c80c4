#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace stave {

/// SQLSTATE codes Stave reports (PostgreSQL appendix A).
namespace sqlstate {
inline constexpr std::string_view kSyntaxError = "42601";
inline constexpr std::string_view kUndefinedTable = "42P01";
inline constexpr std::string_view kUndefinedColumn = "42703";
inline constexpr std::string_view kUndefinedFunction = "42883";
inline constexpr std::string_view kUndefinedObject = "42704";
inline constexpr std::string_view kDatatypeMismatch = "42804";
inline constexpr std::string_view kDuplicateObject = "42710";
inline constexpr std::string_view kDuplicateTable = "42P07";
inline constexpr std::string_view kAmbiguousColumn = "42702";
inline constexpr std::string_view kGroupingError = "42803";
inline constexpr std::string_view kWrongObjectType = "42809";
inline constexpr std::string_view kInvalidParameterValue = "22023";
inline constexpr std::string_view kInvalidTextRepresentation = "22P02";
inline constexpr std::string_view kNumericValueOutOfRange = "22003";
inline constexpr std::string_view kDivisionByZero = "22012";
inline constexpr std::string_view kInvalidArgumentForLog = "2201E";
inline constexpr std::string_view kInvalidArgumentForPower = "2201F";
inline constexpr std::string_view kDependentObjectsStillExist = "2BP01";
inline constexpr std::string_view kFeatureNotSupported = "0A000";
inline constexpr std::string_view kUndefinedParameter =
    "42704";  // unrecognized configuration parameter
inline constexpr std::string_view kProtocolViolation = "08P01";
inline constexpr std::string_view kInFailedTransaction = "25P02";
inline constexpr std::string_view kQueryCanceled = "57014";
inline constexpr std::string_view kAdminShutdown = "57P01";
inline constexpr std::string_view kIoError = "58030";
inline constexpr std::string_view kDiskFull = "53100";
inline constexpr std::string_view kOutOfMemory = "53200";
inline constexpr std::string_view kProgramLimitExceeded = "54000";
inline constexpr std::string_view kInternalError = "XX000";
}  // namespace sqlstate

/// An error a user caused or must act on: a bad statement, option or value, an unreachable
/// system. Thrown inside parser/planner/executor and turned into an ErrorResponse by the
/// server. Internal bugs are not SqlErrors; they are assertions.
class SqlError : public std::runtime_error {
 public:
  /// `position` is the 1-based character offset into the query string, 0 when unknown.
  SqlError(std::string_view sqlstate, const std::string& message, int position = 0)
      : std::runtime_error(message), sqlstate_(sqlstate), position_(position) {}

  const std::string& sqlstate() const { return sqlstate_; }
  int position() const { return position_; }
  const std::string& detail() const { return detail_; }
  const std::string& hint() const { return hint_; }
  /// Where the error happened, as PostgreSQL's CONTEXT field says ("COPY t, line 3").
  const std::string& context() const { return context_; }

  SqlError& WithDetail(std::string detail) {
    detail_ = std::move(detail);
    return *this;
  }
  SqlError& WithHint(std::string hint) {
    hint_ = std::move(hint);
    return *this;
  }
  SqlError& WithContext(std::string context) {
    context_ = std::move(context);
    return *this;
  }
  /// Sets the position if none is known yet, so inner code may throw without one.
  SqlError& WithPositionIfUnset(int position) {
    if (position_ == 0) position_ = position;
    return *this;
  }

 private:
  std::string sqlstate_;
  int position_;
  std::string detail_;
  std::string hint_;
  std::string context_;
};

}  // namespace stave
