#pragma once

#include <memory>

#include "executor/connectors/source_reader.h"
#include "planner/catalog.h"
#include "planner/connector_spec.h"

namespace stave::executor {

/// Adds every built-in connector's spec to the planner's registry (done once at start).
void RegisterBuiltinConnectors(planner::ConnectorRegistry* registry);

/// Opens a reader of `stream` at its beginning. Throws SqlError if the connector is
/// unknown or its options are bad.
std::unique_ptr<SourceReader> OpenSourceReader(const planner::CatalogObject& stream);

}  // namespace stave::executor
