// The GPUs of this machine: found through NVML when a driver is present (the
// agent issue adds that), or a simulated inventory such as "8xH100-80GB" on
// machines without one, so that everything else can be developed and tested.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "domain/node.h"

namespace tessera {

// "8xH100-80GB", "2xA100-40GB,1xT4-16GB": COUNT x MODEL, the model ending in
// its memory size (GB, as vendors write it, taken as GiB). Devices are indexed
// in order; every 4 consecutive devices share an NVLink domain.
Result<std::vector<GpuDevice>> ParseSimulatedInventory(std::string_view spec);

// True when libnvidia-ml.so.1 can be loaded (an NVIDIA driver is installed).
bool NvidiaDriverPresent();

}  // namespace tessera
