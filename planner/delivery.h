#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/catalog.h"

namespace stave::planner {

class ConnectorRegistry;

/// What a stave of a pipeline promises for each input row: it reaches the sink's target at
/// most once (it may be lost on a crash), at least once (it may arrive twice), or exactly
/// once. Ordered weakest first, so the chain's guarantee is the minimum.
enum class Delivery { kAtMostOnce = 0, kAtLeastOnce = 1, kExactlyOnce = 2 };

/// "at_most_once", "at_least_once", "exactly_once": the option's spelling.
std::string_view DeliveryName(Delivery delivery);
/// Parses the `delivery` option; nullopt for anything else.
std::optional<Delivery> ParseDelivery(std::string_view text);

/// One stave of a pipeline: a source, the engine, or the sink, with what it can keep.
struct Stave {
  std::string name;    ///< E.g. `source "lines" (socket)`, `engine`, `sink "s" (postgres)`.
  Delivery guarantee;  ///< The best this stave can give.
  std::string reason;  ///< Why, in one sentence.
};

/// The staves between a sink's sources and its target. Like the staves of a barrel, the
/// weakest one decides what the whole chain holds.
struct DeliveryChain {
  std::vector<Stave> staves;  ///< Sources first, then the engine, then the sink.
  /// The chain's guarantee: the weakest stave's.
  Delivery guarantee() const;
  /// The first stave with the chain's guarantee.
  const Stave& weakest() const;
  /// The chain as lines of text, one per stave, then the result against `requested`:
  /// what EXPLAIN SINK prints.
  std::vector<std::string> Describe(Delivery requested) const;
};

/// Builds the chain of a sink that reads `inputs`: every stream and table the inputs read,
/// through any number of views, each judged by its connector; then the engine, whose
/// checkpoints commit state, source positions and sink records together; then `sink`.
DeliveryChain AnalyzeDelivery(const std::vector<CatalogObjectPtr>& inputs, const Catalog& catalog,
                              const ConnectorRegistry& connectors, Stave sink);

/// Throws SqlError 0A000 if `chain` cannot keep `requested`, naming the weakest stave and
/// why, with a hint to ask for the weaker guarantee explicitly.
void CheckDelivery(const DeliveryChain& chain, Delivery requested, std::string_view sink_name);

}  // namespace stave::planner
