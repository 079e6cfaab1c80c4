#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/sql_error.h"

namespace stave::parser {

/// Bounds the stack a parse may use. ANTLR's parser and our tree walk recurse once per level of
/// nesting, so input such as ten thousand '(' would otherwise overflow the stack and kill the
/// server. Measuring bytes of stack rather than counting levels keeps the bound right whatever
/// the frame sizes are (optimization level, sanitizers). Internal to parser/.
class StackLimit {
 public:
  /// PostgreSQL's SQLSTATE for "stack depth limit exceeded" (statement_too_complex).
  static constexpr std::string_view kStatementTooComplex = "54001";

  /// Remembers the current stack position as the base; Check() fails once the stack has grown
  /// more than `max_bytes` beyond it.
  explicit StackLimit(size_t max_bytes) : base_(CurrentAddress()), max_bytes_(max_bytes) {}

  /// Throws SqlError(54001) when the stack has grown beyond the limit. Inlined, so that the
  /// frame address it reads is the caller's.
  __attribute__((always_inline)) void Check() const {
    // The stack grows downwards on every platform we build for.
    uintptr_t here = CurrentAddress();
    if (here < base_ && base_ - here > max_bytes_) {
      throw SqlError(kStatementTooComplex, "stack depth limit exceeded");
    }
  }

 private:
  // The frame address, unlike the address of a local variable, stays on the real stack under
  // AddressSanitizer's fake stacks.
  __attribute__((always_inline)) static uintptr_t CurrentAddress() {
    return reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  }

  uintptr_t base_;
  size_t max_bytes_;
};

}  // namespace stave::parser
