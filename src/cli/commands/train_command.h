// `tessera train NAME --workers N [--gpus-per-worker G] [--nproc-per-node P]
//  [--min-workers A --max-workers B] [--queue Q] [--cpu C] [--memory M]
//  [--priority CLASS] [--retries R] [--max-run SECONDS] [-n NS] -- CMD ARGS...`
//
// The one-line form of a tessera.dev/v1 TrainingJob (like a PyTorchJob):
//   spec.replicas = N, or minReplicas/maxReplicas (elastic);
//   spec.nprocPerNode = P (default: the whole GPUs per worker, at least 1);
//   spec.backoffLimit = R gang restarts (default 3); activeDeadlineSeconds;
//   one worker container named NAME running CMD, requests = limits.
// Without --queue: the namespace's default queue (as `tessera submit`).
// Prints `trainingjob.tessera.dev/NAME created in queue Q` and how to follow it.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands/command_context.h"
#include "cli/commands/submit_command.h"
#include "common/result.h"

namespace tessera {

struct TrainOptions {
  SubmitOptions pod;  // name, queue, gpu (per worker), cpu, memory, priority, max_run_seconds, command
  int workers = 0;    // 0: elastic (min/max) or 1
  int min_workers = 0;
  int max_workers = 0;
  int nproc_per_node = 0;  // 0: the whole GPUs per worker, at least 1
  int64_t retries = 3;
};

// The TrainingJob `train` creates, or InvalidArgument naming the bad flag.
Result<nlohmann::json> BuildTrainingJob(const TrainOptions& options, const std::string& ns);

int RunTrain(const CommandContext& ctx, const TrainOptions& options);

}  // namespace tessera
