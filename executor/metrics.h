#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace stave::executor {

/// Counters and gauges by name and labels, rendered in Prometheus' text format. Getting a
/// metric takes a lock once; updating it is one relaxed atomic operation, so hot paths
/// keep the pointer. Thread-safe.
class Metrics {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  /// A monotonically increasing counter; the pointer stays valid for the registry's life.
  std::atomic<uint64_t>* Counter(const std::string& name, const Labels& labels = {},
                                 const std::string& help = "");
  /// A value that goes up and down.
  std::atomic<int64_t>* Gauge(const std::string& name, const Labels& labels = {},
                              const std::string& help = "");

  /// The Prometheus text exposition of every metric.
  std::string RenderPrometheus() const;

 private:
  struct Family {
    std::string help;
    bool is_counter = true;
    std::map<std::string, std::unique_ptr<std::atomic<uint64_t>>> counters;  // by rendered labels
    std::map<std::string, std::unique_ptr<std::atomic<int64_t>>> gauges;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Family> families_;
};

}  // namespace stave::executor
