// `tessera describe KIND [NAME...] [-n NS|-A] [-l SELECTOR]` (or TYPE/NAME...):
// a readable account of objects, kubectl describe's layout:
//
//   Name:               job-train-1
//   Namespace:          team-nlp
//   Labels:             <none>
//   Annotations:        <none>
//   API Version:        kueue.x-k8s.io/v1beta1
//   Kind:               Workload
//   Creation Timestamp: 2024-05-01T10:00:00Z (5m ago)
//   Pending:            <why it waits: the QuotaReserved/Admitted condition's message>
//   Spec:               <every field, indented, "nominalQuota" shown as "Nominal Quota">
//   Status:             <the same, without conditions>
//   Conditions:         a table: Type, Status, Reason, Last Transition, Message
//   Events:             Type, Reason, Age, From, Message of the core/v1 Events about it, or <none>
//
// Kind by kind it adds what people look for: a workload's queue, priority, why it
// is pending or where it was placed (per pod: node and GPU devices); a
// ClusterQueue's quota and usage per flavor; a node's GPUs; a namespace's
// resource quotas and local queues. Without a NAME, every object of the kind
// (in the namespace, or matching -l) is described, separated by blank lines.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands/command_context.h"

namespace tessera {

struct DescribeOptions {
  std::vector<std::string> args;  // KIND [NAME...] or TYPE/NAME...
  std::string selector;           // -l, without names
  bool all_namespaces = false;    // -A, without names
};

int RunDescribe(const CommandContext& ctx, const DescribeOptions& options);

}  // namespace tessera
