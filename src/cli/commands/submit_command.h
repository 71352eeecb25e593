// `tessera submit NAME [--queue Q] [--gpu 0.25] [--cpu 1] [--memory 4Gi]
//  [--gpu-memory 20Gi] [--priority development] [--type job|notebook|training|inference]
//  [--workers N] [--retries N] [--max-run SECONDS] [-n NS] -- CMD ARGS...`
//
// The quick form for data scientists: builds a batch/v1 Job, as they would
// write it for Kueue, and creates it:
//   metadata.labels[kueue.x-k8s.io/queue-name] = Q
//   metadata.annotations[tessera.dev/type] = TYPE
//   spec.parallelism = spec.completions = workers (Indexed completion when
//     workers > 1, so each worker has a rank); activeDeadlineSeconds = max-run;
//     backoffLimit = retries (0: a failure fails the job)
//   pod template: one container named NAME running CMD ARGS, requests = limits
//     (cpu, memory, nvidia.com/gpu, tessera.dev/gpu-memory), priorityClassName,
//     restartPolicy Never (OnFailure for training, which restarts from its checkpoint)
// Amounts are checked here with the server's own parsers before any request:
// `--gpu 1.5` is refused (exit 2) because a GPU request is a fraction below one
// or a whole number.
//
// Without --queue, Q is the namespace's LocalQueue named `default` (Kueue's
// default local queue), else its only LocalQueue; with neither, the error says
// how to create one.
// Prints `job.batch/NAME submitted to queue Q` and how to follow it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands/command_context.h"
#include "common/result.h"

namespace tessera {

struct SubmitOptions {
  std::string name;
  std::string queue;
  std::string gpu;         // "" : none
  std::string cpu = "1";
  std::string memory = "4Gi";
  std::string gpu_memory;  // "" : none
  std::string priority;    // "" : the cluster's default priority class
  std::string type = "job";
  int workers = 1;
  std::optional<int64_t> max_run_seconds;
  // backoffLimit: 0 by default, as Slurm does not requeue a failed job (a
  // Job written in YAML gets Kubernetes' 6).
  int64_t retries = 0;
  std::vector<std::string> command;  // after --
};

// requests (= limits) from --cpu, --memory, --gpu and --gpu-memory, checked
// with the server's parsers; InvalidArgument naming the bad flag and value.
Result<nlohmann::json> PodResources(const SubmitOptions& options);

// The namespace's queue for a workload that names none: its LocalQueue named
// default, else its only one; InvalidArgument saying how to make one.
class ApiClient;
Result<std::string> DefaultQueueIn(ApiClient& client, const std::string& ns);

// The Job `submit` creates, or InvalidArgument naming the bad flag and value.
Result<nlohmann::json> BuildSubmitJob(const SubmitOptions& options, const std::string& ns);

int RunSubmit(const CommandContext& ctx, const SubmitOptions& options);

}  // namespace tessera
