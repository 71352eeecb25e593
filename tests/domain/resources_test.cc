#include "domain/resources.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace tessera {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;  // 2^30 bytes

// Named amounts, in the units of resources.h (CPU and GPU in milli, memory in bytes).
struct Amounts {
  int64_t cpu = 0, memory = 0, gpu = 0, gpu_memory = 0, pods = 0;
};

// Make({.cpu = 2000, .gpu = 250}): unnamed kinds are zero.
Resources Make(Amounts a) {
  Resources r;
  r.set(ResourceKind::kCpu, a.cpu);
  r.set(ResourceKind::kMemory, a.memory);
  r.set(ResourceKind::kGpu, a.gpu);
  r.set(ResourceKind::kGpuMemory, a.gpu_memory);
  r.set(ResourceKind::kPods, a.pods);
  return r;
}

// ============================================================================
// Accessors.
// ============================================================================

// A default Resources is zero in every kind.
TEST(ResourcesTest, DefaultIsZero) {
  Resources r;
  EXPECT_TRUE(r.IsZero());
  for (ResourceKind k : kAllResourceKinds) EXPECT_EQ(r.get(k), 0);
}

// Of() sets exactly one kind; the named accessors read their kinds.
TEST(ResourcesTest, OfSetsOneKind) {
  Resources r = Resources::Of(ResourceKind::kGpu, 250);
  EXPECT_EQ(r.gpu(), 250);
  EXPECT_EQ(r.cpu(), 0);
  EXPECT_EQ(r.memory(), 0);
  EXPECT_FALSE(r.IsZero());
}

// at() gives a writable reference to one component.
TEST(ResourcesTest, AtIsWritable) {
  Resources r;
  r.at(ResourceKind::kPods) += 3;
  EXPECT_EQ(r.get(ResourceKind::kPods), 3);
}

// ============================================================================
// FitsIn.
// ============================================================================

// A request equal to capacity fits (the comparison is <=).
TEST(ResourcesFitsInTest, EqualFits) {
  Resources cap = Make({.cpu = 8000, .memory = 64 * kGi, .gpu = 4000});
  EXPECT_TRUE(cap.FitsIn(cap));
}

// A request below capacity in every kind fits.
TEST(ResourcesFitsInTest, SmallerFits) {
  Resources req = Make({.cpu = 2000, .memory = 16 * kGi, .gpu = 250});
  Resources cap = Make({.cpu = 8000, .memory = 64 * kGi, .gpu = 4000});
  EXPECT_TRUE(req.FitsIn(cap));
}

// One kind over capacity is enough not to fit, even when all others are far below.
TEST(ResourcesFitsInTest, OneKindOverDoesNotFit) {
  Resources cap = Make({.cpu = 8000, .memory = 64 * kGi, .gpu = 4000, .pods = 10});
  EXPECT_FALSE(Make({.gpu = 4001}).FitsIn(cap));          // 4001m > 4000m
  EXPECT_FALSE(Make({.cpu = 8001}).FitsIn(cap));          // 8001m > 8000m
  EXPECT_FALSE(Make({.memory = 64 * kGi + 1}).FitsIn(cap));
  EXPECT_FALSE(Make({.pods = 11}).FitsIn(cap));
  EXPECT_FALSE(Make({.gpu_memory = 1}).FitsIn(cap));      // capacity has no GPU memory
}

// Zero fits in zero capacity; anything non-zero does not.
TEST(ResourcesFitsInTest, ZeroCapacity) {
  EXPECT_TRUE(Resources().FitsIn(Resources()));
  EXPECT_FALSE(Resources::Of(ResourceKind::kCpu, 1).FitsIn(Resources()));
}

// FitsIn is not symmetric: a larger capacity does not fit in a smaller request.
TEST(ResourcesFitsInTest, NotSymmetric) {
  Resources small = Make({.cpu = 1000});
  Resources big = Make({.cpu = 2000});
  EXPECT_TRUE(small.FitsIn(big));
  EXPECT_FALSE(big.FitsIn(small));
}

// ============================================================================
// Arithmetic.
// ============================================================================

// + adds component-wise.
TEST(ResourcesArithmeticTest, AddIsComponentWise) {
  Resources sum = Make({.cpu = 1000, .gpu = 250}) + Make({.cpu = 500, .memory = kGi, .gpu = 750});
  EXPECT_EQ(sum, Make({.cpu = 1500, .memory = kGi, .gpu = 1000}));  // 1000+500, 0+2^30, 250+750
}

