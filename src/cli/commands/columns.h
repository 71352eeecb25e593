// The table columns `tessera get` prints per kind, modelled on kubectl's and on
// the Kueue and Volcano CRDs' printer columns, plus what a GPU platform needs:
//
//   namespaces       NAME STATUS AGE
//   nodes            NAME STATUS GPUS GPU MODEL AGE             (wide: CPU MEMORY)
//   priorityclasses  NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY
//   clusterqueues    NAME COHORT STRATEGY PENDING WORKLOADS ADMITTED WORKLOADS AGE
//   localqueues      NAME CLUSTERQUEUE PENDING WORKLOADS ADMITTED WORKLOADS AGE
//   resourceflavors  NAME NODE LABELS AGE                       (wide: TAINTS)
//   workloads        NAME QUEUE RESERVED IN ADMITTED PRIORITY AGE (wide: MESSAGE, why it waits);
//                    PRIORITY is the class named, else the priority it runs at
//                    (workload_priority.h: spec.priority, else the default class's value)
//   jobs (batch)     NAME QUEUE STATUS COMPLETIONS DURATION AGE (wide: CONTAINERS COMMAND)
//   jobs (volcano)   NAME STATUS MINAVAILABLE RUNNINGS QUEUE AGE
//   pods             NAME READY STATUS RESTARTS AGE NODE        (wide: GPUS, GPU DEVICES)
//   resourcequotas   NAME AGE REQUEST LIMIT
//   events           LAST SEEN TYPE REASON OBJECT MESSAGE
//   services         NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE    (wide: SELECTOR)
//   endpointslices   NAME ADDRESSTYPE PORTS ENDPOINTS AGE
//   anything else    NAME AGE
// With all namespaces, NAMESPACE comes first. A field the object lacks prints
// as kubectl prints it for that column (empty, <none> or a default such as
// BestEffortFIFO).
//
// Thread-safety: pure functions over immutable tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/kinds.h"

namespace tessera {

struct ColumnOptions {
  bool wide = false;
  bool with_namespace = false;   // -A: a NAMESPACE column first
  int64_t now = 0;               // for AGE and DURATION
  int64_t default_priority = 0;  // the globalDefault PriorityClass's value (0: none), for workloads' PRIORITY
  bool show_labels = false;      // --show-labels: a LABELS column last
};

std::vector<std::string> TableHeaders(const KindInfo& kind, const ColumnOptions& options);
std::vector<std::string> TableRow(const KindInfo& kind, const nlohmann::json& object, const ColumnOptions& options);

// Why a workload waits, in the scheduler's words: the message of the
// QuotaReserved or Admitted condition when that condition is not True; "" when
// admitted or when the server has said nothing yet.
std::string PendingMessage(const nlohmann::json& workload);

}  // namespace tessera
