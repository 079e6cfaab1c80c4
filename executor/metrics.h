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

/// A distribution of observed values over fixed buckets (Prometheus' histogram): each
/// bucket counts the observations up to its bound. Observing is lock-free. Thread-safe.
class Histogram {
 public:
  /// `bounds`: the buckets' upper bounds, ascending; +Inf is implied.
  explicit Histogram(std::vector<double> bounds);

  void Observe(double value);

  /// The text exposition's lines of this histogram (`name_bucket`, `name_sum`,
  /// `name_count`), without HELP and TYPE.
  std::string Render(const std::string& name) const;

 private:
  const std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // Per bound, not cumulative; +Inf last.
  std::atomic<double> sum_{0};
};

/// Counters, gauges and histograms by name and labels, rendered in Prometheus' text format. Getting
/// a metric takes a lock once; updating it is one relaxed atomic operation, so hot paths keep the
/// pointer. Thread-safe.
class Metrics {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  /// A monotonically increasing counter; the pointer stays valid for the registry's life.
  std::atomic<uint64_t>* Counter(const std::string& name, const Labels& labels = {},
                                 const std::string& help = "");
  /// A value that goes up and down.
  std::atomic<int64_t>* Gauge(const std::string& name, const Labels& labels = {},
                              const std::string& help = "");

  /// A histogram without labels over `bounds`; the pointer stays valid for the registry's
  /// life. The first call for a name decides its bounds.
  Histogram* GetHistogram(const std::string& name, std::vector<double> bounds,
                          const std::string& help = "");

  /// The Prometheus text exposition of every metric.
  std::string RenderPrometheus() const;

 private:
  struct Family {
    std::string help;
    bool is_counter = true;
    std::map<std::string, std::unique_ptr<std::atomic<uint64_t>>> counters;  // by rendered labels
    std::map<std::string, std::unique_ptr<std::atomic<int64_t>>> gauges;
    std::unique_ptr<Histogram> histogram;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Family> families_;
};

}  // namespace stave::executor
