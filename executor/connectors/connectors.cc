#include "executor/connectors/connectors.h"

#include "common/sql_error.h"
#include "executor/connectors/blackhole/blackhole_sink.h"
#include "executor/connectors/datagen/datagen_source.h"
#include "executor/connectors/postgres/postgres_sink.h"
#include "executor/connectors/socket/socket_source.h"

namespace stave::executor {

void RegisterBuiltinConnectors(planner::ConnectorRegistry* registry) {
  registry->Register(DatagenConnectorSpec());
  registry->Register(PostgresConnectorSpec());
  registry->Register(BlackholeConnectorSpec());
  registry->Register(SocketConnectorSpec());
}

std::unique_ptr<SourceReader> OpenSourceReader(const planner::CatalogObject& stream) {
  if (stream.connector == "datagen") {
    return std::make_unique<DatagenSource>(DatagenOptions::Parse(stream.options, stream.columns));
  }
  if (stream.connector == "socket") {
    return std::make_unique<SocketSource>(SocketOptions::Parse(stream.options, stream.columns));
  }
  throw SqlError(sqlstate::kFeatureNotSupported,
                 "the connector '" + stream.connector + "' cannot be read yet");
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
  } else if (sink.connector == "blackhole") {
    opened.target = std::make_unique<BlackholeSinkTarget>();
  } else {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "the connector '" + sink.connector + "' cannot be written yet");
  }
  return opened;
}

}  // namespace stave::executor
