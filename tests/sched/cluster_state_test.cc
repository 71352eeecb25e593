// ClusterState and CapacityState: indexes stay exact through takes and rollbacks.
#include "sched/cluster_state.h"

#include <gtest/gtest.h>

#include "sched/snapshot_builder.h"

namespace tessera {
namespace {

ClusterSnapshot TwoNodes() {
  SnapshotBuilder b;
  b.AddFlavor(ResourceFlavor{.name = "default"});
  for (const char* name : {"n0", "n1"}) {
    Node n{.name = name, .cpu_milli = 8000, .memory_bytes = int64_t{64} << 30};
    for (int g = 0; g < 4; ++g) n.gpus.push_back(GpuDevice{.index = g, .memory_bytes = int64_t{80} << 30});
    b.AddNode(n);
  }
  return b.Build();
}

TEST(ClusterStateTest, IndexesFollowDeviceTakes) {
  // Two nodes of 4 free GPUs: both in bucket 4; a fraction on n0 moves it to bucket 3.
  const ClusterSnapshot s = TwoNodes();
  ClusterState state(s, SchedulerConfig{});
  const auto& idx = state.capacity().flavor(0);
  EXPECT_EQ(idx.by_whole_free[4].size(), 2u);
  EXPECT_EQ(idx.whole_free, 8);
  state.TakeDevice(0, 250);
  EXPECT_EQ(idx.by_whole_free[4].size(), 1u);
  EXPECT_EQ(idx.by_whole_free[3].count(0), 1u);
  EXPECT_EQ(idx.partial.size(), 1u);
  EXPECT_EQ(idx.partial.begin()->first, 750);  // 1000 - 250 free on device 0
  EXPECT_EQ(idx.free_milli, 7750);             // 8000 - 250
  EXPECT_EQ(state.capacity().LargestWholeBlock(0), 4);
}

TEST(ClusterStateTest, RollbackRestoresEverything) {
  const ClusterSnapshot s = TwoNodes();
  ClusterState state(s, SchedulerConfig{});
  const auto before = state.capacity().Fragmentation();
  const size_t cp = state.Checkpoint();
  state.TakeDevice(0, 1000);
  state.TakeDevice(1, 500);
  state.TakeNode(0, 2000, int64_t{8} << 30);
  state.TakeDevice(4, 1000);
  state.Rollback(cp);
  const auto after = state.capacity().Fragmentation();
  EXPECT_EQ(after.free_gpu_milli, before.free_gpu_milli);
  EXPECT_EQ(after.whole_free_gpus, 8);
  EXPECT_EQ(state.capacity().node(0).free_cpu, 8000);
  EXPECT_TRUE(state.capacity().flavor(0).partial.empty());
  EXPECT_EQ(state.capacity().flavor(0).by_whole_free[4].size(), 2u);
}

TEST(ClusterStateTest, FragmentationCountsStrandedFractions) {
  // Device 0 at 0.75 used, device 1 at 0.5 used: 0.25 + 0.5 stranded of 6.75 free.
  const ClusterSnapshot s = TwoNodes();
  ClusterState state(s, SchedulerConfig{});
  state.TakeDevice(0, 750);
  state.TakeDevice(1, 500);
  const auto f = state.capacity().Fragmentation();
  EXPECT_EQ(f.free_gpu_milli, 6750);
  EXPECT_EQ(f.stranded_gpu_milli, 750);
  EXPECT_EQ(f.partly_used_devices, 2);
  EXPECT_EQ(f.FragmentationMilli(), 111);  // 750 * 1000 / 6750 = 111
}

}  // namespace
}  // namespace tessera
