#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stave {

/// The logical SQL types Stave knows. Each maps to one physical representation in `Value`
/// and in chunk columns: integers, booleans and temporal types as int64, floating point as
/// double, character data as std::string.
enum class TypeId : uint8_t {
  kUnknown = 0,  ///< Untyped NULL or string literal before coercion.
  kBoolean,
  kInt16,
  kInt32,
  kInt64,
  kFloat32,
  kFloat64,
  kVarchar,
};

/// How values of a type are held in memory.
enum class PhysicalType : uint8_t { kInt64, kFloat64, kString };

/// A SQL data type. A struct rather than a bare enum so that modifiers (varchar length,
/// numeric precision) can be added without changing every signature.
struct DataType {
  TypeId id = TypeId::kUnknown;

  DataType() = default;
  constexpr DataType(TypeId type_id) : id(type_id) {}  // NOLINT: implicit on purpose.

  bool operator==(const DataType& other) const = default;

  PhysicalType physical() const;
  bool IsInteger() const;
  bool IsFloat() const;
  bool IsNumeric() const { return IsInteger() || IsFloat(); }
  bool IsString() const { return id == TypeId::kVarchar; }

  /// The PostgreSQL type OID clients see in RowDescription.
  int32_t Oid() const;
  /// The PostgreSQL type length (pg_type.typlen) sent in RowDescription.
  int16_t TypeLength() const;
  /// The PostgreSQL name, as `format_type` prints it (e.g. "bigint", "character varying").
  std::string Name() const;
};

/// Resolves a SQL type name as written by a user ("int", "bigint", "double precision",
/// "varchar", "text", ...). Returns nullopt for names Stave does not know.
std::optional<DataType> DataTypeFromName(std::string_view name);

}  // namespace stave
