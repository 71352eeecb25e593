#include "domain/workload.h"

namespace tessera {

Resources Workload::TotalRequests() const {
  Resources total;
  for (const PodSet& ps : pod_sets) total += ps.requests * ps.count;
  return total;
}

}  // namespace tessera
