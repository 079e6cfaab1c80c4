#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stave {

/// The logical SQL types Stave knows. Each maps to one physical representation in `Value`
/// and in chunk columns: integers, booleans and temporal types as int64, floating point as
/// double, character data as std::string. The temporal types follow PostgreSQL's own
/// representation (common/temporal.h): date as days and time, timestamp and timestamptz as
/// microseconds, counted from 2000-01-01 (midnight for time), so that the pgwire binary
/// format and PostgreSQL's arithmetic carry over unchanged. An interval has three fields
/// (months, days, microseconds) and is held as a fixed-size binary string whose byte order
/// is PostgreSQL's interval order (see temporal::EncodeInterval), so that comparison,
/// hashing, the row and key codecs and grouping need no interval-specific code. bytea, jsonb
/// and arrays are strings too, for the same reason: bytea holds its bytes, jsonb its
/// canonical text (common/jsonb.h), an array an order-preserving encoding of its elements
/// (common/array_value.h).
enum class TypeId : uint8_t {
  kUnknown = 0,  ///< Untyped NULL or string literal before coercion.
  kBoolean,
  kInt16,
  kInt32,
  kInt64,
  kFloat32,
  kFloat64,
  kVarchar,
  kDate,         ///< Days since 2000-01-01.
  kTime,         ///< Microseconds since midnight (time without time zone).
  kTimestamp,    ///< Microseconds since 2000-01-01 00:00:00 (timestamp without time zone).
  kTimestampTz,  ///< Microseconds since 2000-01-01 00:00:00 UTC (timestamp with time zone).
  kInterval,     ///< temporal::EncodeInterval bytes (months, days, microseconds).
  kNumeric,      ///< An exact decimal (common/decimal.h), with an optional precision and scale.
  kBytea,        ///< The bytes themselves.
  kJsonb,        ///< jsonb::Parse's canonical text, as PostgreSQL prints jsonb.
  kArray,        ///< array::Encode bytes; DataType::element names the element type.
};

/// How values of a type are held in memory.
enum class PhysicalType : uint8_t { kInt64, kFloat64, kString, kDecimal };

/// A SQL data type. A struct rather than a bare enum so that modifiers (varchar length,
/// numeric precision) can be added without changing every signature.
struct DataType {
  TypeId id = TypeId::kUnknown;
  /// numeric(precision, scale): precision 0 means unconstrained `numeric`, whose values keep
  /// their own scale. PostgreSQL's type modifier, which its results drop.
  int16_t precision = 0;
  int16_t scale = 0;
  /// The element type of an array (one dimension of a scalar type); kUnknown otherwise.
  TypeId element = TypeId::kUnknown;
  /// varchar(n): the most characters a value may hold, 0 for no limit. Like PostgreSQL's type
  /// modifier it is not part of the type's identity (types compare equal without it):
  /// explicit casts to varchar(n) cut values to n characters, and tables refuse longer
  /// values (executor/dml.cc); expressions over the column are plain varchar.
  int32_t length = 0;
  /// The first subscript of an array: 1, or 0 for PostgreSQL's int2vector and oidvector (the
  /// catalogs' pg_index.indkey, pg_proc.proargtypes), which hold their elements as arrays do.
  int8_t lower_bound = 1;

  DataType() = default;
  constexpr DataType(TypeId type_id) : id(type_id) {}  // NOLINT: implicit on purpose.
  static constexpr DataType Numeric(int16_t precision, int16_t scale) {
    DataType type(TypeId::kNumeric);
    type.precision = precision;
    type.scale = scale;
    return type;
  }
  /// The one-dimensional array of `element_type`. REQUIRES: a scalar type, not kUnknown.
  static constexpr DataType ArrayOf(TypeId element_type) {
    DataType type(TypeId::kArray);
    type.element = element_type;
    return type;
  }
  /// PostgreSQL's int2vector (`element` kInt16) or oidvector (kInt64, as Stave holds OIDs):
  /// an array whose subscripts start at 0.
  static constexpr DataType VectorOf(TypeId element_type) {
    DataType type = ArrayOf(element_type);
    type.lower_bound = 0;
    return type;
  }

  /// Types are equal regardless of `lower_bound` and `length`: an int2vector is an int2[]
  /// wherever one is expected, as in PostgreSQL (a binary-coercible cast), and compares with
  /// one; a varchar(n) is a varchar.
  bool operator==(const DataType& other) const {
    return id == other.id && precision == other.precision && scale == other.scale &&
           element == other.element;
  }

  /// Inline: asked per value on the hot paths (key encoding, chunk columns).
  PhysicalType physical() const {
    switch (id) {
      case TypeId::kFloat32:
      case TypeId::kFloat64:
        return PhysicalType::kFloat64;
      case TypeId::kVarchar:
      case TypeId::kUnknown:
      case TypeId::kInterval:
      case TypeId::kBytea:
      case TypeId::kJsonb:
      case TypeId::kArray:
        return PhysicalType::kString;
      case TypeId::kNumeric:
        return PhysicalType::kDecimal;
      default:
        return PhysicalType::kInt64;
    }
  }
  bool IsInteger() const;
  bool IsFloat() const;
  /// numeric, with or without a precision.
  bool IsDecimal() const { return id == TypeId::kNumeric; }
  /// Integer, floating point or numeric.
  bool IsNumeric() const { return IsInteger() || IsFloat() || IsDecimal(); }
  /// numeric(p, s) rather than unconstrained numeric, or varchar(n) rather than varchar.
  bool HasTypmod() const {
    return (id == TypeId::kNumeric && precision > 0) || (id == TypeId::kVarchar && length > 0);
  }
  static DataType Varchar(int32_t length) {
    DataType type(TypeId::kVarchar);
    type.length = length;
    return type;
  }
  bool IsString() const { return id == TypeId::kVarchar; }
  /// date, time, timestamp, timestamptz or interval.
  bool IsTemporal() const { return id >= TypeId::kDate && id <= TypeId::kInterval; }
  /// timestamp or timestamptz.
  bool IsTimestamp() const { return id == TypeId::kTimestamp || id == TypeId::kTimestampTz; }
  bool IsArray() const { return id == TypeId::kArray; }
  /// The element type of an array. REQUIRES: IsArray().
  DataType ElementType() const { return DataType(element); }

  /// The PostgreSQL type OID clients see in RowDescription.
  int32_t Oid() const;
  /// The PostgreSQL type length (pg_type.typlen) sent in RowDescription.
  int16_t TypeLength() const;
  /// The PostgreSQL type modifier (atttypmod) sent in RowDescription: -1, or for
  /// numeric(p, s) ((p << 16) | s) + 4 and for varchar(n) n + 4, as PostgreSQL encodes them.
  int32_t Typmod() const;
  /// The PostgreSQL name, as error messages print it (e.g. "bigint", "character varying",
  /// "numeric" without its modifier).
  std::string Name() const;
  /// The name with its modifier, as `format_type` prints it ("numeric(10,2)",
  /// "character varying(20)").
  std::string NameWithTypmod() const;
};

/// Resolves a SQL type name as written by a user ("int", "bigint", "double precision",
/// "varchar", "text", ...). Returns nullopt for names Stave does not know. Array types are
/// written with brackets (`int[]`), which the binder resolves around this.
std::optional<DataType> DataTypeFromName(std::string_view name);

}  // namespace stave
