#pragma once

#include <memory>
#include <optional>

#include <vector>

#include "executor/connectors/sink_target.h"
#include "executor/connectors/source_reader.h"
#include "planner/catalog.h"
#include "planner/connector_spec.h"

namespace stave::executor {

/// Adds every built-in connector's spec to the planner's registry (done once at start).
void RegisterBuiltinConnectors(planner::ConnectorRegistry* registry);

/// Opens a reader of `stream` at its beginning. `read_columns`: per column, whether the
/// query reads it (empty: all are); a reader may leave the others empty. Throws SqlError if
/// the connector is unknown or its options are bad.
std::unique_ptr<SourceReader> OpenSourceReader(const planner::CatalogObject& stream,
                                               const std::vector<bool>& read_columns = {});

/// A sink's target, and the positions of the target's key among the sink's columns
/// (empty: every row is appended).
struct OpenedSink {
  std::unique_ptr<SinkTarget> target;
  std::vector<size_t> key_columns;
};

/// Opens (without connecting) the target of `sink`, which receives `input`. Throws
/// SqlError if the connector is unknown or its options are bad.
OpenedSink OpenSinkTarget(const planner::CatalogObject& sink, const planner::SinkInput& input);

/// A committed source position, told for stave_catalog.sources.
struct SourcePositionSummary {
  std::string position;  ///< E.g. "0:120,1:98" (Kafka partition:offset); empty if unknown.
  uint64_t bad_records = 0;
  /// Records the source could not read any more (Kafka: deleted by retention first).
  uint64_t lost_records = 0;
  /// Streams with a watermark: the watermark and the rows dropped below it.
  std::optional<int64_t> watermark;
  uint64_t late_rows = 0;
};
SourcePositionSummary DescribeSourcePosition(const planner::CatalogObject& stream,
                                             std::string_view position);

/// Splits an option's list "a, b ,c" at commas, trimming blanks (column lists of keys).
std::vector<std::string> SplitOptionList(const std::string& text);

/// The options a sink's connector sees: the WITH options without `delivery`.
std::map<std::string, std::string> SinkConnectorOptions(const planner::CatalogObject& sink);

}  // namespace stave::executor
