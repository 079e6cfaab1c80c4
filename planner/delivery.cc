#include "planner/delivery.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "common/sql_error.h"
#include "planner/connector_spec.h"

namespace stave::planner {

std::string_view DeliveryName(Delivery delivery) {
  switch (delivery) {
    case Delivery::kAtMostOnce:
      return "at_most_once";
    case Delivery::kAtLeastOnce:
      return "at_least_once";
    case Delivery::kExactlyOnce:
      return "exactly_once";
  }
  return "unknown";
}

std::optional<Delivery> ParseDelivery(std::string_view text) {
  for (Delivery delivery :
       {Delivery::kAtMostOnce, Delivery::kAtLeastOnce, Delivery::kExactlyOnce}) {
    if (text == DeliveryName(delivery)) return delivery;
  }
  return std::nullopt;
}

Delivery DeliveryChain::guarantee() const { return weakest().guarantee; }

const Stave& DeliveryChain::weakest() const {
  return *std::min_element(staves.begin(), staves.end(), [](const Stave& a, const Stave& b) {
    return a.guarantee < b.guarantee;
  });
}

std::vector<std::string> DeliveryChain::Describe(Delivery requested) const {
  std::vector<std::string> lines;
  for (const Stave& stave : staves) {
    lines.push_back(
        fmt::format("{}: {} ({})", stave.name, DeliveryName(stave.guarantee), stave.reason));
  }
  Delivery result = guarantee();
  if (result >= requested) {
    lines.push_back(fmt::format("result: {}; requested {}: kept", DeliveryName(result),
                                DeliveryName(requested)));
  } else {
    lines.push_back(fmt::format("result: {}; requested {}: refused, the weakest stave is {}",
                                DeliveryName(result), DeliveryName(requested), weakest().name));
  }
  return lines;
}

DeliveryChain AnalyzeDelivery(const std::vector<CatalogObjectPtr>& inputs, const Catalog& catalog,
                              const ConnectorRegistry& connectors, Stave sink) {
  DeliveryChain chain;
  std::set<uint32_t> seen;
  // Depth first through the views down to the streams and tables they read, in the order
  // the query names them.
  std::function<void(const CatalogObjectPtr&)> visit = [&](const CatalogObjectPtr& object) {
    if (!object || !seen.insert(object->id).second) return;
    switch (object->type) {
      case ObjectType::kMaterializedView:
      case ObjectType::kSink:
        for (uint32_t input : object->depends_on) visit(catalog.FindById(input));
        break;
      case ObjectType::kTable:
        chain.staves.push_back(
            {fmt::format("source \"{}\" (table)", object->name), Delivery::kExactlyOnce,
             "its log is kept until every reader has checkpointed past it, so a restart "
             "replays from the checkpointed position"});
        break;
      case ObjectType::kStream: {
        const ConnectorSpec* spec = connectors.Find(object->connector);
        bool replayable = spec && spec->replayable_source;
        std::string reason = spec && !spec->source_reason.empty() ? spec->source_reason
                             : replayable ? "it rewinds to its checkpointed position"
                                          : "it cannot rewind to a checkpointed position";
        chain.staves.push_back({fmt::format("source \"{}\" ({})", object->name, object->connector),
                                replayable ? Delivery::kExactlyOnce : Delivery::kAtMostOnce,
                                std::move(reason)});
        break;
      }
      case ObjectType::kSystemTable:
        break;
    }
  };
  for (const CatalogObjectPtr& input : inputs) visit(input);
  chain.staves.push_back({"engine", Delivery::kExactlyOnce,
                          "state, source positions and sink records commit together in one "
                          "synced write per checkpoint"});
  chain.staves.push_back(std::move(sink));
  return chain;
}

void CheckDelivery(const DeliveryChain& chain, Delivery requested, std::string_view sink_name) {
  if (chain.guarantee() >= requested) return;
  const Stave& weakest = chain.weakest();
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("sink \"{}\" cannot deliver {}: its weakest stave, {}, is {}: {}",
                             sink_name, DeliveryName(requested), weakest.name,
                             DeliveryName(weakest.guarantee), weakest.reason))
      .WithHint(fmt::format(
          "Ask for WITH (delivery = '{}') explicitly to accept that, or change the weakest "
          "stave. EXPLAIN CREATE SINK ... shows the whole chain.",
          DeliveryName(weakest.guarantee)));
}

}  // namespace stave::planner
