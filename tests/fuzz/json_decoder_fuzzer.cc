// libFuzzer target: the record decoders of the sources (executor/connectors/format/), JSON
// (simdjson On Demand) above all, and CSV. The input is one record's payload, as a Kafka
// message value or a socket line brings it; the first byte picks the format. The columns
// cover every type, so each field conversion runs.
//
// Properties (RecordDecoder's contract): no crash, no sanitizer report, no leak, no
// exception; a decoded record appends exactly one value to each payload column and nothing
// to the others; a refused one leaves the chunk as it was and gives a one-line error of at
// most about 200 bytes.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "executor/chunk.h"
#include "executor/connectors/format/record_decoder.h"

namespace stave::executor {
namespace {

// Column 0 stands for a metadata column the source fills itself: decoders must not touch it.
std::vector<PayloadColumn> FuzzColumns() {
  return {{1, "id", TypeId::kInt64},
          {2, "name", TypeId::kVarchar},
          {3, "price", TypeId::kFloat64},
          {4, "ok", TypeId::kBoolean},
          {5, "small", TypeId::kInt16},
          {6, "mid", TypeId::kInt32},
          {7, "ratio", TypeId::kFloat32},
          {8, "amount", DataType::Numeric(12, 3)},
          {9, "n", TypeId::kNumeric},
          {10, "day", TypeId::kDate},
          {11, "at", TypeId::kTimestamp},
          {12, "attz", TypeId::kTimestampTz},
          {13, "clock", TypeId::kTime},
          {14, "span", TypeId::kInterval},
          {15, "blob", TypeId::kBytea},
          {16, "doc", TypeId::kJsonb},
          {17, "tags", DataType::ArrayOf(TypeId::kVarchar)},
          {18, "counts", DataType::ArrayOf(TypeId::kInt32)}};
}

Chunk EmptyChunk(const std::vector<PayloadColumn>& columns) {
  std::vector<DataType> types(columns.size() + 1, TypeId::kInt32);
  for (const PayloadColumn& column : columns) types[column.index] = column.type;
  return Chunk::WithTypes(types);
}

void Check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "record decoder contract broken: %s\n", what);
  std::abort();
}

}  // namespace
}  // namespace stave::executor

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stave::executor;
  if (size == 0) return 0;
  static const std::vector<PayloadColumn> columns = FuzzColumns();
  static const std::unique_ptr<RecordDecoder> json = MakeRecordDecoder("json", columns, {});
  static const std::unique_ptr<RecordDecoder> csv = MakeRecordDecoder("csv", columns, {});
  RecordDecoder* decoder = data[0] % 4 == 3 ? csv.get() : json.get();
  std::string_view payload(reinterpret_cast<const char*>(data) + 1, size - 1);

  Chunk chunk = EmptyChunk(columns);
  // A row already in the chunk: a refused record must leave it and its neighbours alone.
  std::string error;
  bool first = json->Decode(R"({"id": 1, "name": "a"})", &chunk, &error);
  Check(first, "a plain record was refused");
  chunk.columns[0].AppendInt(7);
  chunk.ops.push_back(RowOp::kInsert);

  error.clear();
  bool ok = decoder->Decode(payload, &chunk, &error);
  Check(chunk.columns[0].size() == 1, "the metadata column was touched");
  for (const PayloadColumn& column : columns) {
    Check(chunk.columns[column.index].size() == (ok ? 2u : 1u), "a payload column's size");
    if (ok) chunk.columns[column.index].GetValue(1);
  }
  if (!ok) {
    Check(!error.empty(), "a refusal without an error");
    Check(error.size() <= 256, "an error longer than 256 bytes");
    Check(error.find_first_of("\r\n") == std::string::npos, "an error of several lines");
  }
  return 0;
}
