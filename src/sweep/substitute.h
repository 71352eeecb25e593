// SubstituteParameters: a trial's manifest from the sweep's trial template and
// the trial's assignment.
//
// Rules
// - In every string of the template (object keys excepted), `${params.NAME}`
//   (ours) and `${trialParameters.NAME}` (Katib's) become the value text of
//   parameter NAME. Katib's trialParameters may rename: with
//   `trial_parameters` {"learningRate": "lr"}, `${trialParameters.learningRate}`
//   is lr's value; a trialParameters name not in that map names a parameter
//   directly.
// - Any other `${...}` (a shell's `${HOME}`) is left as it is.
// - A string that is only a reference stays a string ("${params.layers}" ->
//   "4"): the caller's schema converts fields that want numbers.
// - Errors are InvalidArgument with the string's path in the template:
//   `spec.trialTemplate.spec.containers[0].command[2]: unknown parameter
//   "lrr"; did you mean "lr"?`, and for an unclosed `${params.` or an empty
//   name.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "sweep/assignment.h"

namespace tessera::sweep {

struct SubstitutionOptions {
  std::string path = "spec.trialTemplate";              // where the template sits, for error paths
  std::map<std::string, std::string> trial_parameters;  // Katib's trialParameters: name -> parameter name
};

Result<nlohmann::json> SubstituteParameters(const nlohmann::json& trial_template, const Assignment& assignment,
                                            const SubstitutionOptions& options = {});

}  // namespace tessera::sweep
