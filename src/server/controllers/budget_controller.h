// The budget controller: what each namespace's tessera.dev/v1 Budgets have
// used in their current period, for the scheduler core (which checks every
// admission against them, domain/budget.h) and for people (the Budget's status,
// the metrics tessera_budget_used_ratio and the 80 % alert).
//
//   apiVersion: tessera.dev/v1
//   kind: Budget
//   metadata: {name: monthly, namespace: team-nlp}
//   spec: {period: Monthly, cost: "5000", gpuHours: "2000"}   # either or both
//
// A period is a calendar day, week (from Monday) or month, in UTC. What a
// budget has used is
//   - the GPU time of the namespace's usage records within the period so far
//     (closed records, and open ones up to now), at their flavor's price
//     (ResourceFlavor annotation tessera.dev/price-per-gpu-hour), plus
//   - what its admitted work will use from now until its run-time limit or the
//     period's end, whichever is first (work without a limit: to the end);
// so an admission never spends money the namespace cannot have.
//
// Cost: closed records never change; their sums are kept per namespace and
// period, and counted again only when a record of that namespace changes or
// the prices do. Each pass walks the open records (the admitted work).
//
// Not thread-safe: the scheduler loop's thread owns it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "domain/budget.h"
#include "server/batched_writer.h"
#include "server/metrics_registry.h"
#include "server/object_cache.h"
#include "server/controllers/controller.h"

namespace tessera {

inline constexpr const char* kBudgetKind = "tessera.dev/Budget";

// The UTC period of `kind` holding `now`: [start, end).
std::pair<Timestamp, Timestamp> BudgetPeriodAround(BudgetPeriod kind, Timestamp now);

class BudgetController final : public Controller {
 public:
  std::string_view name() const override { return "budget-controller"; }
  void Reconcile(PassContext& pass) override { Reconcile(pass.cache, pass.now, pass.writer); }
  // Observes the usage records of `cache` (which must hold UsageRecords,
  // Budgets, ResourceFlavors and Workloads) for as long as it lives.
  explicit BudgetController(ObjectCache& cache);

  // Recounts the budgets as of `now` and writes each Budget's status
  // (periodStart, periodEnd, usedGpuHours, usedCost, conditions) when a figure
  // changed by a cent or a tenth of a GPU-hour, at most every 5 s.
  void Reconcile(const ObjectCache& cache, Timestamp now, BatchedWriter& writer);

  // Namespace -> its budgets as of the last Reconcile, for the snapshot.
  const std::map<std::string, std::vector<NamespaceBudget>>& budgets() const { return budgets_; }
  // tessera_budget_used_ratio{namespace, budget, measure="cost"|"gpu_hours"}.
  GaugeFamily Gauge() const;

 private:
  struct Closed {
    Timestamp start, end;
    int64_t gpu_milli = 0;
    std::string flavor;
  };
  struct Sum {
    int64_t gpu_milli_seconds = 0;
    int64_t cost_micro = 0;
  };
  Sum ClosedSum(const std::string& ns, Timestamp start, Timestamp end, const std::map<std::string, int64_t>& prices);

  std::map<std::string, std::map<std::string, Closed>> closed_;  // namespace -> record name -> record
  std::map<std::tuple<std::string, int64_t, int64_t>, Sum> closed_sums_;  // (namespace, period start, end)
  uint64_t prices_hash_ = 0;
  std::map<std::string, std::vector<NamespaceBudget>> budgets_;
  std::map<std::pair<std::string, std::string>, Timestamp> status_written_;
};

}  // namespace tessera
