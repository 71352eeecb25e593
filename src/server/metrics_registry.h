// MetricsRegistry: counters and histograms the control plane updates as it works,
// and the Prometheus text exposition format (version 0.0.4) they are served in:
// `# HELP` and `# TYPE` lines, label values escaped (\\, \", \n), histograms as
// cumulative `_bucket{le=...}` series with `+Inf`, `_sum` and `_count`.
// Gauges are not stored here: the caller computes them at scrape time from the
// cluster state and passes them to Render.
//
// Names follow Prometheus conventions (tessera_ prefix, base units, _total for
// counters); families are registered once, by name.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tessera {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

struct GaugeSample {
  MetricLabels labels;
  double value = 0;
};

struct GaugeFamily {
  std::string name;
  std::string help;
  std::vector<GaugeSample> samples;
};

class MetricsRegistry {
 public:
  void AddCounter(const std::string& name, const std::string& help);
  void AddHistogram(const std::string& name, const std::string& help, std::vector<double> buckets);

  // REQUIRES: the family was added. Labels in the same order every call.
  void Increment(const std::string& name, const MetricLabels& labels, double by = 1);
  void Observe(const std::string& name, const MetricLabels& labels, double value);

  // The whole exposition: the counters and histograms, then `gauges`, each family
  // sorted by name and its series by labels, so that output is stable.
  std::string Render(const std::vector<GaugeFamily>& gauges) const;

 private:
  struct Histogram {
    std::vector<uint64_t> counts;  // per bucket, not cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  struct Family {
    std::string help;
    bool histogram = false;
    std::vector<double> buckets;
    std::map<MetricLabels, double> counters;
    std::map<MetricLabels, Histogram> histograms;
  };

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

// The content type of the exposition format.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

// A label value or HELP text escaped for the exposition format.
std::string EscapeLabelValue(const std::string& value);
std::string EscapeHelp(const std::string& help);
// A sample value: integers without a decimal point, "+Inf", "NaN".
std::string FormatMetricValue(double value);

}  // namespace tessera
