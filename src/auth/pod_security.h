// Pod security as an admin's policy, the way Kubernetes' Pod Security
// Admission has it (docs/security.md, "Pod security"): a Namespace's label
// `pod-security.kubernetes.io/enforce` names the level its pods must meet:
//
//   privileged  anything goes (hostNetwork, hostPath, privileged containers...)
//   baseline    no host namespaces (hostNetwork, hostPID, hostIPC), no
//               privileged containers, no capabilities added beyond the
//               baseline list, no hostPath volumes, no hostPorts, no unmasked
//               /proc, no Unconfined seccomp or AppArmor, only safe sysctls
//   restricted  baseline, and also: only configMap, csi, downwardAPI,
//               emptyDir, ephemeral, persistentVolumeClaim, projected and
//               secret volumes; allowPrivilegeEscalation=false;
//               runAsNonRoot=true and no runAsUser 0; seccompProfile
//               RuntimeDefault or Localhost; capabilities drop ALL (only
//               NET_BIND_SERVICE added back)
//
// An unlabeled namespace is baseline (Kubernetes' own default is
// privileged: Tessera's is stricter). The label's value must be one of the
// three (ValidatePodSecurityLabels, for Namespaces); only who may update
// Namespaces (cluster admins, not team admins) can change it.
//
// Enforced in one place, here, by the API server (on create of a Pod, and of
// anything with a pod template: Jobs, Volcano Jobs, Workloads, where
// Kubernetes only warns) and again by the agent before each start.
//
// Pure.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/status.h"

namespace tessera {

inline constexpr std::string_view kPodSecurityEnforceLabel = "pod-security.kubernetes.io/enforce";
inline constexpr std::string_view kPodSecurityEnforceVersionLabel = "pod-security.kubernetes.io/enforce-version";

// The level a namespace with these labels enforces: "privileged", "baseline"
// (also when unlabeled) or "restricted".
std::string PodSecurityLevel(const std::map<std::string, std::string>& namespace_labels);

// OK when the pod spec meets its namespace's level; else PermissionDenied in
// Kubernetes' words: `pods "NAME" is forbidden: violates PodSecurity
// "baseline:latest": host namespaces (hostNetwork=true), hostPath volumes
// (volume "data")` (without `pod_name`, from `violates` on).
Status CheckPodSecurity(const nlohmann::json& pod_spec, const std::map<std::string, std::string>& namespace_labels,
                        std::string_view pod_name = "");

// Whether a pod of a namespace with these labels may use the node's network
// (hostNetwork: true): privileged only.
bool AllowsHostNetwork(const std::map<std::string, std::string>& namespace_labels);

// The pod specs an object holds, with where: a Pod's "spec", a Job's
// "spec.template.spec", a Volcano Job's "spec.tasks[i].template.spec", a
// Workload's "spec.podSets[i].template.spec".
std::vector<std::pair<std::string, const nlohmann::json*>> PodSpecsOf(const nlohmann::json& object);

// A Namespace's labels as a map (strings only).
std::map<std::string, std::string> LabelsOf(const nlohmann::json& object);

// InvalidArgument naming the label when a Namespace's pod-security labels
// hold a level (or version) Kubernetes does not know.
Status ValidatePodSecurityLabels(const nlohmann::json& namespace_object);

}  // namespace tessera
