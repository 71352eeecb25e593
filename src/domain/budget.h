// A namespace's spending budget for the current period (tessera.dev/v1 Budget,
// DESIGN.md section 12), as the scheduler checks it at admission: a workload is
// admitted only if what the namespace has used this period, plus what its
// admitted work will cost until its run-time limit (or the period's end), plus
// what this workload would cost in the period, stays within the limit. GPU time
// in milli-GPU-seconds, money in millionths of the currency unit (micro-dollars):
// integers, as every quantity of the core.
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/time.h"

namespace tessera {

enum class BudgetPeriod { kDay, kWeek, kMonth };

struct NamespaceBudget {
  std::string name;  // the Budget object's
  BudgetPeriod period = BudgetPeriod::kMonth;
  Timestamp period_start;
  Timestamp period_end;  // work is counted up to here, at most
  std::optional<int64_t> limit_gpu_milli_seconds;  // spec.gpuHours
  std::optional<int64_t> limit_cost_micro;         // spec.cost
  // Used so far this period (usage records) and committed by admitted work
  // until its run-time limit or the period's end, whichever is first.
  int64_t used_gpu_milli_seconds = 0;
  int64_t used_cost_micro = 0;
};

// "today", "this week", "this month": for messages.
std::string_view BudgetPeriodText(BudgetPeriod period);

// What `gpu_milli` GPUs running `seconds` cost at `price_micro_per_gpu_hour`,
// in micro-units, rounded up (never under-counted); saturates instead of overflowing.
int64_t GpuCostMicro(int64_t gpu_milli, int64_t seconds, int64_t price_micro_per_gpu_hour);

// "$1,234.50" ("$5,000" when whole): micro-units as money, to the cent (rounded up).
std::string FormatMoney(int64_t micro);

}  // namespace tessera
