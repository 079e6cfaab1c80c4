#include "common/status.h"

#include "common/sql_error.h"

namespace stave {

std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kNotFound:
      return "not found: " + message_;
    case Code::kIoError:
      return "I/O error: " + message_;
    case Code::kDiskFull:
      return "disk full: " + message_;
    case Code::kCorruption:
      return "corruption: " + message_;
    case Code::kInvalidArgument:
      return "invalid argument: " + message_;
    case Code::kUnavailable:
      return "unavailable: " + message_;
  }
  return message_;
}

std::string_view Status::sqlstate() const {
  switch (code_) {
    case Code::kOk:
      break;
    case Code::kNotFound:
      return sqlstate::kUndefinedObject;
    case Code::kInvalidArgument:
      return sqlstate::kInvalidParameterValue;
    case Code::kUnavailable:
      return "08006";
    case Code::kIoError:
      return sqlstate::kIoError;
    case Code::kDiskFull:
      return sqlstate::kDiskFull;
    case Code::kCorruption:
      return "XX001";
  }
  return sqlstate::kInternalError;
}

void Status::ThrowIfError() const {
  switch (code_) {
    case Code::kOk:
      return;
    case Code::kNotFound:
    case Code::kInvalidArgument:
    case Code::kUnavailable:
      throw SqlError(sqlstate(), message_);
    case Code::kIoError:
    case Code::kDiskFull:
    case Code::kCorruption:
      throw SqlError(sqlstate(), ToString());
  }
}

}  // namespace stave
