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
    case Code::kCorruption:
      return "corruption: " + message_;
    case Code::kInvalidArgument:
      return "invalid argument: " + message_;
    case Code::kUnavailable:
      return "unavailable: " + message_;
  }
  return message_;
}

void Status::ThrowIfError() const {
  switch (code_) {
    case Code::kOk:
      return;
    case Code::kNotFound:
      throw SqlError(sqlstate::kUndefinedObject, message_);
    case Code::kInvalidArgument:
      throw SqlError(sqlstate::kInvalidParameterValue, message_);
    case Code::kUnavailable:
      throw SqlError("08006", message_);
    case Code::kIoError:
      throw SqlError(sqlstate::kIoError, ToString());
    case Code::kCorruption:
      throw SqlError("XX001", ToString());
  }
}

}  // namespace stave
