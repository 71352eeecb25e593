// The Notebook controller (tessera.dev/v1 Notebook): for each Notebook NAME
//   - a PersistentVolumeClaim NAME-home when spec.home is set (made first; it
//     is charged against the namespace's ResourceQuotas as the API server
//     charges a claim, from the loop's cache: see ChargeClaim), kept when the
//     Notebook is suspended or deleted, as Kubeflow keeps a workspace volume;
//   - a Workload notebook-NAME (annotated tessera.dev/type: notebook, so the idle
//     reclaimer applies, with the Notebook's idle timeout) of one pod labelled
//     tessera.dev/notebook=NAME with a container port named http (spec.port,
//     8888), running Jupyter Lab unless spec.command says otherwise, its base
//     URL the proxy path, its token from the Secret notebook-NAME-token (made first, deleted with it),
//     which the server's proxy sends it after authenticating the caller;
//   - a headless Service notebook-NAME, port http, selecting that pod; the
//     server's proxy reaches it at status.url,
//     /api/v1/namespaces/NS/services/notebook-NAME:http/proxy/.
// Suspend and resume: spec.suspend true deactivates the Workload (spec.active
// false; evicted when admitted, so its GPU is freed; the claim is kept); false
// activates it again. A Workload the idle reclaimer suspended stays so until
// the Notebook's annotation tessera.dev/resume-from names that suspension (its
// status.suspendedAt), as `tessera notebook open|resume` writes it.
// Status: phase Pending (with the scheduler's reason), Running, Suspended (with
// the reason), Resuming; url, workload, pod, lastActivity (Jupyter's, as the
// agent reports it), idleSince, suspendedAt, message; gpuUtilization: its GPUs'
// mean utilisation a minute at a time over the last hour (history) and the
// mean of those minutes (averagePercent), kept while it holds GPUs.
// A Notebook's deletion deletes its Workload, Pods and Service; not its claim.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/uuid.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kNotebookKind = "tessera.dev/Notebook";
inline constexpr const char* kNotebookLabel = "tessera.dev/notebook";
// Set by `tessera notebook open|resume` to the status.suspendedAt it resumes.
inline constexpr const char* kNotebookResumeAnnotation = "tessera.dev/resume-from";
inline constexpr int kNotebookPort = 8888;

// The path the server's proxy serves notebook `name` of `ns` on.
std::string NotebookUrl(const std::string& ns, const std::string& name);

// The Workload the controller makes for Notebook `nb`: one pod (Jupyter Lab by
// default), in spec.queueName or the namespace's default LocalQueue.
nlohmann::json NotebookWorkload(const ObjectCache& cache, const StoredObject& nb, const std::string& now_text);

class NotebookController final : public Controller {
 public:
  std::string_view name() const override { return "notebook-controller"; }
  void Reconcile(PassContext& pass) override;

 private:
  void DeleteOrphans(PassContext& pass);
  std::optional<uint64_t> orphans_checked_at_;  // ObjectCache::removals of the kind at the last scan
  UuidGenerator uuids_;  // the home claims' uids
};

}  // namespace tessera
