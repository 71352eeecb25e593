// RunCycle: the scheduler core. A snapshot in, decisions out.
//
// Pure: reads no clock (`now` is an input), does no I/O, starts no threads, and
// returns identical plans for identical inputs (every tie is broken by a stable
// key: share, then priority, then creation time, then snapshot position).
//
// Steps of one cycle:
//   1. Resolve each pending workload's LocalQueue -> ClusterQueue; workloads that
//      cannot reach an active queue are pending at once with the reason.
//   2. Order each ClusterQueue's pending work: priority, then creation time.
//   3. Serve queue heads lowest weighted share first (within nominal counts as 0),
//      and for each workload run the actions, least disruptive first:
//        a. admit: flavors in the queue's order; quota, namespace ceiling and
//           placement checked together; gangs all-or-nothing;
//        b. preempt: when policy allows, the cheapest victim set (lowest priority,
//           borrowers first, least work lost since checkpoint, newest first),
//           minimised; the preemptor holds the freed room and waits for the victims;
//        c. backfill: a workload blocked by capacity gets a reservation at its
//           earliest start (from the runtime limits of running work; the room
//           of victims goes first to the preemptors waiting for them); later work
//           may use reserved room only if it ends before the reservation starts.
//           When only the end of work without a runtime limit would make room,
//           there is no estimate, and the reason says so;
//        d. otherwise pending, with the numbers of what held it back.
//      StrictFIFO queues stop at the first workload that cannot be admitted.
//   4. Report fragmentation of the capacity left.
#pragma once

#include "common/time.h"
#include "sched/config.h"
#include "sched/plan.h"
#include "sched/snapshot.h"

namespace tessera {

Plan RunCycle(const ClusterSnapshot& snapshot, const SchedulerConfig& config, Timestamp now);

}  // namespace tessera
