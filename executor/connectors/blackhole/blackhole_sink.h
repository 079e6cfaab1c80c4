#pragma once

#include "executor/connectors/sink_target.h"
#include "planner/connector_spec.h"

namespace stave::executor {

/// A sink target that discards every row: what benchmarks end their pipelines in, so they
/// measure the engine and not a target. Its epochs are not written ahead into checkpoints.
class BlackholeSinkTarget : public SinkTarget {
 public:
  bool discards() const override { return true; }
  void Connect() override {}
  void Disconnect() noexcept override {}
  uint64_t Recover(const std::optional<std::string>& keep) override {
    (void)keep;
    return 0;
  }
  void Deliver(uint64_t epoch, uint64_t count, const SinkChangeBatches& changes) override {
    (void)epoch, (void)count;
    changes([](const Chunk&) {});
  }
  void Drop() override {}
};

/// The planner's view of the blackhole sink connector.
planner::ConnectorSpec BlackholeConnectorSpec();

}  // namespace stave::executor
