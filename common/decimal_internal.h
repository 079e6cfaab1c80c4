#pragma once

// What common/decimal.cc and common/decimal_math.cc share and nothing else uses.

#include <cstdint>

#include "common/decimal.h"

namespace stave::decimal::internal {

/// 22003 "value overflows numeric format", PostgreSQL's error for a value beyond numeric.
[[noreturn]] void ThrowOverflow();

/// The first base-10000 digits of a finite nonzero |value| as PostgreSQL stores it: groups
/// of four decimal digits aligned on the point, without leading or trailing zero groups.
/// numeric.c's result scales start from them.
struct Base10000 {
  int weight = 0;     ///< The first group is worth 10000^weight.
  int64_t count = 0;  ///< Groups from the first nonzero one to the last.
  int digits[4] = {0, 0, 0, 0};
};
Base10000 Base10000Digits(const Decimal& value);

}  // namespace stave::decimal::internal
