// ResourceFlavor (kueue.x-k8s.io/v1beta1): a kind of node, selected by labels.
#pragma once

#include <string>
#include <vector>

#include "domain/labels.h"

namespace tessera {

struct ResourceFlavor {
  std::string name;
  Labels node_labels;                   // a node belongs to the flavor when it has all of them
  std::vector<Toleration> tolerations;  // added to the pods admitted in this flavor
  // What a GPU-hour in it costs (annotation tessera.dev/price-per-gpu-hour), in
  // micro-units: budgets charge admissions by it. 0: free, or not priced.
  int64_t price_micro_per_gpu_hour = 0;
};

}  // namespace tessera
