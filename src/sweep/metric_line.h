// Metric lines: how a trial reports metrics, on stdout or in a metrics file,
// one report per line:
//
//   tessera-metric loss=0.25 acc=0.91 step=3
//
// Grammar: optional leading and trailing whitespace (a '\r' too); the word
// `tessera-metric`; then tokens separated by spaces or tabs, each NAME=VALUE.
// At least one metric; `step=N` (a non-negative integer) at most once,
// anywhere; NAME a metric name (IsMetricName), each at most once; VALUE a
// finite number as from_chars reads it ("0.25", "-1e-3"; not "nan", "inf",
// "0x1", "+1"). A line that breaks any rule is not a metric line: nullopt,
// never half a report (a log line that happens to start with the word is
// ignored rather than misread).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::sweep {

inline constexpr std::string_view kMetricLinePrefix = "tessera-metric";

struct MetricObservation {
  std::optional<int64_t> step;
  std::vector<std::pair<std::string, double>> values;  // in the line's order
  friend bool operator==(const MetricObservation&, const MetricObservation&) = default;
};

// A letter or '_', then letters, digits, '_', '.', '-' or '/'; not "step".
// Objective and additional metric names follow the same rule.
bool IsMetricName(std::string_view name);

std::optional<MetricObservation> ParseMetricLine(std::string_view line);

}  // namespace tessera::sweep