// - subtracts component-wise.
TEST(ResourcesArithmeticTest, SubtractIsComponentWise) {
  Resources diff = Make({.cpu = 4000, .memory = 8 * kGi, .gpu = 2000, .pods = 3}) -
                   Make({.cpu = 1500, .memory = 2 * kGi, .gpu = 500, .pods = 1});
  EXPECT_EQ(diff, Make({.cpu = 2500, .memory = 6 * kGi, .gpu = 1500, .pods = 2}));
  // 4000-1500, 8Gi-2Gi, 2000-500, 3-1
}

// Subtracting more than is there goes negative (callers check FitsIn first).
TEST(ResourcesArithmeticTest, SubtractCanGoNegative) {
  Resources diff = Make({.gpu = 250}) - Make({.gpu = 1000});
  EXPECT_EQ(diff.gpu(), -750);  // 250 - 1000
}

// += and -= modify in place and undo each other.
TEST(ResourcesArithmeticTest, CompoundAssignmentUndoes) {
  Resources a = Make({.cpu = 1000, .memory = kGi});
  const Resources b = Make({.cpu = 300, .gpu = 500});
  Resources before = a;
  a += b;
  EXPECT_EQ(a, Make({.cpu = 1300, .memory = kGi, .gpu = 500}));  // 1000+300, 2^30, 0+500
  a -= b;
  EXPECT_EQ(a, before);
}

// * scales every component by an integer (a gang of n identical pods).
TEST(ResourcesArithmeticTest, MultiplyScalesEveryComponent) {
  Resources pod = Make({.cpu = 2000, .memory = 16 * kGi, .gpu = 1000, .pods = 1});
  EXPECT_EQ(pod * 4, Make({.cpu = 8000, .memory = 64 * kGi, .gpu = 4000, .pods = 4}));
  // 4 * 2000, 4 * 16Gi, 4 * 1000, 4 * 1
  EXPECT_TRUE((pod * 0).IsZero());
}

// == compares every component.
TEST(ResourcesArithmeticTest, EqualityComparesAllKinds) {
  EXPECT_EQ(Make({.cpu = 1, .pods = 2}), Make({.cpu = 1, .pods = 2}));
  EXPECT_NE(Make({.cpu = 1, .pods = 2}), Make({.cpu = 1, .pods = 3}));
  EXPECT_NE(Make({.gpu_memory = 1}), Resources());
}

// ============================================================================
// DominantShareMilli.
// ============================================================================

// The dominant share is the largest per-kind share, in thousandths.
TEST(DominantShareTest, LargestShareWins) {
  Resources used = Make({.cpu = 2000, .memory = 16 * kGi, .gpu = 3000});
  Resources cap = Make({.cpu = 8000, .memory = 64 * kGi, .gpu = 4000});
  // cpu 2000*1000/8000 = 250, memory 16Gi*1000/64Gi = 250, gpu 3000*1000/4000 = 750
  EXPECT_EQ(used.DominantShareMilli(cap), 750);
}

// Kinds with zero capacity are ignored rather than dividing by zero.
TEST(DominantShareTest, ZeroCapacityKindsIgnored) {
  Resources used = Make({.cpu = 1000, .gpu = 2000, .pods = 7});
  Resources cap = Make({.cpu = 4000});
  // cpu 1000*1000/4000 = 250; gpu and pods have no capacity and do not count
  EXPECT_EQ(used.DominantShareMilli(cap), 250);
}

// With no capacity at all, the share is 0.
TEST(DominantShareTest, NoCapacityIsZero) {
  EXPECT_EQ(Make({.cpu = 1000}).DominantShareMilli(Resources()), 0);
}

// Nothing used is a share of 0.
TEST(DominantShareTest, NothingUsedIsZero) {
  EXPECT_EQ(Resources().DominantShareMilli(Make({.cpu = 1000, .gpu = 1000})), 0);
}

// The share is truncated toward zero.
TEST(DominantShareTest, Truncates) {
  // 1000 * 1000 / 3000 = 333.3 -> 333
  EXPECT_EQ(Make({.gpu = 1000}).DominantShareMilli(Make({.gpu = 3000})), 333);
  // 2 * 1000 / 3 = 666.6 -> 666
  EXPECT_EQ(Make({.pods = 2}).DominantShareMilli(Make({.pods = 3})), 666);
}

// Use above capacity (borrowing) gives a share above 1000.
TEST(DominantShareTest, AboveCapacityExceedsThousand) {
  // 6000 * 1000 / 4000 = 1500
  EXPECT_EQ(Make({.gpu = 6000}).DominantShareMilli(Make({.gpu = 4000})), 1500);
}

