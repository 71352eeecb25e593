// `tessera sim` as a user runs it: a trace file, a cluster, a policy file or the
// default one; the table it prints, the files it writes, and its errors.
#include "cli/sim_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/testing/test_dirs.h"
#include "tests/testing/read_file.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

struct SimRun {
  int code = 0;
  std::string out, err;
};

SimRun RunSim(const SimCommandOptions& options) {
  std::ostringstream out, err;
  SimRun r;
  r.code = RunSimCommand(options, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

using testing::ReadFile;

class SimCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("tessera-sim-cli");
    // Two teams on 8 GPUs: a's long whole-GPU jobs, b's fractions later.
    std::ofstream trace(dir_ / "trace.csv");
    trace << "name,submit_time,duration,gpus,team\n";
    for (int i = 0; i < 12; ++i) trace << "a" << i << "," << i * 10 << ",600,1,a\n";
    for (int i = 0; i < 8; ++i) trace << "b" << i << "," << 30 + i << ",300,0.5,b\n";
    trace << "bad,x,1,1,a\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  SimCommandOptions Options() const {
    SimCommandOptions o;
    o.trace = (dir_ / "trace.csv").string();
    o.format = "csv";
    o.cluster = "1x8xA100-80GB";
    return o;
  }

  fs::path dir_;
};

TEST_F(SimCommandTest, ComparesThePoliciesAndWritesTheReport) {
  SimCommandOptions o = Options();
  o.out = (dir_ / "report").string();
  o.teams = true;
  SimRun r = RunSim(o);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("20 jobs (21 rows, 1 skipped); cluster: 1 nodes, 8 GPUs, 2 ClusterQueues"));
  EXPECT_THAT(r.out, HasSubstr("POLICY       JOBS   FINISHED   ALLOCATED"));
  for (const char* policy : {"static ", "borrowing ", "fractional ", "preemption "}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("\n") + policy)) << policy;
  }
  EXPECT_THAT(r.out, HasSubstr("TEAM"));  // the per-team table
  EXPECT_THAT(r.err, HasSubstr("warning: line 22: "));
  for (const char* file : {"summary.csv", "teams.csv", "jobs-static.csv", "timeseries-preemption.csv",
                           "allocation.svg", "queue.svg", "jct_cdf.svg"}) {
    EXPECT_TRUE(fs::exists(dir_ / "report" / file)) << file;
  }
  const std::string summary = ReadFile(dir_ / "report" / "summary.csv");
  EXPECT_THAT(summary, HasSubstr("policy,jobs,finished,unfinished,dropped,left_out,allocation_pct"));
  EXPECT_THAT(summary, HasSubstr("\nstatic,20,20,0,0,0,"));
  EXPECT_EQ(ReadFile(dir_ / "report" / "jct_cdf.svg").rfind("<svg", 0), 0u);
}

TEST_F(SimCommandTest, StrictRefusesTheMalformedRow) {
  SimCommandOptions o = Options();
  o.strict = true;
  SimRun r = RunSim(o);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("error: "));
  EXPECT_THAT(r.err, HasSubstr("line 22"));
}

TEST_F(SimCommandTest, ErrorsSayWhatToFix) {
  SimCommandOptions o = Options();
  o.cluster = "8xA100";
  SimRun r = RunSim(o);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("is not NODESxGPUSxMODEL"));

  o = Options();
  o.policies = {"static", "magic"};
  r = RunSim(o);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown policy \"magic\""));

  o = Options();
  o.since = "2017-10-01";  // the csv format has no wall clock
  r = RunSim(o);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("no wall clock"));

  o = Options();
  o.format = "slurm";
  r = RunSim(o);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("slurm"));
}

TEST_F(SimCommandTest, AWindowKeepsOnlyItsJobs) {
  SimCommandOptions o = Options();
  o.since = "30s";
  o.until = "60s";
  o.policies = {"borrowing"};
  SimRun r = RunSim(o);
  ASSERT_EQ(r.code, 0) << r.err;
  // a3..a5 (30, 40, 50) and all eight b jobs (30..37).
  EXPECT_THAT(r.out, HasSubstr(": 11 jobs"));
}

TEST_F(SimCommandTest, APolicyFileNamesTheQueues) {
  std::ofstream policy(dir_ / "policy.yaml");
  policy << "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: default}\n---\n"
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: shared}\nspec:\n"
            "  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
            "    - name: default\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 8}\n---\n"
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: a, namespace: a}\n"
            "spec: {clusterQueue: shared}\n";
  policy.close();
  SimCommandOptions o = Options();
  o.policy = (dir_ / "policy.yaml").string();
  o.policies = {"configured"};
  SimRun r = RunSim(o);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 ClusterQueues"));
  // Team b has no queue of its own; the policy's only LocalQueue takes it.
  EXPECT_THAT(r.out, HasSubstr("\nconfigured   20 "));
}

}  // namespace
}  // namespace tessera
