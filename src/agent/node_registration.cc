#include "agent/node_registration.h"

#include "domain/quantity.h"

namespace tessera {

nlohmann::json NodeObject(const Node& node, bool simulated_gpus, const std::string& now) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuDevice& d : node.gpus) {
    gpus.push_back({{"index", d.index}, {"uuid", d.uuid}, {"model", d.model}, {"memoryBytes", d.memory_bytes},
                    {"nvlinkDomain", d.nvlink_domain}});
  }
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [k, v] : node.labels.items()) labels[k] = v;
  labels["kubernetes.io/hostname"] = node.name;
  if (!node.rack.empty()) labels["topology.kubernetes.io/rack"] = node.rack;
  if (!node.gpus.empty()) labels["nvidia.com/gpu.product"] = node.gpus.front().model;
  nlohmann::json capacity{{"cpu", FormatMilli(node.cpu_milli)},
                          {"memory", FormatBytes(node.memory_bytes)},
                          {"nvidia.com/gpu", std::to_string(node.gpus.size())},
                          {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", node.name},
            {"labels", labels},
            {"annotations",
             {{"tessera.dev/gpus", gpus.dump()}, {"tessera.dev/gpus-simulated", simulated_gpus ? "true" : "false"}}}}},
          {"spec", {{"unschedulable", node.unschedulable}}},
          {"status",
           {{"capacity", capacity},
            {"allocatable", capacity},
            {"conditions",
             {{{"type", "Ready"},
               {"status", node.ready ? "True" : "False"},
               {"reason", "TesseraAgentReady"},
               {"lastHeartbeatTime", now}}}}}}};
}

}  // namespace tessera
