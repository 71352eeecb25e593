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
};

}  // namespace tessera
