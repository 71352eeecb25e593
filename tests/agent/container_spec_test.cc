#include "agent/container_spec.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

TEST(ContainerSpecTest, SecurityContextDropsAddsAndPrivilegedGetsEverything) {
  const json dropped = Config(Pod({{"securityContext", {{"capabilities", {{"drop", {"ALL"}}, {"add", {"NET_BIND_SERVICE"}}}}}}}));
  EXPECT_EQ(dropped["process"]["capabilities"]["bounding"], json({"CAP_NET_BIND_SERVICE"}));
  const json read_only = Config(Pod({{"securityContext", {{"readOnlyRootFilesystem", true}}}}));
  EXPECT_TRUE(read_only["root"]["readonly"].get<bool>());
  EXPECT_FALSE(Config(Pod(json::object()))["root"]["readonly"].get<bool>());
  // What pod security let through (auth/pod_security.h decides, before): an added capability, privileged.
  const json added = Config(Pod({{"securityContext", {{"capabilities", {{"add", {"SYS_ADMIN"}}}}}}}));
  const json bounding = added["process"]["capabilities"]["bounding"];
  EXPECT_NE(std::find(bounding.begin(), bounding.end(), "CAP_SYS_ADMIN"), bounding.end());
  EXPECT_TRUE(Config(Pod(json::object()))["linux"].contains("maskedPaths"));
  const json privileged = Config(Pod({{"securityContext", {{"privileged", true}}}}));
  EXPECT_EQ(privileged["process"]["capabilities"]["bounding"].size(), 41u);
  EXPECT_FALSE(privileged["linux"].contains("maskedPaths"));
  EXPECT_FALSE(privileged["linux"].contains("readonlyPaths"));
  EXPECT_TRUE(privileged["linux"]["resources"]["devices"][0]["allow"].get<bool>());
  EXPECT_FALSE(privileged["process"]["noNewPrivileges"].get<bool>());
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
  auto volumes = PodVolumes(pod, VolumeContext{.pod_dir = "/node/pods/x"});
  ASSERT_TRUE(volumes.has_value()) << volumes.error().message();
  EXPECT_EQ(volumes->at("scratch").path, "/node/pods/x/volumes/scratch");
  EXPECT_FALSE(volumes->at("scratch").tmpfs);
  EXPECT_TRUE(volumes->at("cache").tmpfs);
  EXPECT_EQ(volumes->at("cache").size_bytes, 64 * 1024 * 1024);
  ContainerContext ctx = kCtx;
  ctx.volumes = *volumes;
  auto config = OciRuntimeConfig(pod, kImage, Container(pod), ctx);
  ASSERT_TRUE(config.has_value()) << config.error().message();
  std::map<std::string, json> mounts;
  for (const json& m : (*config)["mounts"]) mounts[m["destination"]] = m;
  EXPECT_EQ(mounts.at("/scratch")["source"], "/node/pods/x/volumes/scratch");
  const json options = mounts.at("/cache")["options"];
  EXPECT_NE(std::find(options.begin(), options.end(), "ro"), options.end()) << options.dump();

  json unknown = Pod(json::object());
  unknown["spec"]["volumes"] = {{{"name", "disk"}, {"gcePersistentDisk", {{"pdName", "d"}}}}};
  auto refused = PodVolumes(unknown, VolumeContext{.pod_dir = "/node/pods/x"});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message(),
            "volume \"disk\": gcePersistentDisk volumes are not supported (emptyDir, configMap, secret, hostPath and "
            "persistentVolumeClaim are)");
  json dangling = Pod({{"volumeMounts", {{{"name", "nope"}, {"mountPath", "/x"}}}}});
  auto missing = PodVolumes(dangling, VolumeContext{.pod_dir = "/node/pods/x"});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("volumeMount \"nope\" names no volume of the pod"), std::string::npos);
}

