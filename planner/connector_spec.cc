#include "planner/connector_spec.h"

#include <fmt/format.h>

#include "common/sql_error.h"

namespace stave::planner {

void RefuseFormat(std::string_view connector, const std::string& format) {
  if (format.empty()) return;
  throw SqlError(
      sqlstate::kInvalidParameterValue,
      fmt::format("the {} connector takes no FORMAT (got FORMAT {})", connector, format));
}

void ConnectorRegistry::Register(ConnectorSpec spec) {
  std::string name = spec.name;
  specs_[name] = std::move(spec);
}

const ConnectorSpec* ConnectorRegistry::Find(std::string_view name) const {
  auto it = specs_.find(name);
  return it == specs_.end() ? nullptr : &it->second;
}

std::vector<std::string> ConnectorRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, spec] : specs_) names.push_back(name);
  return names;
}

}  // namespace stave::planner
