#include "executor/connectors/connectors.h"

#include "common/sql_error.h"
#include "executor/connectors/blackhole/blackhole_sink.h"
#include "executor/connectors/datagen/datagen_source.h"
#include "executor/connectors/kafka/kafka_sink.h"
#include "executor/connectors/kafka/kafka_source.h"
#include "executor/connectors/nexmark/nexmark_source.h"
#include "executor/connectors/postgres/postgres_sink.h"
#include "executor/connectors/socket/socket_source.h"
#include "executor/connectors/watermark_reader.h"
#include "storage/key_codec.h"

namespace stave::executor {

void RegisterBuiltinConnectors(planner::ConnectorRegistry* registry) {
  registry->Register(DatagenConnectorSpec());
  registry->Register(NexmarkConnectorSpec());
  registry->Register(PostgresConnectorSpec());
  registry->Register(BlackholeConnectorSpec());
  registry->Register(SocketConnectorSpec());
  registry->Register(KafkaConnectorSpec());
}

namespace {

std::unique_ptr<SourceReader> OpenConnectorReader(const planner::CatalogObject& stream,
                                                  const std::vector<bool>& read_columns) {
  if (stream.connector == "datagen") {
    return std::make_unique<DatagenSource>(DatagenOptions::Parse(stream.options, stream.columns));
  }
  if (stream.connector == "nexmark") {
    NexmarkOptions options = NexmarkOptions::Parse(stream.options, stream.columns);
    options.read_columns = read_columns;
    return std::make_unique<NexmarkSource>(std::move(options));
  }
  if (stream.connector == "socket") {
    return std::make_unique<SocketSource>(SocketOptions::Parse(stream.options, stream.columns));
  }
  if (stream.connector == "kafka") {
    return std::make_unique<KafkaSource>(
        stream.id, stream.name,
        KafkaSourceOptions::Parse(stream.options, stream.columns, stream.format));
  }
  throw SqlError(sqlstate::kFeatureNotSupported,
                 "the connector '" + stream.connector + "' cannot be read yet");
}

}  // namespace

std::unique_ptr<SourceReader> OpenSourceReader(const planner::CatalogObject& stream,
                                               const std::vector<bool>& read_columns) {
  std::unique_ptr<SourceReader> reader = OpenConnectorReader(stream, read_columns);
  if (!stream.watermark) return reader;
  return std::make_unique<WatermarkReader>(std::move(reader), *stream.watermark_column,
                                           stream.watermark, stream.watermark_idle_timeout);
}

SourcePositionSummary DescribeSourcePosition(const planner::CatalogObject& stream,
                                             std::string_view position) {
  SourcePositionSummary summary;
  if (stream.watermark) {
    std::optional<WatermarkReader::DecodedPosition> decoded =
        WatermarkReader::DecodePosition(position);
    if (!decoded) return summary;
    summary.watermark = decoded->watermark;
    summary.late_rows = decoded->late_rows;
    position = decoded->inner;
  }
  if (stream.connector == "kafka") {
    if (std::optional<KafkaPositionSummary> kafka = SummarizeKafkaPosition(position)) {
      summary.position = kafka->offsets;
      summary.bad_records = kafka->bad_records;
      summary.lost_records = kafka->lost_records;
    }
  } else if (stream.connector == "datagen" && position.size() == 8) {
    summary.position = "row " + std::to_string(storage::ReadBigEndian64(position));
  } else if (stream.connector == "nexmark" && position.size() == 8) {
    summary.position = "event " + std::to_string(storage::ReadBigEndian64(position));
  }
  return summary;
}

std::vector<std::string> SplitOptionList(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string part = text.substr(start, comma - start);
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    parts.push_back(part);
    start = comma + 1;
  }
  return parts;
}

std::map<std::string, std::string> SinkConnectorOptions(const planner::CatalogObject& sink) {
  std::map<std::string, std::string> options = sink.options;
  options.erase("delivery");
  return options;
}

OpenedSink OpenSinkTarget(const planner::CatalogObject& sink, const planner::SinkInput& input) {
  OpenedSink opened;
  if (sink.connector == "postgres") {
    PostgresSinkOptions options = PostgresSinkOptions::Parse(SinkConnectorOptions(sink), input);
    if (options.mode == PostgresSinkOptions::Mode::kUpsert)
      opened.key_columns = options.primary_key;
    opened.target = std::make_unique<PostgresSinkTarget>(sink.name, std::move(options));
  } else if (sink.connector == "kafka") {
    KafkaSinkOptions options =
        KafkaSinkOptions::Parse(SinkConnectorOptions(sink), input, sink.format, sink.name);
    auto delivery = sink.options.find("delivery");
    options.exactly_once =
        delivery == sink.options.end() ||
        planner::ParseDelivery(delivery->second) == planner::Delivery::kExactlyOnce;
    // Only an upsert stream is compacted per key within an epoch; appends keep every row.
    if (options.upsert) opened.key_columns = options.key;
    opened.target = std::make_unique<KafkaSinkTarget>(sink.name, std::move(options));
  } else if (sink.connector == "blackhole") {
    opened.target = std::make_unique<BlackholeSinkTarget>();
  } else {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "the connector '" + sink.connector + "' cannot be written yet");
  }
  return opened;
}

}  // namespace stave::executor
