// The cluster's default PriorityClass, which the priority of a Workload that
// names no class needs (api/workload_priority.h) and only the server knows:
// FetchDefaultPriorityClass asks for it, for `get` and `describe`.
//
// Thread-safety: pure functions, but for the fetch (one call at a time per ApiClient).
#pragma once

#include <cstdint>
#include <string>

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

}  // namespace tessera
