// NotebookActivity: a notebook's kernel activity, as the agent of its node
// reports it for the idle reclaimer (server/controllers/idle_reclaimer.h).
//
// Every usage interval the agent asks each running notebook pod (label
// tessera.dev/notebook) Jupyter's GET {base}api/status on the pod's IP and its
// container port named http (8888): its `last_activity`, `kernels` and
// `connections`; and GET {base}api/kernels: a kernel whose execution_state is
// "busy" is activity now (a long cell prints nothing, yet works). {base} is the
// pod's NOTEBOOK_BASE_URL (the proxy path the Notebook controller sets), else
// "/". The answer goes on the pod as the annotation tessera.dev/last-activity
// (RFC 3339), written when it changes. A pod that does not answer (not Jupyter,
// not up yet) gets nothing: the reclaimer then judges it by its GPUs alone.
// Jupyter's own status and kernel listings do not count as activity there.
//
// Each request gives up after kNotebookProbeTimeout, so a hung notebook costs
// the agent's loop at most that much per pod and interval.
//
// Not thread-safe: the agent's loop thread owns it.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/time.h"

namespace tessera {

class ApiClient;

inline constexpr std::chrono::milliseconds kNotebookProbeTimeout{500};

// A running notebook pod, to be asked.
struct NotebookPod {
  std::string uid, ns, name;
  std::string url;  // http://IP:PORT/BASE/
  std::string reported;  // the annotation it holds now
  std::string token_secret;  // the Secret its JUPYTER_TOKEN comes from; "" for none
};

// The notebook pod `pod` is (its label, its http port and base URL) at `ip`;
// nullopt for any other pod.
std::optional<NotebookPod> NotebookPodOf(const nlohmann::json& pod, const std::string& ip);

// The kernels' last activity from Jupyter's answers (the bodies of api/status
// and api/kernels; the latter may be empty): a busy kernel is `now`.
// InvalidArgument when the status is not Jupyter's.
Result<Timestamp> KernelActivityFrom(const std::string& status_body, const std::string& kernels_body, Timestamp now);

class NotebookActivity {
 public:
  // Asks each of `pods` and annotates those whose activity changed.
  void Poll(ApiClient& server, const std::vector<NotebookPod>& pods, Timestamp now);

 private:
  std::map<std::string, std::string> reported_;  // pod uid -> the annotation written
  std::map<std::string, std::string> tokens_;    // pod uid -> its Jupyter token
};

}  // namespace tessera