// Memory in bytes times 1000 would overflow int64; the share is still exact.
TEST(DominantShareTest, LargeMemoryDoesNotOverflow) {
  constexpr int64_t kEi = int64_t{1} << 60;  // 2^60 bytes; 2^60 * 1000 ~ 1.15e21 > 9.2e18
  Resources used = Make({.memory = kEi});
  Resources cap = Make({.memory = 2 * kEi});
  EXPECT_EQ(used.DominantShareMilli(cap), 500);  // 2^60 * 1000 / 2^61
  // 7Ei used of 7.5Ei: 7 * 2^60 * 1000 ~ 8.1e21, also far beyond int64
  Resources used2 = Make({.memory = 7 * kEi});
  Resources cap2 = Make({.memory = 7 * kEi + kEi / 2});
  EXPECT_EQ(used2.DominantShareMilli(cap2), 933);  // 7000 / 7.5 = 933.3 -> 933
}

// A realistic node: 2Ti of memory at full use is exactly 1000.
TEST(DominantShareTest, FullTerabyteNodeIsThousand) {
  constexpr int64_t kTi = int64_t{1} << 40;
  EXPECT_EQ(Make({.memory = 2 * kTi}).DominantShareMilli(Make({.memory = 2 * kTi})), 1000);
}

// ============================================================================
// ToString and names.
// ============================================================================

// Zero resources print as "none".
TEST(ResourcesToStringTest, ZeroIsNone) { EXPECT_EQ(Resources().ToString(), "none"); }

// Non-zero components print in kind order with each kind's user-facing unit; zeros omitted.
TEST(ResourcesToStringTest, PrintsNonZeroInUserUnits) {
  Resources r = Make({.cpu = 2000, .memory = 64 * kGi, .gpu = 250});
  EXPECT_EQ(r.ToString(), "cpu=2, memory=64Gi, nvidia.com/gpu=0.25");
}

// Every kind appears with its own formatting.
TEST(ResourcesToStringTest, AllKinds) {
  Resources r = Make({.cpu = 500, .memory = 1500000000, .gpu = 4000, .gpu_memory = 40 * kGi,
                      .pods = 3});
  EXPECT_EQ(r.ToString(),
            "cpu=500m, memory=1500M, nvidia.com/gpu=4, tessera.dev/gpu-memory=40Gi, pods=3");
}

// FormatAmount uses milli for CPU, decimals for GPU, suffixed bytes for memory, counts for pods.
TEST(FormatAmountTest, PerKindUnits) {
  EXPECT_EQ(FormatAmount(ResourceKind::kCpu, 1500), "1500m");
  EXPECT_EQ(FormatAmount(ResourceKind::kGpu, 1500), "1.5");
  EXPECT_EQ(FormatAmount(ResourceKind::kMemory, 2048), "2Ki");        // 2 * 2^10
  EXPECT_EQ(FormatAmount(ResourceKind::kGpuMemory, 80 * kGi), "80Gi");
  EXPECT_EQ(FormatAmount(ResourceKind::kPods, 1024), "1024");         // a count, never "1Ki"
}

// Each kind has its Kubernetes name.
TEST(ResourceNameTest, Names) {
  EXPECT_EQ(ResourceName(ResourceKind::kCpu), "cpu");
  EXPECT_EQ(ResourceName(ResourceKind::kMemory), "memory");
  EXPECT_EQ(ResourceName(ResourceKind::kGpu), "nvidia.com/gpu");
  EXPECT_EQ(ResourceName(ResourceKind::kGpuMemory), "tessera.dev/gpu-memory");
  EXPECT_EQ(ResourceName(ResourceKind::kPods), "pods");
}

// ParseResourceName(ResourceName(k)) == k for every kind.
TEST(ResourceNameTest, RoundTrip) {
  for (ResourceKind k : kAllResourceKinds) {
    auto parsed = ParseResourceName(ResourceName(k));
    ASSERT_TRUE(parsed.has_value()) << ResourceName(k);
    EXPECT_EQ(*parsed, k);
  }
}

// Unknown, abbreviated or differently cased names do not parse.
TEST(ResourceNameTest, UnknownNamesRejected) {
  for (std::string_view name : {"", "gpu", "CPU", "Memory", "nvidia.com/GPU", "cpu ", "unknown"}) {
    EXPECT_FALSE(ParseResourceName(name).has_value()) << name;
  }
}

}  // namespace
}  // namespace tessera
