#include "server/log_format.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "common/json_string.h"

namespace stave::server {
namespace {

// The %j flag: the log message as a JSON string.
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& message, const std::tm&,
              spdlog::memory_buf_t& destination) override {
    std::string escaped;
    AppendJsonString(std::string_view(message.payload.data(), message.payload.size()), &escaped);
    destination.append(escaped.data(), escaped.data() + escaped.size());
  }

  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

}  // namespace

void UseJsonLogFormat() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  // UTC times, so that lines from machines in different zones sort together.
  formatter->add_flag<JsonMessageFlag>('j').set_pattern(
      R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","thread":%t,"message":%j})");
  spdlog::set_formatter(std::move(formatter));
}

}  // namespace stave::server
