// `tessera queues`: quota and usage per ClusterQueue, flavor and resource.
#include <gtest/gtest.h>

#include "cli/commands/queues_command.h"
#include "cli/commands/submit_command.h"
#include "tests/cli/cli_test_fixture.h"

namespace tessera {
namespace {

class QueuesTest : public CliTest {
 protected:
  CommandRun Queues(QueuesOptions options = {}) {
    return Run([&](const CommandContext& ctx) { return RunQueues(ctx, options); });
  }
};

// The seed's queue has two flavors with 16 and 8 nominal GPUs; GPUs come first
// in each flavor, and the queue's name is printed on its first row only.
TEST_F(QueuesTest, SeedQueueShowsBothFlavors) {
  ApplySeed();
  CommandRun r = Queues({.names = {"gpu-cluster-queue"}});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto rows = ParseTable(r.out);
  ASSERT_EQ(rows.size(), 6u) << r.out;  // 2 flavors x (nvidia.com/gpu, cpu, memory)
  EXPECT_EQ(rows[0].at("CLUSTERQUEUE"), "gpu-cluster-queue");
  EXPECT_EQ(rows[0].at("COHORT"), "<none>");
  EXPECT_EQ(rows[0].at("FLAVOR"), "a100-spot");
  EXPECT_EQ(rows[0].at("RESOURCE"), "nvidia.com/gpu");
  EXPECT_EQ(rows[0].at("NOMINAL"), "16");
  EXPECT_EQ(rows[0].at("RESERVED"), "0");  // no lendingLimit: all of it may be lent
  EXPECT_EQ(rows[0].at("USED"), "0");
  EXPECT_EQ(rows[0].at("BORROWED"), "0");
  EXPECT_EQ(rows[1].at("CLUSTERQUEUE"), "");
  EXPECT_EQ(rows[1].at("RESOURCE"), "cpu");
  EXPECT_EQ(rows[1].at("NOMINAL"), "128");
  EXPECT_EQ(rows[2].at("NOMINAL"), "512Gi");
  EXPECT_EQ(rows[3].at("FLAVOR"), "a100-ondemand");
  EXPECT_EQ(rows[3].at("RESOURCE"), "nvidia.com/gpu");
  EXPECT_EQ(rows[3].at("NOMINAL"), "8");
}

// Nominal quota with lendingLimit 0 is a capacity reservation: RESERVED shows
// the part never lent (nominal - lendingLimit); without a lendingLimit, none.
TEST_F(QueuesTest, LendingLimitShowsAsReserved) {
  ASSERT_EQ(ApplyText(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: serving}
spec:
  cohort: shared
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8, lendingLimit: 0}
      - {name: cpu, nominalQuota: 64, lendingLimit: 16}
)").rc, 0);
  CommandRun r = Queues({.names = {"serving"}});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto rows = ParseTable(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_EQ(rows[0].at("RESERVED"), "8");   // lendingLimit 0: all 8 GPUs kept for serving
  EXPECT_EQ(rows[1].at("RESERVED"), "48");  // 64 - 16 lendable
}

// Without names, every ClusterQueue is listed, sorted by name.
TEST_F(QueuesTest, AllQueues) {
  ApplySeed();
  CommandRun r = Queues();
  ASSERT_EQ(r.rc, 0) << r.err;
  std::vector<std::string> queues;
  for (const auto& row : ParseTable(r.out)) {
    if (!row.at("CLUSTERQUEUE").empty()) queues.push_back(row.at("CLUSTERQUEUE"));
  }
  EXPECT_EQ(queues, (std::vector<std::string>{"default", "gpu-cluster-queue"}));
}

// Admitted work shows as USED in its flavor, GPUs as users write them (0.25).
TEST_F(QueuesTest, UsageFromStatus) {
  RegisterNode("gpu-node-1", "8xH100-80GB");
  ASSERT_EQ(Run([](const CommandContext& ctx) {
              return RunSubmit(ctx, {.name = "nb", .queue = "default", .gpu = "0.25", .command = {"jupyter"}});
            }).rc,
            0);
  std::vector<std::map<std::string, std::string>> rows;
  ASSERT_TRUE(Eventually([&] {
    rows = ParseTable(Queues({.names = {"default"}}).out);
    return !rows.empty() && rows[0].at("USED") == "0.25";
  })) << "the scheduler loop did not report usage";
  EXPECT_EQ(rows[0].at("RESOURCE"), "nvidia.com/gpu");
  EXPECT_EQ(rows[0].at("ADMITTED"), "1");
  EXPECT_EQ(rows[1].at("RESOURCE"), "cpu");
  EXPECT_EQ(rows[1].at("USED"), "1");    // the default --cpu
  EXPECT_EQ(rows[2].at("USED"), "4Gi");  // the default --memory
}

// A ClusterQueue that does not exist is reported in kubectl's words (exit 1).
TEST_F(QueuesTest, MissingQueue) {
  CommandRun r = Queues({.names = {"nope"}});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error from server (NotFound): clusterqueues.kueue.x-k8s.io \"nope\" not found\n");
}

}  // namespace
}  // namespace tessera
