#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "planner/catalog.h"
#include "planner/delivery.h"

namespace stave::planner {

/// What a sink's input looks like to its connector.
struct SinkInput {
  std::vector<Column> columns;  ///< The rows the sink receives.
  bool append_only = false;     ///< Whether the input never retracts a row.
};

/// What a sink connector, configured by its options, gives.
struct SinkCapability {
  Delivery guarantee = Delivery::kExactlyOnce;
  std::string reason;       ///< Why, in one sentence (a Stave's reason).
  std::string description;  ///< E.g. "postgres, upsert, commit=two_phase"; no secrets.
};

/// What the planner knows of a connector: its name, the guarantees it declares, and how to
/// check a stream's or a sink's options. The executor's connectors fill these in at start (through
/// the server), so the planner and its delivery analysis never include connector code.
struct ConnectorSpec {
  std::string name;
  /// The source can be rewound to a checkpointed position (datagen, Kafka, tables), so
  /// replay after a failure loses nothing. A socket cannot.
  bool replayable_source = false;
  /// Why the source can or cannot be replayed, in one sentence (for EXPLAIN SINK).
  std::string source_reason;
  /// Throws SqlError (22023 and the offending option) if the options, the columns or the
  /// FORMAT (lower-case, empty when absent) do not suit this connector. `options` excludes
  /// `connector` itself.
  using SourceCheck =
      std::function<void(const std::map<std::string, std::string>& options,
                         const std::vector<Column>& columns, const std::string& format)>;
  SourceCheck validate_source;
  /// Optional, called once at CREATE STREAM after validate_source (never at recovery, so a
  /// system that is away then cannot stop a restart): throws SqlError if the external
  /// system cannot be reached or lacks what the stream reads.
  SourceCheck probe_source;
  /// For a sink connector: throws SqlError (22023 and the offending option) if the options
  /// or the FORMAT do not suit this connector or the input, else says what the sink gives.
  /// `options` excludes `connector` and `delivery`.
  std::function<SinkCapability(const std::map<std::string, std::string>& options,
                               const SinkInput& input, const std::string& format)>
      validate_sink;
};

/// For a connector whose records have no format (datagen, socket): throws SqlError 22023 if
/// the stream says FORMAT anyway.
void RefuseFormat(std::string_view connector, const std::string& format);

/// The connectors this server offers. Filled in once at start, read-only afterwards.
class ConnectorRegistry {
 public:
  void Register(ConnectorSpec spec);
  /// nullptr if there is no connector by that name.
  const ConnectorSpec* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, ConnectorSpec, std::less<>> specs_;
};

}  // namespace stave::planner
