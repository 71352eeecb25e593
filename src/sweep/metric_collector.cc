#include "sweep/metric_collector.h"

namespace tessera::sweep {

MetricCollector::MetricCollector(size_t max_points_per_metric) : max_points_(max_points_per_metric) {}

bool MetricCollector::AddLine(std::string_view line) {
  std::optional<MetricObservation> observation = ParseMetricLine(line);
  if (!observation) return false;
  Add(*observation);
  return true;
}

void MetricCollector::Add(const MetricObservation& observation) {
  for (const auto& [name, value] : observation.values) {
    auto it = observations_.try_emplace(name, MetricSeries(max_points_)).first;
    it->second.Add(observation.step, value);
  }
  ++lines_taken_;
}

void MetricCollector::Feed(std::string_view chunk) {
  while (!chunk.empty()) {
    size_t nl = chunk.find('\n');
    std::string_view piece = chunk.substr(0, nl);
    if (!tail_dropped_) {
      if (tail_.size() + piece.size() > kMaxMetricLineBytes) {
        tail_.clear();
        tail_dropped_ = true;
      } else {
        tail_.append(piece);
      }
    }
    if (nl == std::string_view::npos) return;
    if (!tail_dropped_) AddLine(tail_);
    tail_.clear();
    tail_dropped_ = false;
    chunk.remove_prefix(nl + 1);
  }
}

void MetricCollector::Finish() {
  if (!tail_dropped_ && !tail_.empty()) AddLine(tail_);
  tail_.clear();
  tail_dropped_ = false;
}

}  // namespace tessera::sweep
