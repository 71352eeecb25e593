// A PipelineRun's parameter values: the run's spec.parameters over the
// pipeline's defaults.
//
// Contract
// - The result has a value for every parameter the pipeline declares, and only
//   for those.
// - Errors are InvalidArgument with the run's field path (below `path`,
//   "spec.parameters" by default): a parameter the pipeline does not declare
//   (with a did-you-mean), one given twice, one without a value, and a required
//   parameter (no default) the run does not give.
// - Values are text: a number or boolean in the run becomes its JSON text
//   ("0.1", "true"), as in references.h's BindingText.
//
// Thread-safety: pure function.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "pipeline/pipeline_spec.h"

namespace tessera::pipeline {

// Parameter name -> value.
using ParameterValues = std::map<std::string, std::string, std::less<>>;

// `run_parameters`: the run's list [{name, value}], or null when it gives none.
Result<ParameterValues> ResolveParameters(const PipelineSpec& spec, const nlohmann::json& run_parameters,
                                          std::string_view path = "spec.parameters");

}  // namespace tessera::pipeline
