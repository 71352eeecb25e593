#include "server/api/traffic_split.h"

namespace tessera {

TrafficWeights TrafficSplitOf(const nlohmann::json& service) {
  TrafficWeights out;
  const auto meta = service.find("metadata");
  if (meta == service.end() || !meta->is_object()) return out;
  const auto annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object()) return out;
  const auto text = annotations->find(std::string(kTrafficSplitAnnotation));
  if (text == annotations->end() || !text->is_string()) return out;
  const nlohmann::json split = nlohmann::json::parse(text->get<std::string>(), nullptr, false);
  if (!split.is_object()) return out;
  for (const auto& [name, weight] : split.items()) {
    if (!weight.is_number_integer() || weight.get<int64_t>() < 0) return {};
    out.emplace_back(name, weight.get<int64_t>());
  }
  return out;
}

std::optional<std::string> PickByWeight(const TrafficWeights& weights,
                                        const std::function<bool(const std::string&)>& has_endpoints, uint64_t roll) {
  TrafficWeights live;
  int64_t total = 0;
  std::optional<std::string> unweighted;
  for (const auto& [name, weight] : weights) {
    if (!has_endpoints(name)) continue;
    if (weight == 0) {
      if (!unweighted) unweighted = name;
      continue;
    }
    live.emplace_back(name, weight);
    total += weight;
  }
  if (total == 0) return unweighted;
  int64_t at = static_cast<int64_t>(roll % static_cast<uint64_t>(total));
  for (const auto& [name, weight] : live) {
    if (at < weight) return name;
    at -= weight;
  }
  return live.back().first;
}

}  // namespace tessera
