#include "executor/metrics.h"

#include <gtest/gtest.h>

namespace stave::executor {
namespace {

TEST(MetricsTest, HistogramRendersCumulativeBuckets) {
  Metrics metrics;
  Histogram* histogram = metrics.GetHistogram("stave_test_seconds", {0.125, 1}, "A test.");
  EXPECT_EQ(metrics.GetHistogram("stave_test_seconds", {5}), histogram);
  histogram->Observe(0.0625);
  histogram->Observe(0.125);  // On a bound: counted in it (le = less or equal).
  histogram->Observe(0.5);
  histogram->Observe(7);
  EXPECT_EQ(metrics.RenderPrometheus(),
            "# HELP stave_test_seconds A test.\n"
            "# TYPE stave_test_seconds histogram\n"
            "stave_test_seconds_bucket{le=\"0.125\"} 2\n"
            "stave_test_seconds_bucket{le=\"1\"} 3\n"
            "stave_test_seconds_bucket{le=\"+Inf\"} 4\n"
            "stave_test_seconds_sum 7.6875\n"
            "stave_test_seconds_count 4\n");
}

TEST(MetricsTest, CountersAndGaugesWithLabels) {
  Metrics metrics;
  metrics.Counter("stave_rows_total", {{"view", "a\"b"}}, "Rows.")->fetch_add(3);
  metrics.Gauge("stave_epoch")->store(-2);
  EXPECT_EQ(metrics.RenderPrometheus(),
            "# TYPE stave_epoch gauge\n"
            "stave_epoch -2\n"
            "# HELP stave_rows_total Rows.\n"
            "# TYPE stave_rows_total counter\n"
            "stave_rows_total{view=\"a\\\"b\"} 3\n");
}

}  // namespace
}  // namespace stave::executor
