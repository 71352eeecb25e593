// The Pipeline kind's spec (tessera.dev/v1; also a PipelineRun's inline
// spec.pipelineSpec), parsed and checked into value types.
//
//   spec:
//     parameters: [{name: dataset, value: "cifar10"}, {name: evaluate}]  # value: the default; none: required
//     steps:
//       - name: train                     # a DNS-1123 label; fanned-out nodes are train-0, train-1, ...
//         template: {metadata: {}, spec: {containers: [...]}}   # a pod template, opaque but for {{...}}
//         dependsOn: [prepare]            # a fanned-out dependency means all of its nodes
//         withItems: ["0.01", {lr: 0.1}]  # fan-out: one node per item
//         when: "{{params.evaluate}} == true"   # when_expr.h
//         retries: {limit: 2, backoffSeconds: 10}
//         cache: true
//
// Contract
// - ParsePipelineSpec accepts only specs that Expand can turn into a DAG for any
//   values of the parameters: names unique and valid, dependencies known and
//   acyclic, every {{...}} known (a declared parameter, the step's own item, an
//   upstream step), every when-condition well formed.
// - Errors are InvalidArgument with the field path of the problem (below
//   `path`, "spec" by default) and, for an unknown name, a did-you-mean.
// - Unknown fields are not refused here: the kind's schema refuses them before.
//
// Thread-safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/time.h"
#include "pipeline/when_expr.h"

namespace tessera::pipeline {

// Kubernetes' Job back-off: 10 s by default, doubling per retry, at most 6 minutes.
inline constexpr Duration kDefaultBackoff = Duration::Seconds(10);
inline constexpr Duration kMaxBackoff = Duration::Seconds(360);
// A DNS-1123 label's limit, which node names (and the Workloads named after them) keep.
inline constexpr size_t kMaxNodeNameLength = 63;

struct RetryPolicy {
  int32_t limit = 0;                   // retries after the first attempt
  Duration backoff = kDefaultBackoff;  // before the first retry

  int32_t max_attempts() const { return limit + 1; }

  // The wait before the next attempt once `failed_attempts` (>= 1) have failed:
  //   backoff * 2^(failed_attempts - 1), capped at kMaxBackoff
  // (10 s, 20 s, 40 s, ... 360 s for the default).
  Duration DelayAfter(int32_t failed_attempts) const;
};

struct Parameter {
  std::string name;
  std::optional<std::string> default_value;  // none: the run must give one
};

struct Step {
  std::string name;
  nlohmann::json pod_template;          // as written
  std::vector<std::string> depends_on;  // in the order written, no duplicates
  // Fan-out: one node per item (a string, number, boolean or object); none: one node.
  std::optional<std::vector<nlohmann::json>> with_items;
  std::optional<WhenExpr> when;
  RetryPolicy retries;
  bool cache = true;
  // Every reference the template and the condition make, by Reference::Key().
  std::set<std::string> references;

  // The name of the node for item `item` ("train-1"), or the step's name.
  std::string NodeName(std::optional<size_t> item) const;
};

struct PipelineSpec {
  std::vector<Parameter> parameters;
  std::vector<Step> steps;  // in the order written
  nlohmann::json source;    // the spec as given, for SpecDigest

  // The step named `name`, or nullptr.
  const Step* FindStep(std::string_view name) const;
};

Result<PipelineSpec> ParsePipelineSpec(const nlohmann::json& spec, std::string_view path = "spec");

}  // namespace tessera::pipeline
