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
  std::vector<Value> row;
  row.reserve(types.size());
  for (const DataType& type : types) {
    if (bytes.empty()) return std::nullopt;
    char tag = bytes.front();
    bytes.remove_prefix(1);
    if (tag == 0) {
      row.push_back(Value::Null());
      continue;
    }
    if (tag != 1) return std::nullopt;
    switch (type.physical()) {
      case PhysicalType::kInt64:
      case PhysicalType::kFloat64: {
        if (bytes.size() < 8) return std::nullopt;
        uint64_t bits;
        std::memcpy(&bits, bytes.data(), 8);
        bytes.remove_prefix(8);
        if (type.physical() == PhysicalType::kInt64) {
          row.push_back(Value::Int(static_cast<int64_t>(bits)));
        } else {
          double d;
          std::memcpy(&d, &bits, 8);
          row.push_back(Value::Double(d));
        }
        break;
      }
      case PhysicalType::kString: {
        uint64_t length;
        if (!ReadVarint(&bytes, &length) || length > bytes.size()) return std::nullopt;
        row.push_back(Value::String(std::string(bytes.substr(0, length))));
        bytes.remove_prefix(length);
        break;
      }
    }
  }
  if (!bytes.empty()) return std::nullopt;
  return row;
}

}  // namespace stave::storage
