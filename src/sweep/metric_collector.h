// MetricCollector: folds a trial's output into its Observations (what the
// agent keeps per trial and stores as JSON, sweep/observations.h).
//
// Steps
// 1. Feed() takes the output in chunks of any size and cuts it into lines at
//    '\n'; the unfinished tail waits for the next chunk (or Finish()). A line
//    longer than kMaxMetricLineBytes is dropped whole: no metric line is that
//    long, and the bound keeps memory flat on a binary stream.
// 2. Each line goes through ParseMetricLine; other lines are ignored.
// 3. Each metric of a report is added to its series with the report's step
//    (or the next one: MetricSeries::Add's rules).
//
// Thread-safety: none; one collector per trial, used by one thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sweep/metric_line.h"
#include "sweep/observations.h"

namespace tessera::sweep {

inline constexpr size_t kMaxMetricLineBytes = 4096;

class MetricCollector {
 public:
  explicit MetricCollector(size_t max_points_per_metric = kDefaultMaxPointsPerMetric);

  // One whole line; true when it was a metric line.
  bool AddLine(std::string_view line);
  void Add(const MetricObservation& observation);

  // Output bytes in chunks (step 1 above), and the end of the output.
  void Feed(std::string_view chunk);
  void Finish();

  const Observations& observations() const { return observations_; }
  // How many metric lines were taken so far.
  int64_t lines_taken() const { return lines_taken_; }

 private:
  size_t max_points_;
  Observations observations_;
  std::string tail_;           // the unfinished line
  bool tail_dropped_ = false;  // the unfinished line grew past the bound
  int64_t lines_taken_ = 0;
};

}  // namespace tessera::sweep
