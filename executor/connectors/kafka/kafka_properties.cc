#include "executor/connectors/kafka/kafka_properties.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/redact.h"
#include "common/sql_error.h"

namespace stave::executor {
namespace {

constexpr std::string_view kPrefix = "properties.";

// librdkafka's own log lines go to Stave's log, at matching levels, instead of stderr.
class LogToSpdlog : public RdKafka::EventCb {
 public:
  void event_cb(RdKafka::Event& event) override {
    if (event.type() == RdKafka::Event::EVENT_LOG) {
      int severity = event.severity();
      auto level = severity <= RdKafka::Event::EVENT_SEVERITY_ERROR    ? spdlog::level::warn
                   : severity <= RdKafka::Event::EVENT_SEVERITY_NOTICE ? spdlog::level::info
                                                                       : spdlog::level::debug;
      spdlog::log(level, "librdkafka: {} {}", event.fac(), event.str());
    } else if (event.type() == RdKafka::Event::EVENT_ERROR) {
      // Each client also reports its errors where they matter (a poll, a commit); this is
      // the detail, at debug level so that an outage does not flood the log.
      spdlog::debug("librdkafka: {}", event.str());
    }
  }
};

void Set(RdKafka::Conf* conf, const std::string& key, const std::string& value) {
  std::string error;
  if (conf->set(key, value, error) != RdKafka::Conf::CONF_OK) {
    std::string shown = IsSecretKafkaSetting(key) ? "(hidden)" : "'" + value + "'";
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("Kafka option 'properties.{}' = {}: {}", key, shown, error));
  }
}

}  // namespace

bool IsSecretKafkaSetting(std::string_view key) { return IsSecretOptionKey(key); }

KafkaProperties KafkaProperties::Take(std::map<std::string, std::string>* options,
                                      std::string_view connector_use,
                                      const std::map<std::string, std::string>& reserved) {
  KafkaProperties properties;
  for (auto it = options->begin(); it != options->end();) {
    if (!it->first.starts_with(kPrefix)) {
      ++it;
      continue;
    }
    std::string key = it->first.substr(kPrefix.size());
    if (key == "bootstrap.server") key = "bootstrap.servers";
    if (auto fixed = reserved.find(key); fixed != reserved.end()) {
      throw SqlError(
          sqlstate::kInvalidParameterValue,
          fmt::format("Kafka option 'properties.{}' cannot be set for a {}", key, connector_use))
          .WithHint(fixed->second);
    }
    properties.settings[key] = it->second;
    it = options->erase(it);
  }
  auto bootstrap = properties.settings.find("bootstrap.servers");
  if (bootstrap == properties.settings.end() || bootstrap->second.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("a Kafka {} needs 'properties.bootstrap.server'", connector_use))
        .WithHint(
            "WITH (connector = 'kafka', topic = '...', "
            "properties.bootstrap.server = 'host:9092')");
  }
  // librdkafka checks names and values now, so a typo fails the CREATE, not the job.
  properties.MakeConf({});
  return properties;
}

std::unique_ptr<RdKafka::Conf> KafkaProperties::MakeConf(
    const std::map<std::string, std::string>& fixed) const {
  static LogToSpdlog log_to_spdlog;
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string error;
  conf->set("event_cb", static_cast<RdKafka::EventCb*>(&log_to_spdlog), error);
  for (const auto& [key, value] : settings) Set(conf.get(), key, value);
  for (const auto& [key, value] : fixed) Set(conf.get(), key, value);
  return conf;
}

}  // namespace stave::executor
