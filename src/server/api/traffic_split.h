// Traffic split by weight for the services proxy: a Service annotated
// tessera.dev/traffic-split, a JSON object {"SERVICE": weight, ...} naming
// other Services of its namespace (an InferenceService's per-revision
// Services, written by server/controllers/inferenceservice_controller.h), has
// each proxied request sent to one of those Services, chosen by weight among
// the ones that have a ready endpoint, then to a ready endpoint of it.
// Weights are integers >= 0 (percentages, as the controller writes them); a
// malformed annotation is ignored (the Service's own endpoints serve).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

inline constexpr std::string_view kTrafficSplitAnnotation = "tessera.dev/traffic-split";

using TrafficWeights = std::vector<std::pair<std::string, int64_t>>;

// The weights of `service`'s annotation, in name order; empty when it has
// none or it is not an object of names to non-negative integers.
TrafficWeights TrafficSplitOf(const nlohmann::json& service);

// One of `weights`' names for which `has_endpoints` holds, by weight:
// `roll` (any number, a random one per request) taken modulo their total. A
// name of weight 0 is chosen only when no weighted one has endpoints.
// nullopt when none has endpoints.
std::optional<std::string> PickByWeight(const TrafficWeights& weights,
                                        const std::function<bool(const std::string&)>& has_endpoints, uint64_t roll);

}  // namespace tessera
