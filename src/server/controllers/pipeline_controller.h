// The pipeline controller: runs each tessera.dev/v1 PipelineRun's DAG
// (pipeline/dag.h) as batch/v1 Jobs, one per node attempt.
//
// A pass, for each unfinished PipelineRun (ObjectCache::ActiveOf; finished
// ones are settled in the cache by the loop):
//   1. First pass only: resolve the spec it runs (spec.pipelineSpec, or the
//      Pipeline spec.pipelineRef names), its parameters (ResolveParameters)
//      and, with spec.resumeFrom, the nodes carried over from that run
//      (ResumeStates); record them in status (pipelineSpec, specDigest,
//      parameters, nodes), so that a later edit or deletion of the Pipeline
//      does not change a running run. A Pipeline not found yet leaves the run
//      Pending; a spec or parameter error fails it.
//   2. Read each Running node's Job: Complete -> Succeeded, Failed -> Failed
//      (its Failed condition's message), gone -> Failed.
//   3. Call pipeline::Next and apply its decision: a node to start or retry
//      first looks for a cache hit (a node with the same CacheKey that
//      Succeeded, or was Cached, in another PipelineRun of the namespace) and
//      is Cached on one, else gets a Job `<run>-<node>-<attempt>`; skips, omits
//      and fails are recorded with their reasons. Repeated while cache hits
//      let more nodes start. The run ends Succeeded or Failed as Next says.
//   4. Write the run's status and its new Jobs in one unit (with the run's
//      revision: a conflict is redone by the next pass), and wake for the
//      earliest retry back-off (and at once after creating Jobs, so that the
//      job controller gives them Workloads without waiting for the resync).
// It runs after the job lifecycle controller, so a Job that ended in a pass
// starts what follows it in the same pass.
// Jobs: owned by the run (ownerReferences, controller: true), labelled
// tessera.dev/pipelinerun=RUN and tessera.dev/step=NODE, with the run's
// spec.queueName as kueue.x-k8s.io/queue-name (none: the namespace's default
// queue), backoffLimit 0 (retries are the pipeline's) and restartPolicy Never
// unless the template sets one. When a PipelineRun is removed, its Jobs are
// deleted (scanned only after a removal).
//
// Not done: artifacts. No volume is shared between steps, so
// TESSERA_OUTPUT_DIR / TESSERA_INPUT_DIR are not set, every node's result
// ({{steps.X.outputs.result}}) reads "" and its output digest is "".
//
// Thread-safety: the loop's thread only (controller.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kPipelineKind = "tessera.dev/Pipeline";
inline constexpr const char* kPipelineRunKind = "tessera.dev/PipelineRun";
inline constexpr const char* kPipelineRunLabel = "tessera.dev/pipelinerun";
inline constexpr const char* kPipelineStepLabel = "tessera.dev/step";

class PipelineController final : public Controller {
 public:
  std::string_view name() const override { return "pipeline-controller"; }
  void Reconcile(PassContext& pass) override;

 private:
  // Deletes the Jobs of PipelineRuns that are gone.
  void DeleteOrphanJobs(PassContext& pass);
  // ObjectCache::removals of PipelineRuns at the last orphan scan.
  std::optional<uint64_t> orphans_checked_at_;
};

}  // namespace tessera
