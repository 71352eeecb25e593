// `tessera describe pipelinerun NAME`: the run's DAG as text (pipeline/render.h
// RenderDag), each node with its state, from what the run's status recorded
// (status.pipelineSpec, status.parameters, status.nodes).
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

// The DAG's lines; one line saying why when the run has no recorded spec yet
// (it has not started: "<not started: MESSAGE>").
std::vector<std::string> PipelineRunDagLines(const nlohmann::json& run);

}  // namespace tessera
