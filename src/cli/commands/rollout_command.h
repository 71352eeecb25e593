// `tessera rollout undo isvc/NAME`: as kubectl rollout undo does for a
// Deployment, puts an InferenceService's spec.template back to its last fully
// ready revision (or, when the current one is it, the one before). It writes
// the annotation tessera.dev/rollback; the InferenceService controller sets
// the template (server/controllers/inferenceservice_controller.h).
#pragma once

#include <string>

#include "cli/commands/command_context.h"

namespace tessera {

// `target`: isvc/NAME, inferenceservice/NAME, inferenceservices/NAME (with
// .tessera.dev or not), or NAME.
int RunRolloutUndo(const CommandContext& ctx, const std::string& target);

}  // namespace tessera
