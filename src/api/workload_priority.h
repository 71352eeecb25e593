// The priority a Workload runs at, by the scheduler's rule (api/convert.h,
// WorkloadFromJson): spec.priority when set, else the value of the
// PriorityClass it names, else the globalDefault class's value, else 0. For
// the printer columns (api/printer_columns.h) and `describe`: a workload that
// names no class needs the cluster's default class, which the caller finds
// (cli/commands/workload_priority.h fetches it).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace tessera {

// The priority of a workload that names no PriorityClass: spec.priority when
// set, else the default class's value.
int64_t UnnamedClassPriority(const nlohmann::json& workload, int64_t default_priority);

}  // namespace tessera