TEST(ContainerSpecTest, ConfigMapSecretHostPathAndClaimVolumesAndSubPaths) {
  json pod = Pod({{"volumeMounts", {{{"name", "settings"}, {"mountPath", "/etc/app"}},
                                    {{"name", "creds"}, {"mountPath", "/run/db-password"}, {"subPath", "pw"}},
                                    {{"name", "data"}, {"mountPath", "/data"}, {"subPath", "run-1"}},
                                    {{"name", "host"}, {"mountPath", "/host"}, {"readOnly", true}}}}});
  pod["spec"]["volumes"] = {
      {{"name", "settings"},
       {"configMap", {{"name", "app"}, {"defaultMode", 0440}, {"items", {{{"key", "mode"}, {"path", "conf/mode"}},
                                                                          {{"key", "level"}, {"path", "level"}, {"mode", 0400}}}}}}},
      {{"name", "creds"}, {"secret", {{"secretName", "db"}}}},
      {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "ds"}}}},
      {{"name", "host"}, {"hostPath", {{"path", "/srv/shared/"}, {"type", "Directory"}}}}};
  PodSources sources;
  sources.config_maps["app"] = {{"mode", "fast"}, {"level", "3"}, {"unused", "x"}};
  sources.secrets["db"] = {{"pw", "hunter2"}};
  sources.claims["ds"] = {{"metadata", {{"name", "ds"}, {"uid", "c-1"}}}, {"status", {{"phase", "Bound"}}}};
  const VolumeContext vctx{.pod_dir = "/node/pods/x", .volume_root = "/nfs", .sources = &sources};
  auto volumes = PodVolumes(pod, vctx);
  ASSERT_TRUE(volumes.has_value()) << volumes.error().message();
  const VolumeDir& settings = volumes->at("settings");
  EXPECT_TRUE(settings.files && settings.read_only && !settings.tmpfs);
  ASSERT_EQ(settings.contents.size(), 2u);
  EXPECT_EQ(settings.contents[0].path, "conf/mode");
  EXPECT_EQ(settings.contents[0].mode, 0440u);
  EXPECT_EQ(settings.contents[1].mode, 0400u);
  EXPECT_TRUE(volumes->at("creds").tmpfs) << "a secret stays off the disk";
  EXPECT_EQ(volumes->at("data").path, "/nfs/team-a-ds-c-1");
  EXPECT_FALSE(volumes->at("data").own);
  EXPECT_EQ(volumes->at("host").path, "/srv/shared");
  ContainerContext ctx = kCtx;
  ctx.volumes = *volumes;
  auto config = OciRuntimeConfig(pod, kImage, Container(pod), ctx);
  ASSERT_TRUE(config.has_value()) << config.error().message();
  std::map<std::string, json> mounts;
  for (const json& m : (*config)["mounts"]) mounts[m["destination"]] = m;
  const auto read_only = [&](const std::string& at) {
    const json options = mounts.at(at)["options"];
    return std::find(options.begin(), options.end(), "ro") != options.end();
  };
  EXPECT_EQ(mounts.at("/run/db-password")["source"], "/node/pods/x/volumes/creds/pw");
  EXPECT_EQ(mounts.at("/data")["source"], "/nfs/team-a-ds-c-1/run-1");
  EXPECT_TRUE(read_only("/etc/app"));
  EXPECT_TRUE(read_only("/run/db-password"));
  EXPECT_FALSE(read_only("/data"));
  EXPECT_TRUE(read_only("/host"));

  // What is missing makes the pod wait (NotFound), in the kubelet's words; what is wrong fails it.
  PodSources none;
  auto waits = PodVolumes(pod, VolumeContext{.pod_dir = "/p", .volume_root = "/nfs", .sources = &none});
  ASSERT_FALSE(waits.has_value());
  EXPECT_EQ(waits.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(waits.error().message(), "MountVolume.SetUp failed for volume \"settings\" : configmap \"app\" not found");
  sources.config_maps["app"].erase("level");
  auto no_key = PodVolumes(pod, vctx);
  ASSERT_FALSE(no_key.has_value());
  EXPECT_NE(no_key.error().message().find("configmap references non-existent config key: level"), std::string::npos);
  sources.config_maps["app"]["level"] = "3";
  sources.claims.clear();
  auto no_claim = PodVolumes(pod, vctx);
  ASSERT_FALSE(no_claim.has_value());
  EXPECT_EQ(no_claim.error().message(), "persistentvolumeclaim \"ds\" not found");
  json escape = pod;
  escape["spec"]["containers"][0]["volumeMounts"][2]["subPath"] = "../other";
  sources.claims["ds"] = {{"metadata", {{"uid", "c-1"}}}, {"status", {{"phase", "Bound"}}}};
  ContainerContext ectx = kCtx;
  ectx.volumes = *PodVolumes(escape, vctx);
  auto escaped = OciRuntimeConfig(escape, kImage, Container(escape), ectx);
  ASSERT_FALSE(escaped.has_value());
  EXPECT_EQ(escaped.error().message(),
            "volumeMount \"data\": subPath: Invalid value: \"../other\": must be a relative path without '..'");
  json bad_mode = pod;
  bad_mode["spec"]["volumes"][1]["secret"]["defaultMode"] = 01000;
  auto mode = PodVolumes(bad_mode, vctx);
  ASSERT_FALSE(mode.has_value());
  EXPECT_EQ(mode.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(mode.error().message().find("volume \"creds\": secret.defaultMode: Invalid value: 512"), std::string::npos)
      << mode.error().message();
}

// Stand-in GPU device nodes (character devices with /dev/null's numbers) and a
// fake driver library, in a directory of the test's own.
class CdiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mknod needs root";
    dir_ = std::filesystem::temp_directory_path() / ("tessera-cdi-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "dev");
    std::filesystem::create_directories(dir_ / "lib");
    struct stat null {};
    ASSERT_EQ(::stat("/dev/null", &null), 0);
    for (const char* name : {"nvidia0", "nvidia1", "nvidia2", "nvidiactl", "nvidia-uvm"}) {
      ASSERT_EQ(::mknod((dir_ / "dev" / name).c_str(), S_IFCHR | 0666, null.st_rdev), 0) << name;
    }
    std::ofstream(dir_ / "lib" / "libcuda.so.535.104") << "not really";
    std::ofstream(dir_ / "lib" / "libc.so.6") << "not the driver's";
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
};

TEST_F(CdiTest, TheSpecListsEachGpuAndTheCommonNodesAndAContainerGetsExactlyItsOwn) {
  std::vector<GpuDevice> devices;
  for (int i = 0; i < 4; ++i) devices.push_back(GpuDevice{.index = i, .uuid = "GPU-" + std::to_string(i), .model = "A100-80GB"});
  std::vector<std::string> notes;
  const json spec = NvidiaCdiSpec(devices, CdiOptions{.device_root = (dir_ / "dev").string(),
                                                      .library_dirs = {(dir_ / "lib").string()}},
                                  &notes);
  EXPECT_EQ(spec["kind"], "nvidia.com/gpu");
  ASSERT_EQ(spec["devices"].size(), 3u) << "GPU 3 has no device node: left out";
  EXPECT_EQ(spec["devices"][1]["name"], "1");
  EXPECT_EQ(spec["containerEdits"]["deviceNodes"].size(), 2u);  // nvidiactl, nvidia-uvm (no uvm-tools here)
  ASSERT_EQ(spec["containerEdits"]["mounts"].size(), 1u);
  EXPECT_EQ(spec["containerEdits"]["mounts"][0]["containerPath"], (dir_ / "lib" / "libcuda.so.535.104").string());
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("for GPU 3:"), std::string::npos) << notes[0];

  json pod = Pod(json::object());
  ContainerContext ctx = kCtx;
  ctx.cdi_spec = &spec;
  ctx.gpu_devices = {"0", "2"};
  PodContainer container = Container(pod);
  container.process.env.push_back("NVIDIA_VISIBLE_DEVICES=GPU-0,GPU-2");
  container.process.env.push_back("CUDA_VISIBLE_DEVICES=0,2");
  auto config = OciRuntimeConfig(pod, kImage, container, ctx);
  ASSERT_TRUE(config.has_value()) << config.error().message();
  std::vector<std::string> paths;
  for (const json& d : (*config)["linux"]["devices"]) paths.push_back(d["path"]);
  EXPECT_EQ(paths, (std::vector<std::string>{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia2"}));
  const json rules = (*config)["linux"]["resources"]["devices"];
  ASSERT_EQ(rules.size(), 5u) << rules.dump();
  EXPECT_FALSE(rules[0]["allow"].get<bool>()) << "deny first, then exactly its nodes";
  EXPECT_TRUE(rules[4]["allow"].get<bool>());
  EXPECT_EQ(rules[4]["major"], 1);
  EXPECT_EQ(rules[4]["minor"], 3);
  const json env = (*config)["process"]["env"];
  EXPECT_NE(std::find(env.begin(), env.end(), "CUDA_VISIBLE_DEVICES=GPU-0,GPU-2"), env.end()) << env.dump();
  std::map<std::string, std::string> mounts;
  for (const json& m : (*config)["mounts"]) mounts[m["destination"]] = m["source"];
  EXPECT_EQ(mounts.count((dir_ / "lib" / "libcuda.so.535.104").string()), 1u);

  ctx.gpu_devices = {"3"};
  auto missing = OciRuntimeConfig(pod, kImage, container, ctx);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message(),
            "CDI device nvidia.com/gpu=3 is not in this node's spec (its GPU has no device node)");
}

}  // namespace
}  // namespace tessera
