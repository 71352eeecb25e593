// SimCluster: the cluster and policy a simulation runs on, as the scheduler core
// sees them: nodes, flavors, cohorts, ClusterQueues, LocalQueues, namespaces and
// priority classes. Policies are read from the same manifests the server takes,
// so a platform team can simulate its real configuration.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "domain/node.h"
#include "domain/priority_class.h"
#include "sched/snapshot.h"

namespace tessera {

// Label every simulated node carries with its GPU model, so that ResourceFlavors
// and GPU-model constraints can select on it (the label NVIDIA's GPU feature
// discovery sets on Kubernetes nodes).
inline constexpr std::string_view kGpuProductLabel = "nvidia.com/gpu.product";

// --cluster SPEC, one of:
//   "125x8xA100-80GB"            125 nodes of 8 A100-80GB GPUs; groups joined by ','
//                                ("100x8xH100-80GB,50x4xL40S-48GB"). Each node gets
//                                16 cores and 128 GiB of memory per GPU, one NVLink
//                                domain, and a rack of 32 nodes.
//   FILE.csv                     a node list: sn,cpu_milli,memory_mib,gpu,model (the
//                                openb format; racks of 32 nodes in file order)
//   FILE.yaml / FILE.json        Node manifests, as `tessera get nodes -o yaml` prints them
// Every node is Ready. Errors name what to fix.
Result<std::vector<Node>> LoadSimNodes(const std::string& spec);
// NODESxGPUSxMODEL groups only, never a file: what a server takes from a client.
// The nodes are named <name_prefix>0, <name_prefix>1, ...
Result<std::vector<Node>> SimNodesFromShorthand(std::string_view spec, std::string_view name_prefix);

struct SimCluster {
  ClusterSnapshot base;  // everything but workloads
  std::vector<PriorityClass> priority_classes;
  std::vector<std::string> warnings;  // manifests ignored, and why

  int64_t TotalGpuMilli() const;
  const PriorityClass* FindPriorityClass(std::string_view name) const;
  const PriorityClass* DefaultPriorityClass() const;  // globalDefault, or nullptr
};

// The policy from manifests (YAML or JSON, several documents): ResourceFlavor,
// ClusterQueue, LocalQueue, PriorityClass, Namespace and ResourceQuota; other kinds
// are ignored with a warning. Each object is validated as the API server would.
// Without PriorityClasses, Tessera's four defaults apply.
Result<SimCluster> SimClusterFromManifests(std::vector<Node> nodes, std::string_view manifests);
Result<SimCluster> SimClusterFromPolicyFile(std::vector<Node> nodes, const std::string& path);

// The policy when none is given: one ClusterQueue per team (named after it;
// "default" for jobs without a team) in cohort "all", each with an equal share of
// the cluster's GPUs as nominal quota (the remainder to the first teams) and the
// whole cluster's CPU and memory, one flavor "default" that every node belongs to,
// a LocalQueue named after the team in the namespace named after it, and the
// four default priority classes.
std::string DefaultPolicyManifests(const std::vector<Node>& nodes, const std::vector<std::string>& teams);

}  // namespace tessera

namespace tessera {

// The name a trace's team takes as a namespace, LocalQueue and (in the default
// policy) ClusterQueue: lower case, characters outside [a-z0-9-] as '-', "default"
// for no team.
std::string QueueNameForTeam(std::string_view team);

}  // namespace tessera
