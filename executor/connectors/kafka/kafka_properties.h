#pragma once

#include <map>
#include <memory>
#include <string>

#include <librdkafka/rdkafkacpp.h>

namespace stave::executor {

/// The librdkafka settings of a Kafka stream or sink: every `properties.<key>` option, with
/// `properties.bootstrap.server` (the name RisingWave and Flink use) as `bootstrap.servers`.
struct KafkaProperties {
  std::map<std::string, std::string> settings;  ///< librdkafka key → value.

  /// Takes the `properties.*` options out of `options`. Throws SqlError 22023 if there is no
  /// bootstrap server, if librdkafka refuses a setting, or if a setting is one Stave must
  /// control itself (`reserved`, e.g. enable.auto.commit for a source).
  static KafkaProperties Take(std::map<std::string, std::string>* options,
                              std::string_view connector_use,
                              const std::map<std::string, std::string>& reserved);

  const std::string& bootstrap() const { return settings.at("bootstrap.servers"); }

  /// A librdkafka configuration with these settings and then `fixed` (Stave's own).
  /// Throws SqlError 22023 if librdkafka refuses one.
  std::unique_ptr<RdKafka::Conf> MakeConf(const std::map<std::string, std::string>& fixed) const;
};

/// Whether a librdkafka setting holds a secret (never shown, never logged).
bool IsSecretKafkaSetting(std::string_view key);

}  // namespace stave::executor
