#include "storage/row_codec.h"

#include <cstring>

#include "storage/varint.h"

namespace stave::storage {
namespace {

void AppendFixed64(uint64_t value, std::string* out) {
  char bytes[8];
  std::memcpy(bytes, &value, 8);
  out->append(bytes, 8);
}

}  // namespace

void AppendRowDecimal(const Decimal& value, std::string* out) {
  out->push_back(static_cast<char>(value.kind));
  if (!value.is_finite()) return;
  AppendVarint(static_cast<uint64_t>(value.scale), out);
  UInt128 zigzag =
      (static_cast<UInt128>(value.unscaled) << 1) ^ static_cast<UInt128>(value.unscaled >> 127);
  AppendVarint(static_cast<uint64_t>(zigzag), out);
  AppendVarint(static_cast<uint64_t>(zigzag >> 64), out);
}

bool ReadRowDecimal(std::string_view* in, Decimal* value) {
  if (in->empty()) return false;
  auto kind = static_cast<uint8_t>(in->front());
  in->remove_prefix(1);
  if (kind > static_cast<uint8_t>(Decimal::Kind::kNegativeInfinity)) return false;
  *value = Decimal();
  value->kind = static_cast<Decimal::Kind>(kind);
  if (!value->is_finite()) return true;
  uint64_t scale = 0, low = 0, high = 0;
  if (!ReadVarint(in, &scale) || !ReadVarint(in, &low) || !ReadVarint(in, &high)) return false;
  if (scale > static_cast<uint64_t>(decimal::kMaxScale)) return false;
  UInt128 zigzag = (static_cast<UInt128>(high) << 64) | low;
  value->unscaled = static_cast<Int128>(zigzag >> 1) ^ -static_cast<Int128>(zigzag & 1);
  value->scale = static_cast<int32_t>(scale);
  return true;
}

void EncodeRow(const std::vector<Value>& row, const RowTypes& types, std::string* out) {
  for (size_t i = 0; i < types.size(); ++i) {
    const Value& value = row[i];
    if (value.is_null()) {
      out->push_back(0);
      continue;
    }
    out->push_back(1);
    switch (types[i].physical()) {
      case PhysicalType::kInt64:
        AppendFixed64(static_cast<uint64_t>(value.int_value()), out);
        break;
      case PhysicalType::kFloat64: {
        uint64_t bits;
        double d = value.double_value();
        std::memcpy(&bits, &d, 8);
        AppendFixed64(bits, out);
        break;
      }
      case PhysicalType::kString:
        AppendVarint(value.string_value().size(), out);
        out->append(value.string_value());
        break;
      case PhysicalType::kDecimal:
        AppendRowDecimal(value.decimal_value(), out);
        break;
    }
  }
}

std::optional<std::vector<Value>> DecodeRow(std::string_view bytes, const RowTypes& types) {
  struct ToValues {
    std::vector<Value> row;
    void Null(size_t) { row.push_back(Value::Null()); }
    void Int(size_t, int64_t value) { row.push_back(Value::Int(value)); }
    void Double(size_t, double value) { row.push_back(Value::Double(value)); }
    void String(size_t, std::string_view value) {
      row.push_back(Value::String(std::string(value)));
    }
    void Numeric(size_t, const Decimal& value) { row.push_back(Value::Numeric(value)); }
  } values;
  values.row.reserve(types.size());
  if (!VisitRow(bytes, types, values)) return std::nullopt;
  return std::move(values.row);
}

}  // namespace stave::storage
