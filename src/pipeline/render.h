// The DAG of a PipelineRun as text, for `tessera describe pipelinerun`:
//
//   prepare                      Succeeded  resumed from run-1
//   ├─ train-0                   Cached
//   ├─ train-1                   Failed     attempt 2/3, will retry: exit code 137
//   ├─ train-2                   Failed     attempt 3/3: exit code 1
//   │  └─ evaluate ← train-0..2  Omitted    upstream train-2 failed
//   └─ notify                    Skipped    when "false" is false
//
// Contract
// - One line per node, in the DAG's (topological, depth-first) order; each
//   node is drawn under the dep it waited on last (its tree parent), and a node
//   with more than one dep lists them after "←" (all the nodes of a fanned-out
//   step as "train-0..2").
// - Columns: the tree and name, the state (Cached for a cache hit), then the
//   details: "resumed from RUN", "attempt A/M" (attempts started in this run,
//   of the step's maximum), "will retry" for a failed node with attempts
//   left, and the node's message after ": ". Names are padded to one width (counted in
//   characters, not bytes); no trailing spaces.
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "pipeline/dag.h"
#include "pipeline/node_state.h"

namespace tessera::pipeline {

std::vector<std::string> RenderDag(const Dag& dag, const NodeStates& states);

}  // namespace tessera::pipeline
