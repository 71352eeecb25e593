// Observations: what a trial reported of each metric, as (step, value) points.
//
// Assumptions and rules
// - Steps are the trial's own counter (the `step=` of its metric lines): the
//   resource ASHA allots and the x of the median rule. A report without a step
//   takes the previous point's step + 1 (the first is step 1).
// - A report at a step at or before the latest one means the trial went back
//   (restarted from a checkpoint): the points from that step on are dropped
//   and the new one appended, so points stay in strictly ascending step order.
// - A series keeps at most `max_points` points (the latest; 1,000 by default),
//   plus its minimum and maximum ever reported, so a long trial's storage is
//   bounded and min/max strategies stay exact. Rules that read older points
//   (a running average from step 1, an early ASHA rung) see only what is kept.
// - Values are finite (metric lines refuse the rest).
//
// JSON (what the agent stores in a trial's status), one object per metric:
//   {"loss": {"points": [[1, 0.9], [2, 0.7]], "min": [2, 0.7], "max": [1, 0.9], "reported": 2}}
// Encode -> decode -> encode gives the same document.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tessera::sweep {

inline constexpr size_t kDefaultMaxPointsPerMetric = 1000;

struct MetricPoint {
  int64_t step = 0;
  double value = 0;
  friend bool operator==(const MetricPoint&, const MetricPoint&) = default;
};

class MetricSeries {
 public:
  explicit MetricSeries(size_t max_points = kDefaultMaxPointsPerMetric);

  // Adds a report (see the rules above). REQUIRES: value is finite.
  void Add(std::optional<int64_t> step, double value);

  // Ascending by step; the latest max_points.
  const std::vector<MetricPoint>& points() const { return points_; }
  bool empty() const { return points_.empty(); }
  // The lowest and highest values ever reported (the first at that value).
  const std::optional<MetricPoint>& min() const { return min_; }
  const std::optional<MetricPoint>& max() const { return max_; }
  std::optional<MetricPoint> latest() const;
  // How many reports were added in all (kept or not).
  int64_t reported() const { return reported_; }

  // The first kept point at `step` or later (where the trial crossed `step`).
  std::optional<MetricPoint> FirstAtOrAfter(int64_t step) const;
  // The mean of the kept values at steps <= `step`; none without such a point.
  std::optional<double> AverageUpTo(int64_t step) const;

  // One metric's object of the JSON form above, and back.
  nlohmann::json ToJson() const;
  static Result<MetricSeries> FromJson(const nlohmann::json& document, std::string_view path, size_t max_points);

  friend bool operator==(const MetricSeries&, const MetricSeries&) = default;

 private:
  size_t max_points_;
  std::vector<MetricPoint> points_;
  std::optional<MetricPoint> min_;
  std::optional<MetricPoint> max_;
  int64_t reported_ = 0;
};

// By metric name; std::less<> so that a string_view finds a series.
using Observations = std::map<std::string, MetricSeries, std::less<>>;

nlohmann::json ObservationsToJson(const Observations& observations);

// The inverse of ObservationsToJson; errors name fields under `path`.
Result<Observations> ObservationsFromJson(const nlohmann::json& document, std::string_view path,
                                          size_t max_points = kDefaultMaxPointsPerMetric);

}  // namespace tessera::sweep
