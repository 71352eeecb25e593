// Strong ids of the domain objects in one ClusterSnapshot: each is the object's
// index in the snapshot's vector of that kind.
#pragma once

#include "common/strong_id.h"

namespace tessera {

using NodeId = StrongId<struct NodeTag>;
using FlavorId = StrongId<struct FlavorTag>;
using ClusterQueueId = StrongId<struct ClusterQueueTag>;
using CohortId = StrongId<struct CohortTag>;
using LocalQueueId = StrongId<struct LocalQueueTag>;
using NamespaceId = StrongId<struct NamespaceTag>;
using WorkloadId = StrongId<struct WorkloadTag>;

}  // namespace tessera
