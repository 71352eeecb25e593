// DemandProfile and NodeFragmentation: FGD's per-shape measure, and the free GPU
// a node's CPU cannot carry at the demand's CPU per GPU.
#include "sched/demand_profile.h"

#include <array>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace tessera {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(DemandProfileTest, CpuPerGpuCountsEveryPod) {
  // 10 pods of 1 GPU + 8 cores and 10 CPU-only pods of 8 cores: 10 GPUs need 160
  // cores, so 16 cores carry one GPU.
  DemandProfile p;
  p.Add(1000, 8000, kGiB, 10);
  p.Add(0, 8000, kGiB, 10);
  p.Finish();
  ASSERT_EQ(p.shapes().size(), 1u);  // the CPU-only pods are no GPU shape
  EXPECT_EQ(p.total_weight(), 10);
  EXPECT_EQ(p.GpuCarriedBy(16000), 1000);
  EXPECT_EQ(p.GpuCarriedBy(4000), 250);
  EXPECT_EQ(p.GpuCarriedBy(0), 0);
}

TEST(DemandProfileTest, NoCpuDemandCarriesAnything) {
  DemandProfile p;
  p.Add(500, 0, 0, 3);
  p.Finish();
  EXPECT_EQ(p.GpuCarriedBy(0), std::numeric_limits<int64_t>::max());
  // One fraction shape of 500: a device with 300 free is fragmented for it.
  const std::array<int64_t, 2> free = {300, 1000};
  EXPECT_EQ(NodeFragmentation(NodeFree{.cpu_milli = 0, .memory_bytes = 0, .device_free_milli = free}, p),
            3 * 300);
}

TEST(DemandProfileTest, GpuBeyondTheCpuIsFragmented) {
  // Shape: 1 GPU + 8 cores (weight 2); demand 8 cores per GPU.
  DemandProfile p;
  p.Add(1000, 8000, kGiB, 2);
  p.Finish();
  const std::array<int64_t, 4> free = {1000, 1000, 1000, 1000};
  // 32 cores carry all 4 free GPUs: nothing fragmented.
  EXPECT_EQ(NodeFragmentation(NodeFree{32000, 64 * kGiB, free}, p), 0);
  // 16 cores carry 2 of them: 2 GPUs stranded, counted for every shape (weight 2).
  EXPECT_EQ(NodeFragmentation(NodeFree{16000, 64 * kGiB, free}, p), 2 * 2000);
  // 4 cores: the shape does not fit (2 x 4000 free) and 3.5 GPUs are beyond the
  // CPU (2 x 3500).
  EXPECT_EQ(NodeFragmentation(NodeFree{4000, 64 * kGiB, free}, p), 2 * 4000 + 2 * 3500);
}

TEST(DemandProfileTest, PlacementPrefersTheNodeWhoseCpuMatches) {
  // The same GPU pod (1 GPU + 24 cores) on a CPU-poor node (8 GPUs, 96 cores)
  // or a CPU-rich one (2 GPUs, 104 cores); demand 12 cores per GPU. The poor
  // node's leftover 72 cores carry 6 of its 7 GPUs; the rich one's 80 cores
  // carry its last GPU: the rich node's fragmentation grows less.
  DemandProfile p;
  p.Add(1000, 12000, kGiB, 4);
  p.Finish();
  const std::array<int64_t, 8> poor_before = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
  const std::array<int64_t, 8> poor_after = {0, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
  const std::array<int64_t, 2> rich_before = {1000, 1000};
  const std::array<int64_t, 2> rich_after = {0, 1000};
  const int64_t poor = NodeFragmentation(NodeFree{72000, 512 * kGiB, poor_after}, p) -
                       NodeFragmentation(NodeFree{96000, 512 * kGiB, poor_before}, p);
  const int64_t rich = NodeFragmentation(NodeFree{80000, 512 * kGiB, rich_after}, p) -
                       NodeFragmentation(NodeFree{104000, 512 * kGiB, rich_before}, p);
  EXPECT_EQ(poor, 4 * 1000);  // 7 free, 72 cores carry 6: 1 GPU stranded x weight 4
  EXPECT_EQ(rich, 0);
  EXPECT_LT(rich, poor);
}

}  // namespace
}  // namespace tessera
