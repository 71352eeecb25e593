#include "agent/container_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace tessera {
namespace {

using nlohmann::json;

constexpr UidRange kTeamA{1'000'010'000, 10'000};

json Pod(json container) {
  container["name"] = "main";
  if (!container.contains("image")) container["image"] = "127.0.0.1:5000/team/trainer:v1";
  json pod;
  pod["metadata"] = {{"name", "trainer-0"}, {"namespace", "team-a"}, {"uid", "u-1"}};
  pod["spec"]["containers"] = json::array({container});
  return pod;
}

PodContainer Container(const json& pod) {
  PodLaunchContext ctx{.node_name = "node-1", .working_dir = "/node/pods/x/work", .output_path = "/node/pods/x/log",
                       .checkpoint_dir = "/ckpt/team-a/trainer", .uid_range = kTeamA};
  ctx.token_file = "/node/pods/x/serviceaccount/token";
  auto c = PodContainerSpec(pod, ctx);
  EXPECT_TRUE(c.has_value()) << c.error().message();
  return c ? *c : PodContainer{};
}

const ContainerContext kCtx{.rootfs = "/node/pods/x/container/rootfs",
                            .hostname = "trainer-0",
                            .cgroups_path = "/tessera-node-1_team-a_trainer-0_u-1",
                            .checkpoint_dir = "/ckpt/team-a/trainer",
                            .token_dir = "/node/pods/x/serviceaccount"};

const json kImage = {{"Entrypoint", {"/bin/trainer"}},
                     {"Cmd", {"--epochs", "3"}},
                     {"Env", {"PATH=/opt/bin:/bin", "MODEL=base"}},
                     {"WorkingDir", "/work"},
                     {"User", "0"}};

json Config(const json& pod, const json& image = kImage) {
  auto config = OciRuntimeConfig(pod, image, Container(pod), kCtx);
  EXPECT_TRUE(config.has_value()) << config.error().message();
  return config ? *config : json();
}

std::map<std::string, std::string> Env(const json& config) {
  std::map<std::string, std::string> env;
  for (const std::string kv : config["process"]["env"]) env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  return env;
}

TEST(ContainerSpecTest, CommandReplacesTheEntrypointAndArgsTheCmdAsInKubernetes) {
  EXPECT_EQ(Config(Pod(json::object()))["process"]["args"], json({"/bin/trainer", "--epochs", "3"}));
  EXPECT_EQ(Config(Pod({{"args", {"--epochs", "9"}}}))["process"]["args"], json({"/bin/trainer", "--epochs", "9"}));
  EXPECT_EQ(Config(Pod({{"command", {"/bin/sh", "-c"}}}))["process"]["args"], json({"/bin/sh", "-c"}))
      << "a command drops the image's Cmd too";
  EXPECT_EQ(Config(Pod({{"command", {"/bin/sh", "-c"}}, {"args", {"echo hi"}}}))["process"]["args"],
            json({"/bin/sh", "-c", "echo hi"}));
  auto none = OciRuntimeConfig(Pod(json::object()), json::object(), Container(Pod(json::object())), kCtx);
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find("give the container a command"), std::string::npos);
}

