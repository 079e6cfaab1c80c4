#include "storage/row_codec.h"

#include <cstring>

#include "common/sql_error.h"
#include "storage/varint.h"

namespace stave::storage {
// A wide numeric's tag in place of its kind: its scale, its sign, then its unscaled digits
// as text (they are rare; the text keeps them exact and simple).
constexpr uint8_t kWideFiniteTag = 4;

void AppendRowDecimal(const Decimal& value, std::string* out) {
  if (value.is_wide()) {
    out->push_back(static_cast<char>(kWideFiniteTag));
    AppendVarint(static_cast<uint64_t>(value.scale), out);
    out->push_back(decimal::SignOf(value) < 0 ? '-' : '+');
    std::string digits = decimal::UnscaledDigits(value);
    AppendVarint(digits.size(), out);
    out->append(digits);
    return;
  }
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
  uint64_t scale = 0;
  if (kind == kWideFiniteTag) {
    uint64_t size = 0;
    if (!ReadVarint(in, &scale) || scale > static_cast<uint64_t>(decimal::kMaxScale) ||
        in->empty()) {
      return false;
    }
    bool negative = in->front() == '-';
    in->remove_prefix(1);
    if (!ReadVarint(in, &size) || size == 0 || in->size() < size) return false;
    std::string_view digits = in->substr(0, size);
    if (digits.find_first_not_of("0123456789") != std::string_view::npos) return false;
    in->remove_prefix(size);
    try {
      *value = decimal::FromUnscaledDigits(negative, digits, static_cast<int>(scale));
    } catch (const SqlError&) {
      return false;  // beyond numeric's limits: not a row this codec wrote
    }
    return true;
  }
  if (kind > static_cast<uint8_t>(Decimal::Kind::kNegativeInfinity)) return false;
  *value = Decimal();
  value->kind = static_cast<Decimal::Kind>(kind);
  if (!value->is_finite()) return true;
  uint64_t low = 0, high = 0;
  if (!ReadVarint(in, &scale) || !ReadVarint(in, &low) || !ReadVarint(in, &high)) return false;
  if (scale > static_cast<uint64_t>(decimal::kMaxScale)) return false;
  UInt128 zigzag = (static_cast<UInt128>(high) << 64) | low;
  value->unscaled = static_cast<Int128>(zigzag >> 1) ^ -static_cast<Int128>(zigzag & 1);
  value->scale = static_cast<int32_t>(scale);
  return true;
}

void EncodeRow(const std::vector<Value>& row, const RowTypes& types, std::string* out) {
  EncodeRowFrom(RowValues{row}, types, out);
}

namespace {

// The visitor of DecodeRow: a Value per column.
struct ToValues {
  std::vector<Value> row;
  void Null(size_t) { row.push_back(Value::Null()); }
  void Int(size_t, int64_t value) { row.push_back(Value::Int(value)); }
  void Double(size_t, double value) { row.push_back(Value::Double(value)); }
  void String(size_t, std::string_view value) { row.push_back(Value::String(std::string(value))); }
  void Numeric(size_t, const Decimal& value) { row.push_back(Value::Numeric(value)); }
};

}  // namespace

std::optional<std::vector<Value>> DecodeRow(std::string_view bytes, const RowTypes& types) {
  std::optional<std::vector<Value>> row = DecodeRowPrefix(&bytes, types);
  if (!bytes.empty()) return std::nullopt;
  return row;
}

std::optional<std::vector<Value>> DecodeRowPrefix(std::string_view* bytes, const RowTypes& types) {
  ToValues values;
  values.row.reserve(types.size());
  if (!VisitRowPrefix(bytes, types, values)) return std::nullopt;
  return std::move(values.row);
}

}  // namespace stave::storage
