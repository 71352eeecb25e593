// The Node object an agent registers for its machine (like a kubelet does):
// capacity in status, the GPU inventory in the tessera.dev/gpus annotation (one
// JSON entry per device: index, uuid, model, memoryBytes, nvlinkDomain), labels
// for flavors and topology.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "domain/node.h"

namespace tessera {

nlohmann::json NodeObject(const Node& node, bool simulated_gpus, const std::string& now);

}  // namespace tessera
