#include "planner/session_values.h"

#include <fmt/format.h>

#include "common/sql_error.h"

namespace stave::planner {
namespace {

thread_local SessionValues* current_values = nullptr;

/// Outside a client's session: the one role, and no settings.
class NoSession : public SessionValues {
 public:
  std::string UserName() const override { return "stave"; }
  int32_t BackendPid() const override { return 0; }
  std::optional<std::string> FindSetting(const std::string&) const override { return std::nullopt; }
  std::vector<Setting> Settings() const override { return {}; }
  std::string SetConfig(const std::string& name, const std::optional<std::string>&, bool,
                        int position) override {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("set_config(\"{}\") needs a client session", name), position);
  }
};

}  // namespace

ScopedSessionValues::ScopedSessionValues(SessionValues* values) : previous_(current_values) {
  current_values = values;
}

ScopedSessionValues::~ScopedSessionValues() { current_values = previous_; }

SessionValues& CurrentSessionValues() {
  static NoSession no_session;
  return current_values ? *current_values : no_session;
}

}  // namespace stave::planner
