#include "sweep/metric_line.h"

#include <cctype>

#include "sweep/number_text.h"

namespace tessera::sweep {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

bool IsMetricName(std::string_view name) {
  if (name.empty() || name == "step") return false;
  auto c0 = static_cast<unsigned char>(name.front());
  if (!std::isalpha(c0) && c0 != '_') return false;
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (!std::isalnum(c) && c != '_' && c != '.' && c != '-' && c != '/') return false;
  }
  return true;
}

std::optional<MetricObservation> ParseMetricLine(std::string_view line) {
  line = Trim(line);
  if (!line.starts_with(kMetricLinePrefix)) return std::nullopt;
  line.remove_prefix(kMetricLinePrefix.size());
  if (line.empty() || (line.front() != ' ' && line.front() != '\t')) return std::nullopt;

  MetricObservation out;
  while (true) {
    while (!line.empty() && IsBlank(line.front())) line.remove_prefix(1);
    if (line.empty()) break;
    size_t end = 0;
    while (end < line.size() && !IsBlank(line[end])) ++end;
    std::string_view token = line.substr(0, end);
    line.remove_prefix(end);

    size_t eq = token.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    std::string_view name = token.substr(0, eq);
    std::string_view value = token.substr(eq + 1);
    if (name == "step") {
      if (out.step.has_value()) return std::nullopt;
      std::optional<int64_t> step = ParseInt64(value);
      if (!step || *step < 0) return std::nullopt;
      out.step = step;
      continue;
    }
    if (!IsMetricName(name)) return std::nullopt;
    for (const auto& [seen, v] : out.values) {
      if (seen == name) return std::nullopt;
    }
    std::optional<double> number = ParseDouble(value);
    if (!number) return std::nullopt;
    out.values.emplace_back(std::string(name), *number);
  }
  if (out.values.empty()) return std::nullopt;
  return out;
}

}  // namespace tessera::sweep
