// The dependency controller: Slurm's --dependency=afterok for Jobs. A batch/v1
// Job (or any Workload) annotated tessera.dev/depends-on: "a,b" waits, outside
// the queue and holding no quota, until the Jobs a and b of its namespace have
// succeeded (Complete). Its QuotaReserved condition says what it waits for
// ("waits for jobs a (running) and b (not found) to succeed"). If one of them
// failed, it never starts: its Workload ends Failed (DependencyFailed), as
// Slurm's DependencyNeverSatisfied, and so does its Job.
//
// It observes the cache's Workloads and keeps the unfinished ones that have
// dependencies, so a pass looks at those only.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>

#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kDependsOnAnnotation = "tessera.dev/depends-on";

class DependencyController final : public Controller {
 public:
  // Observes `cache`'s Workloads (it must hold them and batch/v1 Jobs).
  explicit DependencyController(ObjectCache& cache);
  std::string_view name() const override { return "dependency-controller"; }
  void Reconcile(PassContext& pass) override;

  // Whether the workload waits for its dependencies (the snapshot leaves it out).
  bool Gated(const StoredObject& workload) const { return gated_.count(&workload) > 0; }

 private:
  using Key = std::pair<std::string, std::string>;
  std::set<Key> dependent_;  // unfinished, not admitted, with the annotation
  std::set<const StoredObject*> gated_;
};

}  // namespace tessera