TEST(ContainerSpecTest, ThePodsEnvironmentWinsOverTheImagesAndHomeIsNotTheNodesDirectory) {
  const json config = Config(Pod({{"env", {{{"name", "MODEL"}, {"value", "large"}}}}}));
  const auto env = Env(config);
  EXPECT_EQ(env.at("MODEL"), "large");
  EXPECT_EQ(env.at("PATH"), "/opt/bin:/bin");
  EXPECT_EQ(env.at("TESSERA_NAMESPACE"), "team-a");
  EXPECT_EQ(env.at("TESSERA_TOKEN_FILE"), "/node/pods/x/serviceaccount/token");
  EXPECT_EQ(env.at("TESSERA_CHECKPOINT_DIR"), "/ckpt/team-a/trainer");
  EXPECT_EQ(env.at("HOME"), "/");
  EXPECT_EQ(env.at("HOSTNAME"), "trainer-0");
  EXPECT_EQ(Env(Config(Pod({{"command", {"/app"}}}), json::object())).at("PATH"),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
}

TEST(ContainerSpecTest, ItRunsAsItsNamespacesUserNotTheImagesAndHoldsNoCapabilityAsOne) {
  const json config = Config(Pod(json::object()));
  EXPECT_EQ(config["process"]["user"]["uid"], 1'000'010'000u) << "the image says User 0";
  EXPECT_EQ(config["process"]["user"]["gid"], 1'000'010'000u);
  EXPECT_TRUE(config["process"]["capabilities"]["effective"].empty());
  EXPECT_TRUE(config["process"]["noNewPrivileges"].get<bool>());
  EXPECT_EQ(config["process"]["cwd"], "/work");
  EXPECT_EQ(Config(Pod({{"workingDir", "/data"}}))["process"]["cwd"], "/data");
}

TEST(ContainerSpecTest, SecurityContextDropsAddsBackAndRefusesWhatNoPolicyAllows) {
  const json dropped = Config(Pod({{"securityContext", {{"capabilities", {{"drop", {"ALL"}}, {"add", {"NET_BIND_SERVICE"}}}}}}}));
  EXPECT_EQ(dropped["process"]["capabilities"]["bounding"], json({"CAP_NET_BIND_SERVICE"}));
  const json read_only = Config(Pod({{"securityContext", {{"readOnlyRootFilesystem", true}}}}));
  EXPECT_TRUE(read_only["root"]["readonly"].get<bool>());
  EXPECT_FALSE(Config(Pod(json::object()))["root"]["readonly"].get<bool>());
  for (const json& sc : {json{{"privileged", true}}, json{{"capabilities", {{"add", {"SYS_ADMIN"}}}}}}) {
    const json pod = Pod({{"securityContext", sc}});
    auto config = OciRuntimeConfig(pod, kImage, Container(pod), kCtx);
    ASSERT_FALSE(config.has_value()) << sc.dump();
    EXPECT_NE(config.error().message().find("Forbidden"), std::string::npos) << config.error().message();
  }
}

TEST(ContainerSpecTest, LimitsGoToRuncsCgroupAndTheTokenAndCheckpointAreMounted) {
  const json config = Config(Pod({{"resources", {{"limits", {{"cpu", "500m"}, {"memory", "256Mi"}}}}}}));
  EXPECT_EQ(config["linux"]["cgroupsPath"], kCtx.cgroups_path);
  EXPECT_EQ(config["linux"]["resources"]["memory"]["limit"], 256 * 1024 * 1024);
  EXPECT_EQ(config["linux"]["resources"]["cpu"]["quota"], 50000);
  EXPECT_EQ(config["linux"]["resources"]["cpu"]["period"], 100000);
  std::map<std::string, std::string> mounts;  // destination -> source
  for (const json& m : config["mounts"]) mounts[m["destination"]] = m["source"];
  EXPECT_EQ(mounts.at("/var/run/secrets/kubernetes.io/serviceaccount"), kCtx.token_dir);
  EXPECT_EQ(mounts.at(kCtx.token_dir), kCtx.token_dir);
  EXPECT_EQ(mounts.at(kCtx.checkpoint_dir), kCtx.checkpoint_dir);
  EXPECT_EQ(mounts.at("/proc"), "proc");
  EXPECT_EQ(config["root"]["path"], kCtx.rootfs);
  EXPECT_EQ(config["hostname"], "trainer-0");
  std::vector<std::string> namespaces;
  for (const json& n : config["linux"]["namespaces"]) namespaces.push_back(n["type"]);
  EXPECT_EQ(namespaces, (std::vector<std::string>{"pid", "ipc", "uts", "mount"}));
}

TEST(ContainerSpecTest, EmptyDirVolumesAreMountedWhereTheContainerSaysAndOtherKindsAreRefused) {
  json pod = Pod({{"volumeMounts", {{{"name", "scratch"}, {"mountPath", "/scratch"}},
                                    {{"name", "cache"}, {"mountPath", "/cache"}, {"readOnly", true}}}}});
  pod["spec"]["volumes"] = {{{"name", "scratch"}, {"emptyDir", json::object()}},
                            {{"name", "cache"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "64Mi"}}}}};
  auto volumes = PodVolumes(pod, "/node/pods/x");
  ASSERT_TRUE(volumes.has_value()) << volumes.error().message();
  EXPECT_EQ(volumes->at("scratch").path, "/node/pods/x/volumes/scratch");
  EXPECT_FALSE(volumes->at("scratch").tmpfs);
  EXPECT_TRUE(volumes->at("cache").tmpfs);
  EXPECT_EQ(volumes->at("cache").size_bytes, 64 * 1024 * 1024);
  ContainerContext ctx = kCtx;
  for (const auto& [name, v] : *volumes) ctx.volumes[name] = v.path;
  auto config = OciRuntimeConfig(pod, kImage, Container(pod), ctx);
  ASSERT_TRUE(config.has_value()) << config.error().message();
  std::map<std::string, json> mounts;
  for (const json& m : (*config)["mounts"]) mounts[m["destination"]] = m;
  EXPECT_EQ(mounts.at("/scratch")["source"], "/node/pods/x/volumes/scratch");
  const json options = mounts.at("/cache")["options"];
  EXPECT_NE(std::find(options.begin(), options.end(), "ro"), options.end()) << options.dump();

  json config_map = Pod(json::object());
  config_map["spec"]["volumes"] = {{{"name", "settings"}, {"configMap", {{"name", "app"}}}}};
  auto refused = PodVolumes(config_map, "/node/pods/x");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message(),
            "volume \"settings\": configMap volumes are not supported yet; only emptyDir is (configMap, secret, "
            "hostPath and persistentVolumeClaim come later)");
  json dangling = Pod({{"volumeMounts", {{{"name", "nope"}, {"mountPath", "/x"}}}}});
  auto missing = PodVolumes(dangling, "/node/pods/x");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("volumeMount \"nope\" names no volume of the pod"), std::string::npos);
}

}  // namespace
}  // namespace tessera
