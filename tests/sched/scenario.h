// Scheduler scenarios as data (tests/scenarios/*.scn), in the spirit of
// sqllogictest: every scheduler bug becomes a new file. The format is one command
// per line; '#' starts a comment. Quantities use Kubernetes syntax.
//
//   flavor NAME [labels=k=v,k=v] [tolerations=key=value:Effect,...]
//   node NAME gpus=N [model=M] [memory-per-gpu=80Gi] [nvlink=0,0,1,1] [rack=R]
//        [cpu=64] [memory=512Gi] [labels=k=v,...] [taints=k=v:NoSchedule,...] [ready=false]
//   nodes COUNT PREFIX <node options>                       (PREFIX0 .. PREFIX<COUNT-1>)
//   clusterqueue NAME [cohort=C] [strategy=StrictFIFO|BestEffortFIFO] [weight=2]
//        [within=Never|LowerPriority|LowerOrNewerEqualPriority] [reclaim=Never|LowerPriority|Any]
//        [borrowwithin=Never|LowerPriority] [threshold=N] [stopped=true]
//   quota CQ FLAVOR RESOURCE=NOMINAL[/BORROWING[/LENDING]] ...   (resources: gpu cpu memory pods; '-' = unset)
//   localqueue NS/NAME CQ
//   resourcequota NS/NAME requests.nvidia.com/gpu=8 pods=50 ...
//   priorityclass NAME VALUE [never] [nonpreemptible]
//   workload NS/NAME queue=LQ [priority=CLASS] [created=SECONDS] [gpu=Q] [gpumem=Q] [cpu=Q]
//        [memory=Q] [count=N] [min=N] [maxrun=SECONDS] [topology=spread|node|rack|nvlink]
//        [spreadfrom=NODE,...] [selector=k=v,...] [tolerations=...]
//   running NS/NAME <workload options> on=NODE:DEV[@MILLI],DEV;NODE:DEV ... [flavor=F]
//        [started=SECONDS] [checkpoint=SECONDS] [evicting=true]
//   repeat N <workload line with {i} in the name>
//   config preemption=off backfill=off sharing=off borrowing=off fairsharing=off
//   now SECONDS
//   cycle                      runs the scheduler, checks the expectations above it
//                              since the last cycle, then applies the plan (admitted
//                              -> running now; victims -> pending again)
//   advance SECONDS
//   finish NS/NAME             a running workload ends and leaves
//   expect admitted NS/NAME [flavor=F] [nodes=N1,N2] [devices=NODE:0,1;NODE:2] [count=N]
//   expect pending NS/NAME [reason=CamelCaseName]
//   expect message NS/NAME <the explanation, word for word, to the end of the line>
//   expect message-contains NS/NAME <text>
//   expect preempted VICTIM by=PREEMPTOR [reason=InClusterQueue|ReclaimWithinCohort|BorrowWithinCohort]
//   expect not-preempted NS/NAME
//   expect reservation NS/NAME start=SECONDS
//   expect counts [admitted=N] [pending=N] [preempted=N]
//   expect queue-admitted CQ N   admissions of that ClusterQueue in this cycle
//   expect free-gpus N         free milli-GPU left after the cycle, in GPUs ("12", "0.5")
//   expect same-device NS/A NS/B     both single-device pods on one device
//   expect different-device NS/A NS/B
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace tessera::testing {

// Runs the scenario in `path`; returns every failed expectation, one line each
// (with the file's line number), or a Status when the file itself is malformed.
Result<std::vector<std::string>> RunScenarioFile(const std::string& path);

}  // namespace tessera::testing
