// The namespace controller: what every namespace gets, as Kubernetes'
// serviceaccount controller and OpenShift's namespace security allocation
// controller give it:
//   - a ServiceAccount named "default", whose token a pod gets when it names
//     no ServiceAccount (the agent mounts it as TESSERA_TOKEN_FILE);
//   - a block of uids of its own (annotation tessera.dev/uid-range,
//     domain/uid_range.h): the first block not held by another namespace.
// Runs in the scheduler loop's pass, before any pod of the pass is made, so a
// pod's namespace has both when its agent starts it. Idempotent: a namespace
// that has both costs a look.
#pragma once

#include "server/batched_writer.h"
#include "server/object_cache.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kServiceAccountKind = "/ServiceAccount";

void ReconcileNamespaces(const ObjectCache& cache, const std::string& now, BatchedWriter& writer);

class NamespaceController final : public Controller {
 public:
  std::string_view name() const override { return "namespace-controller"; }
  void Reconcile(PassContext& pass) override { ReconcileNamespaces(pass.cache, pass.now_text, pass.writer); }
};

}  // namespace tessera
