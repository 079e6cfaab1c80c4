#include "common/data_type.h"

#include <array>
#include <utility>

namespace stave {
namespace {

// pg_type's array types (typarray) of the element types Stave has.
int32_t ArrayOid(TypeId element) {
  switch (element) {
    case TypeId::kBoolean:
      return 1000;
    case TypeId::kInt16:
      return 1005;
    case TypeId::kInt32:
      return 1007;
    case TypeId::kInt64:
      return 1016;
    case TypeId::kFloat32:
      return 1021;
    case TypeId::kFloat64:
      return 1022;
    case TypeId::kVarchar:
      return 1015;
    case TypeId::kDate:
      return 1182;
    case TypeId::kTime:
      return 1183;
    case TypeId::kTimestamp:
      return 1115;
    case TypeId::kTimestampTz:
      return 1185;
    case TypeId::kInterval:
      return 1187;
    case TypeId::kBytea:
      return 1001;
    case TypeId::kJsonb:
      return 3807;
    default:
      return 1009;  // text[]
  }
}

}  // namespace

bool DataType::IsInteger() const {
  return id == TypeId::kInt16 || id == TypeId::kInt32 || id == TypeId::kInt64;
}

bool DataType::IsFloat() const { return id == TypeId::kFloat32 || id == TypeId::kFloat64; }

int32_t DataType::Oid() const {
  switch (id) {
    case TypeId::kBoolean:
      return 16;
    case TypeId::kInt16:
      return 21;
    case TypeId::kInt32:
      return 23;
    case TypeId::kInt64:
      return 20;
    case TypeId::kFloat32:
      return 700;
    case TypeId::kFloat64:
      return 701;
    case TypeId::kVarchar:
      return 1043;
    case TypeId::kDate:
      return 1082;
    case TypeId::kTime:
      return 1083;
    case TypeId::kTimestamp:
      return 1114;
    case TypeId::kTimestampTz:
      return 1184;
    case TypeId::kInterval:
      return 1186;
    case TypeId::kNumeric:
      return 1700;
    case TypeId::kBytea:
      return 17;
    case TypeId::kJsonb:
      return 3802;
    case TypeId::kArray:
      return ArrayOid(element);
    case TypeId::kUnknown:
      return 25;  // An untyped literal is reported as text, as PostgreSQL does for SELECT 'x'.
  }
  return 25;
}

int16_t DataType::TypeLength() const {
  switch (id) {
    case TypeId::kBoolean:
      return 1;
    case TypeId::kInt16:
      return 2;
    case TypeId::kInt32:
    case TypeId::kFloat32:
    case TypeId::kDate:
      return 4;
    case TypeId::kInt64:
    case TypeId::kFloat64:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return 8;
    case TypeId::kInterval:
      return 16;
    default:
      return -1;
  }
}

std::string DataType::Name() const {
  switch (id) {
    case TypeId::kBoolean:
      return "boolean";
    case TypeId::kInt16:
      return "smallint";
    case TypeId::kInt32:
      return "integer";
    case TypeId::kInt64:
      return "bigint";
    case TypeId::kFloat32:
      return "real";
    case TypeId::kFloat64:
      return "double precision";
    case TypeId::kVarchar:
      return "character varying";
    case TypeId::kDate:
      return "date";
    case TypeId::kTime:
      return "time without time zone";
    case TypeId::kTimestamp:
      return "timestamp without time zone";
    case TypeId::kTimestampTz:
      return "timestamp with time zone";
    case TypeId::kInterval:
      return "interval";
    case TypeId::kNumeric:
      return "numeric";
    case TypeId::kBytea:
      return "bytea";
    case TypeId::kJsonb:
      return "jsonb";
    case TypeId::kArray:
      return ElementType().Name() + "[]";
    case TypeId::kUnknown:
      return "unknown";
  }
  return "unknown";
}

int32_t DataType::Typmod() const {
  if (!HasTypmod()) return -1;
  if (id == TypeId::kVarchar) return length + 4;
  return ((static_cast<int32_t>(precision) << 16) | (static_cast<uint16_t>(scale) & 0x7ff)) + 4;
}

std::string DataType::NameWithTypmod() const {
  if (!HasTypmod()) return Name();
  if (id == TypeId::kVarchar) return "character varying(" + std::to_string(length) + ")";
  return "numeric(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
}

std::optional<DataType> DataTypeFromName(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, TypeId>, 30> kNames = {{
      {"boolean", TypeId::kBoolean},
      {"bool", TypeId::kBoolean},
      {"smallint", TypeId::kInt16},
      {"int2", TypeId::kInt16},
      {"int", TypeId::kInt32},
      {"integer", TypeId::kInt32},
      {"int4", TypeId::kInt32},
      {"bigint", TypeId::kInt64},
      {"int8", TypeId::kInt64},
      {"real", TypeId::kFloat32},
      {"float4", TypeId::kFloat32},
      {"double precision", TypeId::kFloat64},
      {"float8", TypeId::kFloat64},
      {"float", TypeId::kFloat64},
      {"varchar", TypeId::kVarchar},
      {"character varying", TypeId::kVarchar},
      {"text", TypeId::kVarchar},
      {"string", TypeId::kVarchar},
      {"date", TypeId::kDate},
      {"time", TypeId::kTime},
      {"time without time zone", TypeId::kTime},
      {"timestamp", TypeId::kTimestamp},
      {"timestamp without time zone", TypeId::kTimestamp},
      {"timestamptz", TypeId::kTimestampTz},
      {"timestamp with time zone", TypeId::kTimestampTz},
      {"interval", TypeId::kInterval},
      {"numeric", TypeId::kNumeric},
      {"decimal", TypeId::kNumeric},
      {"bytea", TypeId::kBytea},
      {"jsonb", TypeId::kJsonb},
  }};
  for (const auto& [type_name, type_id] : kNames) {
    if (type_name == name) return DataType(type_id);
  }
  return std::nullopt;
}

}  // namespace stave
