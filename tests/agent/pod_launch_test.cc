// What a Pod object becomes as a process: command, environment, limits.
#include "agent/pod_launch.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

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

// Namespace team-a's uid block: 1000010000-1000019999.
constexpr UidRange kTeamA{1'000'010'000, 10'000};

PodLaunchContext Ctx() {
  return PodLaunchContext{.node_name = "node-2", .working_dir = "/tmp", .output_path = "/tmp/log",
                          .checkpoint_dir = "/ckpt/team-a/job-train", .master_addr = "10.0.0.5", .local_rank = 1,
                          .uid_range = kTeamA};
}

// A pod of team-a with securityContext `pod_sc` on the pod and `container_sc` on its container.
json PodWithSecurityContext(json pod_sc, json container_sc) {
  json pod = GangPod(0);
  if (!pod_sc.is_null()) pod["spec"]["securityContext"] = std::move(pod_sc);
  if (!container_sc.is_null()) pod["spec"]["containers"][0]["securityContext"] = std::move(container_sc);
  return pod;
}

TEST(PodLaunchTest, APodRunsAsTheFirstUidOfItsNamespacesBlockWithItsHomeInItsWorkingDirectory) {
  // No securityContext: uid and gid 1000010000, HOME the working directory, never the agent's.
  auto spec = PodProcessSpec(PodWithSecurityContext(nullptr, nullptr), Ctx());
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_EQ(spec->uid, 1'000'010'000u);
  EXPECT_EQ(spec->gid, 1'000'010'000u);
  EXPECT_EQ(EnvOf(*spec).at("HOME"), "/tmp");
}

TEST(PodLaunchTest, RunAsUserWithinTheBlockIsHonouredTheContainersOverThePods) {
  // Pod: 1000010005/1000010006; container: runAsUser 1000010007 (its group stays the pod's).
  auto spec = PodProcessSpec(PodWithSecurityContext({{"runAsUser", 1'000'010'005}, {"runAsGroup", 1'000'010'006}},
                                                    {{"runAsUser", 1'000'010'007}}),
                             Ctx());
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_EQ(spec->uid, 1'000'010'007u);
  EXPECT_EQ(spec->gid, 1'000'010'006u);
}

TEST(PodLaunchTest, RunAsUserOutsideTheBlockIsRefusedWithTheBlock) {
  // Root, or another team's uid, is refused, saying which ids the namespace has.
  for (int64_t uid : {int64_t{0}, int64_t{1'000'020'000}}) {
    auto spec = PodProcessSpec(PodWithSecurityContext({{"runAsUser", uid}}, nullptr), Ctx());
    ASSERT_FALSE(spec.has_value()) << uid;
    EXPECT_EQ(spec.error().message(),
              fmt::format("securityContext.runAsUser {} is not allowed in namespace team-a: its pods run as ids "
                          "1000010000-1000019999 (annotation tessera.dev/uid-range); leave it unset or pick one of those",
                          uid));
  }
  auto group = PodProcessSpec(PodWithSecurityContext(nullptr, {{"runAsGroup", 0}}), Ctx());
  ASSERT_FALSE(group.has_value());
  EXPECT_NE(group.error().message().find("securityContext.runAsGroup 0 is not allowed"), std::string::npos);
}

TEST(PodLaunchTest, WithoutABlockAPodCannotRunAsAnyone) {
  // A namespace the server has not given a block yet: no uid to run as.
  PodLaunchContext ctx = Ctx();
  ctx.uid_range.reset();
  auto spec = PodProcessSpec(PodWithSecurityContext(nullptr, nullptr), ctx);
  ASSERT_FALSE(spec.has_value());
  EXPECT_NE(spec.error().message().find("namespace team-a has no uid range yet"), std::string::npos);
}

TEST(PodLaunchTest, PodUserIsTheDefaultForPodsThatDoNotSay) {
  // --pod-user 65534:65534: pods without runAsUser run as it; one that asks, within the block, as it asks.
  PodLaunchContext ctx = Ctx();
  ctx.default_user = std::pair<uint32_t, uint32_t>{65534, 65534};
  auto spec = PodProcessSpec(PodWithSecurityContext(nullptr, nullptr), ctx);
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_EQ(spec->uid, 65534u);
  EXPECT_EQ(spec->gid, 65534u);
  auto asks = PodProcessSpec(PodWithSecurityContext({{"runAsUser", 1'000'010'001}}, nullptr), ctx);
  ASSERT_TRUE(asks.has_value()) << asks.error().ToString();
  EXPECT_EQ(asks->uid, 1'000'010'001u);
}

TEST(PodLaunchTest, AnAgentThatIsNotRootRunsPodsAsItself) {
  // switch_user false: no uid, no gid, HOME untouched.
  PodLaunchContext ctx = Ctx();
  ctx.switch_user = false;
  auto spec = PodProcessSpec(PodWithSecurityContext({{"runAsUser", 0}}, nullptr), ctx);
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_FALSE(spec->uid.has_value());
  EXPECT_FALSE(EnvOf(*spec).count("HOME"));
}

TEST(PodLaunchTest, TheTokenFileAndServerAreInTheEnvironment) {
  // TESSERA_TOKEN_FILE names the pod's ServiceAccount token and TESSERA_SERVER
  // the server it is for, so that `tessera` in the pod calls the API as the
  // pod (in its namespace, TESSERA_NAMESPACE); without them, they are not set.
  PodLaunchContext ctx = Ctx();
  ctx.token_file = "/var/lib/tessera/pods/x/serviceaccount/token";
  ctx.server = "https://10.0.0.1:7070";
  const auto env = EnvOf(*PodProcessSpec(GangPod(0), ctx));
  EXPECT_EQ(env.at("TESSERA_TOKEN_FILE"), ctx.token_file);
  EXPECT_EQ(env.at("TESSERA_SERVER"), ctx.server);
  EXPECT_FALSE(env.at("TESSERA_NAMESPACE").empty());
  EXPECT_FALSE(EnvOf(*PodProcessSpec(GangPod(0), Ctx())).count("TESSERA_TOKEN_FILE"));
  EXPECT_FALSE(EnvOf(*PodProcessSpec(GangPod(0), Ctx())).count("TESSERA_SERVER"));
}

TEST(PodLaunchTest, PodUserParsesUidOrUidAndGid) {
  EXPECT_EQ(*ParsePodUser("65534"), (std::pair<uint32_t, uint32_t>{65534, 65534}));
  EXPECT_EQ(*ParsePodUser("1000:100"), (std::pair<uint32_t, uint32_t>{1000, 100}));
  for (const char* bad : {"", "nobody", "1000:", ":1000", "-1", "4294967295", "1:2:3"}) {
    EXPECT_FALSE(ParsePodUser(bad).has_value()) << bad;
  }
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

  // An image and a command: the command is the image's, so it does not run on the host either.
  json both = GangPod(0);
  both["spec"]["containers"][0]["image"] = "busybox:1.36";
  spec = PodProcessSpec(both, Ctx());
  ASSERT_FALSE(spec.has_value());
  EXPECT_EQ(spec.error().message(), kNoOciRuntime);

  // An empty image is no image: a process pod.
  json empty = GangPod(0);
  empty["spec"]["containers"][0]["image"] = "";
  EXPECT_TRUE(PodProcessSpec(empty, Ctx()).has_value());

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

TEST(PodLaunchTest, VariablesFromSecretsAndFieldsAreMadePlainAsTheKubeletMakesThem) {
  json pod = GangPod(0);
  pod["spec"]["nodeName"] = "node-2";
  json& c = pod["spec"]["containers"][0];
  c["envFrom"] = {{{"secretRef", {{"name", "db"}}}, {"prefix", "DB_"}}};
  c["env"] = {{{"name", "TOKEN"}, {"valueFrom", {{"secretKeyRef", {{"name", "api"}, {"key", "token"}}}}}},
              {{"name", "ME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
              {{"name", "HOST"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.hostIP"}}}}}},
              {{"name", "POD_IP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}},
              {{"name", "MAYBE"}, {"valueFrom", {{"secretKeyRef", {{"name", "none"}, {"key", "k"}, {"optional", true}}}}}},
              {{"name", "DB_user"}, {"value", "override"}}};
  const SecretData secrets{{"db", {{"user", "u"}, {"password", "p"}}}, {"api", {{"token", "t0k"}}}};
  EXPECT_EQ(EnvSecretNames(pod), (std::vector<std::string>{"api", "db", "none"}));
  auto resolved = ResolvePodEnv(pod, secrets, "10.0.0.7", "10.244.3.9");
  ASSERT_TRUE(resolved.has_value()) << resolved.error().message();
  const auto env = EnvOf(*PodProcessSpec(*resolved, Ctx()));
  EXPECT_EQ(env.at("DB_password"), "p");
  EXPECT_EQ(env.at("DB_user"), "override") << "env comes after envFrom and wins";
  EXPECT_EQ(env.at("TOKEN"), "t0k");
  EXPECT_EQ(env.at("ME"), "train-worker-0");
  EXPECT_EQ(env.at("HOST"), "10.0.0.7");
  EXPECT_EQ(env.at("POD_IP"), "10.244.3.9");
  EXPECT_FALSE(env.count("MAYBE"));

  json missing = GangPod(0);
  missing["spec"]["containers"][0]["env"] = {{{"name", "X"}, {"valueFrom", {{"secretKeyRef", {{"name", "api"}, {"key", "nope"}}}}}}};
  auto no_key = ResolvePodEnv(missing, secrets, "", "");
  ASSERT_FALSE(no_key.has_value());
  EXPECT_EQ(no_key.error().message(), "couldn't find key nope in Secret team-a/api");
  missing["spec"]["containers"][0]["env"][0]["valueFrom"]["secretKeyRef"]["name"] = "gone";
  auto no_secret = ResolvePodEnv(missing, secrets, "", "");
  ASSERT_FALSE(no_secret.has_value());
  EXPECT_EQ(no_secret.error().message(), "secret \"gone\" not found");
  missing["spec"]["containers"][0]["env"] = {{{"name", "X"}, {"valueFrom", {{"configMapKeyRef", {{"name", "c"}, {"key", "k"}}}}}}};
  auto config_map = ResolvePodEnv(missing, secrets, "", "");
  ASSERT_FALSE(config_map.has_value());
  EXPECT_EQ(config_map.error().message(), "configmap \"c\" not found");
  const SecretData config_maps{{"c", {{"k", "from-cm"}, {"mode", "fast"}}}};
  auto no_cm_key = ResolvePodEnv(missing, secrets, "", "", SecretData{{"c", {{"other", "v"}}}});
  ASSERT_FALSE(no_cm_key.has_value());
  EXPECT_EQ(no_cm_key.error().message(), "couldn't find key k in ConfigMap team-a/c");
  json& mc = missing["spec"]["containers"][0];
  mc["envFrom"] = {{{"configMapRef", {{"name", "c"}}}, {"prefix", "CM_"}},
                   {{"configMapRef", {{"name", "absent"}, {"optional", true}}}}};
  mc["env"].push_back({{"name", "OPT"}, {"valueFrom", {{"configMapKeyRef", {{"name", "c"}, {"key", "no"}, {"optional", true}}}}}});
  EXPECT_EQ(PodConfigMapNames(missing), (std::vector<std::string>{"absent", "c"}));
  auto from_cm = ResolvePodEnv(missing, secrets, "", "", config_maps);
  ASSERT_TRUE(from_cm.has_value()) << from_cm.error().message();
  const auto cm_env = EnvOf(*PodProcessSpec(*from_cm, Ctx()));
  EXPECT_EQ(cm_env.at("X"), "from-cm");
  EXPECT_EQ(cm_env.at("CM_mode"), "fast");
  EXPECT_FALSE(cm_env.count("OPT"));
  mc["envFrom"][1]["configMapRef"]["optional"] = false;
  auto required = ResolvePodEnv(missing, secrets, "", "", config_maps);
  ASSERT_FALSE(required.has_value());
  EXPECT_EQ(required.error().message(), "configmap \"absent\" not found");
}

TEST(PodLaunchTest, AProcessPodWithVolumeMountsIsRefusedSayingVolumesAreForContainers) {
  json pod = GangPod(0);
  pod["spec"]["containers"][0]["volumeMounts"] = {{{"name", "data"}, {"mountPath", "/data"}}};
  pod["spec"]["volumes"] = {{{"name", "data"}, {"emptyDir", json::object()}}};
  auto spec = PodProcessSpec(pod, Ctx());
  ASSERT_FALSE(spec.has_value());
  EXPECT_TRUE(spec.error().message().starts_with("volumeMount \"data\": volumes are mounted only into containers"))
      << spec.error().message();
}

}  // namespace
}  // namespace tessera
