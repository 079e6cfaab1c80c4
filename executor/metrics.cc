#include "executor/metrics.h"

#include <fmt/format.h>

namespace stave::executor {
namespace {

std::string RenderLabels(const Metrics::Labels& labels) {
  if (labels.empty()) return "";
  std::string text = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) text += ",";
    text += labels[i].first + "=\"";
    for (char c : labels[i].second) {
      if (c == '\\' || c == '"') text += '\\';
      if (c == '\n') {
        text += "\\n";
        continue;
      }
      text += c;
    }
    text += "\"";
  }
  return text + "}";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      buckets_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::Observe(double value) {
  size_t bucket = 0;
  while (bucket < bounds_.size() && value > bounds_[bucket]) ++bucket;
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  double sum = sum_.load(std::memory_order_relaxed);
  while (!sum_.compare_exchange_weak(sum, sum + value, std::memory_order_relaxed)) {
  }
}

std::string Histogram::Render(const std::string& name) const {
  std::string text;
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    std::string bound = i < bounds_.size() ? fmt::format("{}", bounds_[i]) : "+Inf";
    text += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bound, cumulative);
  }
  text += fmt::format("{}_sum {}\n", name, sum_.load(std::memory_order_relaxed));
  text += fmt::format("{}_count {}\n", name, cumulative);
  return text;
}

Histogram* Metrics::GetHistogram(const std::string& name, std::vector<double> bounds,
                                 const std::string& help) {
  std::lock_guard lock(mutex_);
  Family& family = families_[name];
  if (family.help.empty()) family.help = help;
  family.is_counter = false;
  if (!family.histogram) family.histogram = std::make_unique<Histogram>(std::move(bounds));
  return family.histogram.get();
}

std::atomic<uint64_t>* Metrics::Counter(const std::string& name, const Labels& labels,
                                        const std::string& help) {
  std::lock_guard lock(mutex_);
  Family& family = families_[name];
  if (family.help.empty()) family.help = help;
  family.is_counter = true;
  auto& slot = family.counters[RenderLabels(labels)];
  if (!slot) slot = std::make_unique<std::atomic<uint64_t>>(0);
  return slot.get();
}

std::atomic<int64_t>* Metrics::Gauge(const std::string& name, const Labels& labels,
                                     const std::string& help) {
  std::lock_guard lock(mutex_);
  Family& family = families_[name];
  if (family.help.empty()) family.help = help;
  family.is_counter = false;
  auto& slot = family.gauges[RenderLabels(labels)];
  if (!slot) slot = std::make_unique<std::atomic<int64_t>>(0);
  return slot.get();
}

std::string Metrics::RenderPrometheus() const {
  std::lock_guard lock(mutex_);
  std::string text;
  for (const auto& [name, family] : families_) {
    if (!family.help.empty()) text += fmt::format("# HELP {} {}\n", name, family.help);
    if (family.histogram) {
      text += fmt::format("# TYPE {} histogram\n", name);
      text += family.histogram->Render(name);
      continue;
    }
    text += fmt::format("# TYPE {} {}\n", name, family.is_counter ? "counter" : "gauge");
    for (const auto& [labels, value] : family.counters) {
      text += fmt::format("{}{} {}\n", name, labels, value->load(std::memory_order_relaxed));
    }
    for (const auto& [labels, value] : family.gauges) {
      text += fmt::format("{}{} {}\n", name, labels, value->load(std::memory_order_relaxed));
    }
  }
  return text;
}

}  // namespace stave::executor
