#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace stave {

// Reads an integer from a stored JSON document (a catalog entry, a source position, a sink
// record). nlohmann's get<T>() converts a floating-point number with a plain cast, which is
// undefined behaviour when the number does not fit; a damaged document must come back as an
// error instead, so this throws the type_error the callers already catch.
template <typename T>
T JsonInteger(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    uint64_t number = value.get<uint64_t>();
    if (std::in_range<T>(number)) return static_cast<T>(number);
  } else if (value.is_number_integer()) {
    int64_t number = value.get<int64_t>();
    if (std::in_range<T>(number)) return static_cast<T>(number);
  }
  throw nlohmann::json::type_error::create(
      302, "expected an integer that fits, got " + value.dump(), &value);
}

// JsonInteger of object[key], or fallback when the key is absent.
template <typename T>
T JsonIntegerOr(const nlohmann::json& object, const char* key, T fallback) {
  auto found = object.find(key);
  return found == object.end() ? fallback : JsonInteger<T>(*found);
}

}  // namespace stave
