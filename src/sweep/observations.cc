#include "sweep/observations.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "common/json_fields.h"

namespace tessera::sweep {

using nlohmann::json;

MetricSeries::MetricSeries(size_t max_points) : max_points_(std::max<size_t>(1, max_points)) {}

void MetricSeries::Add(std::optional<int64_t> step, double value) {
  TESSERA_CHECK(std::isfinite(value), "a metric value must be finite");
  int64_t s = step.value_or(points_.empty() ? 1 : points_.back().step + 1);
  // A step at or before the latest: the trial went back; forget what follows.
  auto from =
      std::lower_bound(points_.begin(), points_.end(), s, [](const MetricPoint& p, int64_t x) { return p.step < x; });
  points_.erase(from, points_.end());
  points_.push_back({s, value});
  if (points_.size() > max_points_) points_.erase(points_.begin(), points_.end() - static_cast<ptrdiff_t>(max_points_));
  if (!min_ || value < min_->value) min_ = MetricPoint{s, value};
  if (!max_ || value > max_->value) max_ = MetricPoint{s, value};
  ++reported_;
}

std::optional<MetricPoint> MetricSeries::latest() const {
  if (points_.empty()) return std::nullopt;
  return points_.back();
}

std::optional<MetricPoint> MetricSeries::FirstAtOrAfter(int64_t step) const {
  auto it = std::lower_bound(points_.begin(), points_.end(), step,
                             [](const MetricPoint& p, int64_t x) { return p.step < x; });
  if (it == points_.end()) return std::nullopt;
  return *it;
}

std::optional<double> MetricSeries::AverageUpTo(int64_t step) const {
  double sum = 0;
  size_t n = 0;
  for (const MetricPoint& p : points_) {
    if (p.step > step) break;
    sum += p.value;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

namespace {

json PointJson(const MetricPoint& p) { return json::array({p.step, p.value}); }

Result<MetricPoint> PointFromJson(const json& j, std::string_view path) {
  if (!j.is_array() || j.size() != 2 || !j[0].is_number_integer() || !j[1].is_number()) {
    return Err(
        Status::InvalidArgument(fmt::format("{}: must be a [step, value] pair of an integer and a number", path)));
  }
  double value = j[1].get<double>();
  if (!std::isfinite(value)) return Err(Status::InvalidArgument(fmt::format("{}: the value must be finite", path)));
  return MetricPoint{j[0].get<int64_t>(), value};
}

}  // namespace

json MetricSeries::ToJson() const {
  json points = json::array();
  for (const MetricPoint& p : points_) points.push_back(PointJson(p));
  json out = {{"points", std::move(points)}, {"reported", reported_}};
  if (min_) out["min"] = PointJson(*min_);
  if (max_) out["max"] = PointJson(*max_);
  return out;
}

Result<MetricSeries> MetricSeries::FromJson(const json& document, std::string_view path, size_t max_points) {
  if (!document.is_object()) return Err(JsonTypeError(path, "an object", document));
  MetricSeries series(max_points);
  const std::string points_path = JoinJsonPath(path, "points");
  const json* points = JsonFind(document, "points");
  if (points != nullptr && !points->is_array()) return Err(JsonTypeError(points_path, "a list", *points));
  if (points != nullptr) {
    for (size_t i = 0; i < points->size(); ++i) {
      ASSIGN_OR_RETURN(MetricPoint p, PointFromJson((*points)[i], fmt::format("{}[{}]", points_path, i)));
      if (!series.points_.empty() && p.step <= series.points_.back().step) {
        return Err(Status::InvalidArgument(fmt::format("{}[{}]: steps must ascend ({} follows {})", points_path, i,
                                                       p.step, series.points_.back().step)));
      }
      series.points_.push_back(p);
    }
  }
  if (series.points_.size() > series.max_points_) {
    series.points_.erase(series.points_.begin(), series.points_.end() - static_cast<ptrdiff_t>(series.max_points_));
  }
  for (const char* key : {"min", "max"}) {
    const json* j = JsonFind(document, key);
    if (j == nullptr) continue;
    ASSIGN_OR_RETURN(MetricPoint p, PointFromJson(*j, JoinJsonPath(path, key)));
    (std::string_view(key) == "min" ? series.min_ : series.max_) = p;
  }
  // Documents written by hand may leave min and max out: the kept points say.
  for (const MetricPoint& p : series.points_) {
    if (!series.min_ || p.value < series.min_->value) series.min_ = p;
    if (!series.max_ || p.value > series.max_->value) series.max_ = p;
  }
  const json* reported = JsonFind(document, "reported");
  if (reported != nullptr && (!reported->is_number_integer() || reported->get<int64_t>() < 0)) {
    return Err(JsonTypeError(JoinJsonPath(path, "reported"), "a non-negative integer", *reported));
  }
  series.reported_ = std::max<int64_t>(reported != nullptr ? reported->get<int64_t>() : 0,
                                       static_cast<int64_t>(series.points_.size()));
  return series;
}

json ObservationsToJson(const Observations& observations) {
  json out = json::object();
  for (const auto& [name, series] : observations) out[name] = series.ToJson();
  return out;
}

Result<Observations> ObservationsFromJson(const json& document, std::string_view path, size_t max_points) {
  Observations out;
  if (document.is_null()) return out;
  if (!document.is_object()) return Err(JsonTypeError(path, "an object of metrics", document));
  for (auto it = document.begin(); it != document.end(); ++it) {
    ASSIGN_OR_RETURN(MetricSeries series, MetricSeries::FromJson(*it, JoinJsonPath(path, it.key()), max_points));
    out.emplace(it.key(), std::move(series));
  }
  return out;
}

}  // namespace tessera::sweep
