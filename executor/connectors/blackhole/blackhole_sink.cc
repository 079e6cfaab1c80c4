#include "executor/connectors/blackhole/blackhole_sink.h"

#include "common/sql_error.h"

namespace stave::executor {

planner::ConnectorSpec BlackholeConnectorSpec() {
  planner::ConnectorSpec spec;
  spec.name = "blackhole";
  spec.validate_sink = [](const std::map<std::string, std::string>& options,
                          const planner::SinkInput&, const std::string& format) {
    planner::RefuseFormat("blackhole", format);
    if (!options.empty()) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "unknown option '" + options.begin()->first + "' for the blackhole sink")
          .WithHint("The blackhole sink takes no options besides connector and delivery.");
    }
    planner::SinkCapability capability;
    capability.guarantee = planner::Delivery::kExactlyOnce;
    capability.reason = "it discards every row, so no row can arrive twice";
    capability.description = "blackhole";
    return capability;
  };
  return spec;
}

}  // namespace stave::executor
