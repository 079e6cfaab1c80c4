#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/data_type.h"
#include "common/value.h"

namespace stave::server::pgwire {

/// The format codes of Bind parameters and result columns.
inline constexpr int16_t kTextFormat = 0;
inline constexpr int16_t kBinaryFormat = 1;

/// The Stave type a client means by a PostgreSQL type OID in a Parse message. Nullopt for
/// 0 and `unknown` (705): the server infers the type. Throws SqlError 0A000 for a type Stave
/// does not have (42704 for an OID that names no type at all is not distinguished).
std::optional<DataType> DataTypeFromOid(int32_t oid);

/// Decodes the value of Bind parameter `number` (1-based) of `type` from its text or binary
/// format. Throws SqlError as PostgreSQL does: 22P02 and the type's input message for bad
/// text ("invalid input syntax for type integer: \"x\""), 22P03 for binary data of the wrong
/// size ("incorrect binary data format in bind parameter 1"), 22003/22008 for values out of
/// range.
Value DecodeParameter(std::string_view bytes, int16_t format, DataType type, int number);

/// PostgreSQL's binary (send) format of a non-null value of `type`, as DataRow carries it
/// when the client asked for binary results. Untyped values are sent as text.
std::string EncodeBinaryValue(const Value& value, DataType type);

}  // namespace stave::server::pgwire
