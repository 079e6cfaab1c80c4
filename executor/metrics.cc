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
