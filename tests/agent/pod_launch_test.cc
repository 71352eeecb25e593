// What a Pod object becomes as a process: command, environment, limits.
#include "agent/pod_launch.h"

#include <gtest/gtest.h>

#include <map>

namespace tessera {
namespace {

using nlohmann::json;

std::map<std::string, std::string> EnvOf(const ProcessSpec& spec) {
  std::map<std::string, std::string> env;
  for (const std::string& kv : spec.env) env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  return env;
}

json GangPod(int rank) {
  json container{{"name", "main"},
                 {"command", {"python", "train.py"}},
                 {"args", {"--out=$(OUT)", "$$(literal)"}}};
  container["env"] = json::array({{{"name", "OUT"}, {"value", "/data/$(TESSERA_NAMESPACE)"}}, {{"name", "RANK"}, {"value", "99"}}});
  container["resources"]["limits"] = {{"cpu", "1500m"}, {"memory", "2Gi"}};
  container["resources"]["requests"] = {{"cpu", "1"}};
  json pod;
  pod["metadata"] = {{"name", "train-worker-" + std::to_string(rank)},
                     {"namespace", "team-a"},
                     {"uid", "u-" + std::to_string(rank)},
                     {"labels", {{"tessera.dev/workload", "job-train"}}}};
  pod["metadata"]["annotations"] = {{"tessera.dev/gpu-devices", "2,3"},
                                    {"tessera.dev/gpu-uuids", "GPU-a,GPU-b"},
                                    {"tessera.dev/gpu-milli", "2000"},
                                    {"tessera.dev/rank", std::to_string(rank)},
                                    {"tessera.dev/world-size", "3"}};
  pod["metadata"]["ownerReferences"] = json::array({{{"kind", "Workload"}, {"uid", "wl-uid"}}});
  pod["spec"]["containers"] = json::array({container});
  return pod;
}

PodLaunchContext Ctx() {
  return PodLaunchContext{.node_name = "node-2", .working_dir = "/tmp", .output_path = "/tmp/log",
                          .checkpoint_dir = "/ckpt/team-a/job-train", .master_addr = "10.0.0.5", .local_rank = 1};
}

TEST(PodLaunchTest, GangPodsGetDevicesRanksAndTheirOwnEnvWins) {
  auto spec = PodProcessSpec(GangPod(2), Ctx());
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_EQ(spec->argv, (std::vector<std::string>{"python", "train.py", "--out=/data/team-a", "$(literal)"}));
  const auto env = EnvOf(*spec);
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "2,3");
  EXPECT_EQ(env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  EXPECT_EQ(env.at("NVIDIA_VISIBLE_DEVICES"), "GPU-a,GPU-b");
  EXPECT_EQ(env.at("WORLD_SIZE"), "3");
  EXPECT_EQ(env.at("RANK"), "99") << "the container's own env wins, as in Kubernetes";
  EXPECT_EQ(env.at("LOCAL_RANK"), "1");
  EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.5");
  EXPECT_EQ(env.at("MASTER_PORT"), std::to_string(MasterPort("wl-uid")));
  EXPECT_EQ(env.at("TESSERA_CHECKPOINT_DIR"), "/ckpt/team-a/job-train");
  EXPECT_FALSE(env.count("TESSERA_GPU_FRACTION")) << "whole devices";
  EXPECT_EQ(spec->limits.cpu_millicores, 1500) << "limits, not requests";
  EXPECT_EQ(spec->limits.memory_bytes, int64_t{2} << 30);
  // Every pod of the workload agrees on the master port.
  EXPECT_EQ(EnvOf(*PodProcessSpec(GangPod(0), Ctx())).at("MASTER_PORT"), env.at("MASTER_PORT"));
}

TEST(PodLaunchTest, FractionsAndGpuMemoryAreExported) {
  json pod = GangPod(0);
  pod["metadata"]["annotations"] = {{"tessera.dev/gpu-devices", "1"}, {"tessera.dev/gpu-uuids", "GPU-x"}, {"tessera.dev/gpu-milli", "250"}};
  pod["spec"]["containers"][0]["resources"] = {{"requests", {{"tessera.dev/gpu-memory", "10Gi"}}}};
  pod["spec"]["containers"][0].erase("env");
  const auto env = EnvOf(*PodProcessSpec(pod, Ctx()));
  EXPECT_EQ(env.at("TESSERA_GPU_FRACTION"), "0.25");
  EXPECT_EQ(env.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "25");
  EXPECT_EQ(env.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "1=10240M");
  EXPECT_FALSE(env.count("WORLD_SIZE"));
}

TEST(PodLaunchTest, APodWithoutGpusSeesNone) {
  json pod = GangPod(0);
  pod["metadata"].erase("annotations");
  const auto env = EnvOf(*PodProcessSpec(pod, Ctx()));
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "");
  EXPECT_EQ(env.at("NVIDIA_VISIBLE_DEVICES"), "void");
}

TEST(PodLaunchTest, ImageOnlyAndUnsupportedPodsSayWhy) {
  json pod = GangPod(0);
  pod["spec"]["containers"][0].erase("command");
  pod["spec"]["containers"][0].erase("args");
  pod["spec"]["containers"][0]["image"] = "volcano/example:latest";
  auto spec = PodProcessSpec(pod, Ctx());
  ASSERT_FALSE(spec.has_value());
  EXPECT_EQ(spec.error().message(), kNoOciRuntime);

  json from = GangPod(0);
  from["spec"]["containers"][0]["env"] = {{{"name", "X"}, {"valueFrom", {{"secretKeyRef", {{"name", "s"}}}}}}};
  spec = PodProcessSpec(from, Ctx());
  ASSERT_FALSE(spec.has_value());
  EXPECT_NE(spec.error().message().find("valueFrom"), std::string::npos);
}

TEST(PodLaunchTest, PathPartsCannotEscape) {
  EXPECT_EQ(SafePathPart("../etc"), ".._etc");
  EXPECT_EQ(SafePathPart(".."), "_..");
  EXPECT_EQ(SafePathPart("a/b c"), "a_b_c");
}

}  // namespace
}  // namespace tessera
