#include "executor/connectors/format/bytes_decoder.h"

#include <fmt/format.h>

#include "common/sql_error.h"

namespace stave::executor {
namespace {

class BytesDecoder : public RecordDecoder {
 public:
  explicit BytesDecoder(size_t index) : index_(index) {}

  bool Decode(std::string_view payload, Chunk* chunk, std::string* /*error*/) override {
    chunk->columns[index_].AppendString(std::string(payload));
    return true;
  }

 private:
  size_t index_;
};

}  // namespace

std::unique_ptr<RecordDecoder> MakeBytesDecoder(std::vector<PayloadColumn> columns,
                                                const std::map<std::string, std::string>& options) {
  if (!options.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("unknown format option '{}': FORMAT BYTES takes no options",
                               options.begin()->first));
  }
  if (columns.size() != 1 || columns[0].type.id != TypeId::kBytea) {
    std::string got = columns.size() == 1 ? fmt::format("column \"{}\" is of type {}",
                                                        columns[0].name, columns[0].type.Name())
                                          : fmt::format("it has {}", columns.size());
    throw SqlError("42P16",
                   fmt::format("FORMAT BYTES needs exactly one column besides the metadata "
                               "columns, of type bytea ({})",
                               got));
  }
  return std::make_unique<BytesDecoder>(columns[0].index);
}

}  // namespace stave::executor
