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
// Artifacts (with a volume root: the server's --volume-root, the share its
// agents mount at the same path, as claim_reclaimer.h assumes):
//   - At its first pass a run gets a PersistentVolumeClaim RUN-artifacts of
//     its own (owned by it, labelled tessera.dev/pipelinerun=RUN, bound as
//     claim admission binds one, requesting no storage), recorded in
//     status.artifacts {claimName, claimUid}. It is made here, not through
//     the API, but counted as claim admission counts one: while one more claim
//     would exceed a ResourceQuota's persistentvolumeclaims, the run stays
//     Pending saying so (claims the API is creating at that moment are not
//     seen). A claim of that name the run does not own fails the run.
//   - A node writes <claim dir>/STEP (a fanned-out step's item I:
//     STEP/I), recorded in its status as artifacts {claim, claimUid, path}.
//     Before each attempt the controller empties it and makes
//     <claim dir>/.inputs/NODE, holding one symbolic link per upstream node
//     (STEP, or STEP/I for a fanned-out one) to where that node's outputs are:
//     this run's claim, or for a node carried over (resumeFrom) or Cached, the
//     claim of the run that ran it.
//   - A process pod (no image) gets TESSERA_OUTPUT_DIR and TESSERA_INPUT_DIR as
//     those node paths; a container pod gets the claims as volumes, its
//     outputs mounted at /tessera/outputs and each upstream node's read-only at
//     /tessera/inputs/STEP[/I], and the variables naming those.
//   - When a node succeeds the controller reads OUTPUT/result (its first 4 KiB,
//     trailing white space dropped) as {{steps.NODE.outputs.result}}, and its
//     output digest is the identity of where its outputs are (SHA-256 of the
//     claim's uid and path), so a downstream cache key changes when an input
//     was produced again and a cache hit reads the very files it was keyed on.
//   - A removed run's claim is deleted with its Jobs; the claim reclaimer then
//     deletes its directory.
// Without a volume root nothing of this happens: the variables are not set,
// results read "" and output digests are "".
//
// Thread-safety: the loop's thread only (controller.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/uuid.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kPipelineKind = "tessera.dev/Pipeline";
inline constexpr const char* kPipelineRunKind = "tessera.dev/PipelineRun";
inline constexpr const char* kPipelineRunLabel = "tessera.dev/pipelinerun";
inline constexpr const char* kPipelineStepLabel = "tessera.dev/step";

inline constexpr const char* kArtifactsOutputsPath = "/tessera/outputs";
inline constexpr const char* kArtifactsInputsPath = "/tessera/inputs";

class PipelineController final : public Controller {
 public:
  PipelineController() = default;
  // With the shared volume root: artifacts (above).
  explicit PipelineController(std::string volume_root) : volume_root_(std::move(volume_root)) {}
  std::string_view name() const override { return "pipeline-controller"; }
  void Reconcile(PassContext& pass) override;

 private:
  // Deletes the Jobs and artifact claims of PipelineRuns that are gone.
  void DeleteOrphans(PassContext& pass);
  // ObjectCache::removals of PipelineRuns at the last orphan scan.
  std::optional<uint64_t> orphans_checked_at_;
  std::string volume_root_;  // empty: no artifacts
  UuidGenerator uuids_;      // the artifact claims' uids
};

}  // namespace tessera
