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
  } values;
  values.row.reserve(types.size());
  if (!VisitRow(bytes, types, values)) return std::nullopt;
  return std::move(values.row);
}

}  // namespace stave::storage
