// The priority a Workload runs at, for `get` and `describe`, by the scheduler's
// rule (api/convert.h, WorkloadFromJson): spec.priority when set, else the value
// of the PriorityClass it names, else the globalDefault class's value, else 0.
// A workload that names no class therefore needs the cluster's default class,
// which only the server knows: FetchDefaultPriorityClass asks for it.
//
// Thread-safety: pure functions, but for the fetch (one call at a time per ApiClient).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "client/api_client.h"

namespace tessera {

// The globalDefault PriorityClass; no name and value 0 when there is none.
struct DefaultPriorityClass {
  std::string name;
  int64_t value = 0;
};

// Lists the PriorityClasses. With several global defaults the last by name
// counts, as in the scheduler. When the list cannot be read there is no default:
// the priority is an extra that never fails a command.
DefaultPriorityClass FetchDefaultPriorityClass(ApiClient& client);

// The priority of a workload that names no PriorityClass: spec.priority when
// set, else the default class's value.
int64_t UnnamedClassPriority(const nlohmann::json& workload, int64_t default_priority);

}  // namespace tessera
