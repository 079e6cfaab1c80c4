#include "executor/connectors/connectors.h"

#include "common/sql_error.h"
#include "executor/connectors/datagen/datagen_source.h"

namespace stave::executor {

void RegisterBuiltinConnectors(planner::ConnectorRegistry* registry) {
  registry->Register(DatagenConnectorSpec());
}

std::unique_ptr<SourceReader> OpenSourceReader(const planner::CatalogObject& stream) {
  if (stream.connector == "datagen") {
    return std::make_unique<DatagenSource>(DatagenOptions::Parse(stream.options, stream.columns));
  }
  throw SqlError(sqlstate::kFeatureNotSupported,
                 "the connector '" + stream.connector + "' cannot be read yet");
}

}  // namespace stave::executor
