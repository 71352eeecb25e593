#include "server/metrics_registry.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/check.h"

namespace tessera {
namespace {

// Backslash and line feed always; double quotes inside label values only.
std::string Escape(const std::string& text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quotes && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string LabelText(const MetricLabels& labels, const std::string& extra_name = {},
                      const std::string& extra_value = {}) {
  if (labels.empty() && extra_name.empty()) return {};
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    out += fmt::format("{}{}=\"{}\"", first ? "" : ",", k, EscapeLabelValue(v));
    first = false;
  }
  if (!extra_name.empty()) out += fmt::format("{}{}=\"{}\"", first ? "" : ",", extra_name, extra_value);
  return out + "}";
}

void Header(std::string& out, const std::string& name, const std::string& help, const char* type) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, EscapeHelp(help), name, type);
}

}  // namespace

std::string EscapeLabelValue(const std::string& value) { return Escape(value, /*quotes=*/true); }

std::string EscapeHelp(const std::string& help) { return Escape(help, /*quotes=*/false); }

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) return fmt::format("{}", static_cast<int64_t>(value));
  return fmt::format("{}", value);
}

void MetricsRegistry::AddCounter(const std::string& name, const std::string& help) {
  std::lock_guard lock(mu_);
  families_[name].help = help;
}

void MetricsRegistry::AddHistogram(const std::string& name, const std::string& help, std::vector<double> buckets) {
  std::lock_guard lock(mu_);
  Family& f = families_[name];
  f.help = help;
  f.histogram = true;
  std::sort(buckets.begin(), buckets.end());
  f.buckets = std::move(buckets);
}

void MetricsRegistry::Increment(const std::string& name, const MetricLabels& labels, double by) {
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  TESSERA_CHECK(it != families_.end() && !it->second.histogram, "counter {} is not registered", name);
  it->second.counters[labels] += by;
}

void MetricsRegistry::Observe(const std::string& name, const MetricLabels& labels, double value) {
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  TESSERA_CHECK(it != families_.end() && it->second.histogram, "histogram {} is not registered", name);
  Family& f = it->second;
  Histogram& h = f.histograms[labels];
  if (h.counts.empty()) h.counts.assign(f.buckets.size(), 0);
  const auto b = std::lower_bound(f.buckets.begin(), f.buckets.end(), value) - f.buckets.begin();
  if (static_cast<size_t>(b) < h.counts.size()) ++h.counts[b];
  ++h.count;
  h.sum += value;
}

std::string MetricsRegistry::Render(const std::vector<GaugeFamily>& gauges) const {
  std::string out;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, f] : families_) {
      if (!f.histogram) {
        Header(out, name, f.help, "counter");
        for (const auto& [labels, v] : f.counters) {
          out += fmt::format("{}{} {}\n", name, LabelText(labels), FormatMetricValue(v));
        }
        continue;
      }
      Header(out, name, f.help, "histogram");
      for (const auto& [labels, h] : f.histograms) {
        uint64_t cumulative = 0;
        for (size_t i = 0; i < f.buckets.size(); ++i) {
          cumulative += h.counts[i];
          out += fmt::format("{}_bucket{} {}\n", name, LabelText(labels, "le", FormatMetricValue(f.buckets[i])),
                             cumulative);
        }
        out += fmt::format("{}_bucket{} {}\n", name, LabelText(labels, "le", "+Inf"), h.count);
        out += fmt::format("{}_sum{} {}\n", name, LabelText(labels), FormatMetricValue(h.sum));
        out += fmt::format("{}_count{} {}\n", name, LabelText(labels), h.count);
      }
    }
  }
  std::vector<const GaugeFamily*> sorted;
  for (const GaugeFamily& g : gauges) sorted.push_back(&g);
  std::sort(sorted.begin(), sorted.end(), [](const GaugeFamily* a, const GaugeFamily* b) { return a->name < b->name; });
  for (const GaugeFamily* g : sorted) {
    Header(out, g->name, g->help, "gauge");
    std::vector<const GaugeSample*> samples;
    for (const GaugeSample& s : g->samples) samples.push_back(&s);
    std::sort(samples.begin(), samples.end(), [](const GaugeSample* a, const GaugeSample* b) { return a->labels < b->labels; });
    for (const GaugeSample* s : samples) {
      out += fmt::format("{}{} {}\n", g->name, LabelText(s->labels), FormatMetricValue(s->value));
    }
  }
  return out;
}

}  // namespace tessera
