// Content hashes of pipelines: the cache key of a node and the digest of the
// exact spec a PipelineRun ran (its lineage, as ZenML records it).
//
// Contract
// - Hashes are lowercase hex SHA-256 (64 characters) of canonical JSON:
//   nlohmann's dump() without spaces, whose objects are std::maps and so
//   written with sorted keys. Equal documents hash equal whatever the key order
//   they were written in; 1 and 1.0 are different documents.
// - CacheKey(node, digests) hashes
//     {"key": "tessera.dev/pipeline-cache/v1", "template": node.pod_template,
//      "when": node.when, "bindings": node.bindings,
//      "inputs": {INPUT: digests[INPUT] for INPUT in node.inputs}}
//   so the same template and inputs give the same key, and a change to the
//   template, a parameter or item it uses, its condition, or an input's outputs
//   gives a new one. The condition is in the key because it decides whether the
//   node runs at all: a resumed run that changes it must decide again.
//   Entries of `upstream_output_digests` that are not inputs are ignored, so a
//   caller may pass the digests of every finished node; an input without an
//   entry hashes as "" (a node that wrote nothing).
// - {{steps.*}} references stay as written in the hashed template: the inputs'
//   digests stand for them (the controller's digest of a node's outputs must
//   cover its result file).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "pipeline/dag.h"
#include "pipeline/node_state.h"
#include "pipeline/pipeline_spec.h"

namespace tessera::pipeline {

// Lowercase hex SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);

// The canonical text of a JSON document (see above).
std::string CanonicalJson(const nlohmann::json& doc);

std::string CacheKey(const DagNode& node, const OutputDigests& upstream_output_digests);

// The digest of a spec as written (PipelineSpec::source for a parsed one).
std::string SpecDigest(const nlohmann::json& spec);
std::string SpecDigest(const PipelineSpec& spec);

}  // namespace tessera::pipeline
