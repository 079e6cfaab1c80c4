// libFuzzer target: the decoders of what a checkpoint keeps in RocksDB besides operator
// state: a sink's record (generation, prepared transaction), source positions (a change
// log reader's, a Kafka source's offsets, a watermark reader's header around its inner
// reader's position, datagen's and nexmark's counters), catalog entries, and the change log
// records and rows that recovery reads back. The first input byte picks the decoder, the rest
// is the stored value, as a torn write or a bit flip on disk could leave it.
//
// Properties: no crash, no sanitizer report, no leak, no exception; malformed bytes are
// refused (nullopt or false), and what a decoder accepts encodes back to a value it decodes
// the same way.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "executor/change_record.h"
#include "executor/chunk.h"
#include "executor/connectors/connectors.h"
#include "executor/connectors/log_position.h"
#include "executor/connectors/view/view_watermark.h"
#include "executor/connectors/watermark_reader.h"
#include "executor/runtime/sink_writer.h"
#include "planner/catalog.h"
#include "storage/row_codec.h"

namespace stave::executor {
namespace {

void Check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "checkpoint decoder property broken: %s\n", what);
  std::abort();
}

void FuzzSinkRecord(std::string_view bytes) {
  std::optional<SinkRecord> record = SinkRecord::Decode(bytes);
  if (!record) return;
  std::optional<SinkRecord> again = SinkRecord::Decode(record->Encode());
  Check(again && *again == *record, "a sink record does not survive Encode and Decode");
}

void FuzzLogPosition(std::string_view bytes) {
  std::optional<LogPosition> position = LogPosition::Decode(bytes);
  if (!position) return;
  std::optional<LogPosition> again = LogPosition::Decode(position->Encode());
  Check(again && again->backfilled == position->backfilled &&
            again->next_sequence == position->next_sequence,
        "a log position does not survive Encode and Decode");
  // What a reader of a view's change log adds to its position.
  std::optional<ViewWatermark> watermark = ViewWatermark::Decode(bytes);
  if (!watermark) return;
  std::string encoded = watermark->Encode();
  std::optional<ViewWatermark> decoded = ViewWatermark::Decode(encoded);
  Check(decoded && decoded->value() == watermark->value() && decoded->Encode() == encoded,
        "a view watermark does not survive Encode and Decode");
}

void FuzzSourcePosition(std::string_view bytes) {
  WatermarkReader::DecodePosition(bytes);
  for (const char* connector : {"kafka", "datagen", "nexmark", "table"}) {
    for (bool watermark : {false, true}) {
      planner::CatalogObject stream;
      stream.type = planner::ObjectType::kStream;
      stream.name = "s";
      stream.connector = connector;
      stream.columns = {{"ts", TypeId::kTimestamp}};
      if (watermark) stream.watermark_column = 0;
      DescribeSourcePosition(stream, bytes);
    }
  }
}

void FuzzCatalogEntry(std::string_view bytes) {
  std::optional<planner::CatalogObject> object = planner::DeserializeCatalogEntry(bytes);
  if (!object) return;
  std::optional<planner::CatalogObject> again =
      planner::DeserializeCatalogEntry(planner::SerializeCatalogEntry(*object));
  Check(again && again->id == object->id && again->type == object->type &&
            again->name == object->name && again->definition == object->definition &&
            again->parallelism == object->parallelism,
        "a catalog entry does not survive Serialize and Deserialize");
}

const storage::RowTypes& RowTypesOfEveryKind() {
  static const storage::RowTypes types = {TypeId::kBoolean,
                                          TypeId::kInt16,
                                          TypeId::kInt32,
                                          TypeId::kInt64,
                                          TypeId::kFloat32,
                                          TypeId::kFloat64,
                                          TypeId::kVarchar,
                                          TypeId::kDate,
                                          TypeId::kTime,
                                          TypeId::kTimestamp,
                                          TypeId::kTimestampTz,
                                          TypeId::kInterval,
                                          DataType::Numeric(10, 2),
                                          TypeId::kNumeric,
                                          TypeId::kBytea,
                                          TypeId::kJsonb,
                                          DataType::ArrayOf(TypeId::kInt64)};
  return types;
}

void FuzzRows(std::string_view bytes) {
  const storage::RowTypes& types = RowTypesOfEveryKind();
  // A row of every type, and rows of a single column of each type.
  if (std::optional<std::vector<Value>> row = storage::DecodeRow(bytes, types)) {
    std::string encoded;
    storage::EncodeRow(*row, types, &encoded);
    std::optional<std::vector<Value>> again = storage::DecodeRow(encoded, types);
    Check(again && again->size() == row->size(), "a row does not survive EncodeRow and DecodeRow");
  }
  for (const DataType& type : types) storage::DecodeRow(bytes, {type});
  Chunk chunk = Chunk::WithTypes(types);
  std::optional<InstanceWatermark> watermark;
  DecodeChangeRecord(bytes, types, &chunk, &watermark);
  Chunk keyed = Chunk::WithTypes({TypeId::kInt64, TypeId::kVarchar});
  DecodeChangeRecord(bytes, {TypeId::kInt64, TypeId::kVarchar}, &keyed);
}

}  // namespace
}  // namespace stave::executor

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stave::executor;
  if (size == 0) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      FuzzSinkRecord(bytes);
      break;
    case 1:
      FuzzLogPosition(bytes);
      break;
    case 2:
      FuzzSourcePosition(bytes);
      break;
    case 3:
      FuzzCatalogEntry(bytes);
      break;
    default:
      FuzzRows(bytes);
      break;
  }
  return 0;
}
