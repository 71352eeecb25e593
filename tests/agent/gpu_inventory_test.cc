// GPU discovery and utilisation sampling without a GPU: Nvml against a fake
// libnvidia-ml (tests/agent/fake_nvml.cc, built as the fake_nvml shared
// library), the fallback to a simulated inventory, the inventory file formats,
// and SimulatedGpuSampler against a fake /proc and against real processes.
#include <dlfcn.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/gpu_inventory.h"
#include "agent/nvml.h"
#include "tests/testing/scoped_env.h"

extern char** environ;

namespace tessera {
namespace {

using ::testing::HasSubstr;

// The fake NVML: the build's (FAKE_NVML_PATH), else $TESSERA_FAKE_NVML for a
// hand-built one; tests that need it skip when there is neither.
std::string FakeNvmlPath() {
#ifdef FAKE_NVML_PATH
  return FAKE_NVML_PATH;
#else
  const char* p = std::getenv("TESSERA_FAKE_NVML");
  return p != nullptr ? p : "";
#endif
}

#define REQUIRE_FAKE_NVML()                                                                          \
  do {                                                                                               \
    if (FakeNvmlPath().empty()) GTEST_SKIP() << "no fake NVML (FAKE_NVML_PATH or TESSERA_FAKE_NVML)"; \
  } while (0)

using testing::ScopedEnv;

std::vector<int32_t> Domains(const std::vector<GpuDevice>& devices) {
  std::vector<int32_t> out;
  for (const GpuDevice& d : devices) out.push_back(d.nvlink_domain);
  return out;
}

// A fresh directory under the test temp dir, removed at the end of the scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-gpu-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

constexpr int64_t kFakeTotal = int64_t{81559} << 20;  // 81559 MiB, as an H100 80GB reports

// ---- Nvml against the fake --------------------------------------------------

TEST(NvmlTest, ListsTheFakeDevicesWithUuidModelMemoryAndOneNvlinkDomain) {
  // Two GPUs joined by one NVLink (the fake's default): one domain.
  REQUIRE_FAKE_NVML();
  ScopedEnv links("FAKE_NVML_LINKS", std::nullopt);
  auto nvml = Nvml::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.has_value()) << nvml.error().ToString();
  auto devices = (*nvml)->Devices();
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  EXPECT_EQ(*devices, (std::vector<GpuDevice>{
                          {.index = 0, .uuid = "GPU-FAKE0000-0000-0000-0000-000000000000", .model = "H100-80GB-HBM3",
                           .memory_bytes = kFakeTotal, .nvlink_domain = 0},
                          {.index = 1, .uuid = "GPU-FAKE0000-0000-0000-0000-000000000001", .model = "H100-80GB-HBM3",
                           .memory_bytes = kFakeTotal, .nvlink_domain = 0},
                      }));
}

TEST(NvmlTest, GpusWithoutNvlinksAreEachInTheirOwnDomain) {
  REQUIRE_FAKE_NVML();
  ScopedEnv links("FAKE_NVML_LINKS", "");
  auto nvml = Nvml::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.has_value()) << nvml.error().ToString();
  auto devices = (*nvml)->Devices();
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  EXPECT_EQ(Domains(*devices), (std::vector<int32_t>{0, 1}));
}

TEST(NvmlTest, NvlinkDomainsAreConnectedComponentsNumberedByLowestIndex) {
  // 4 GPUs, links 1-3 only: {0}, {1, 3}, {2} -> numbered in order of their
  // lowest device: GPU0 -> 0, GPU1 -> 1, GPU2 -> 2, GPU3 -> 1.
  REQUIRE_FAKE_NVML();
  ScopedEnv gpus("FAKE_NVML_GPUS", "4");
  ScopedEnv links("FAKE_NVML_LINKS", "1-3");
  auto nvml = Nvml::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.has_value()) << nvml.error().ToString();
  auto devices = (*nvml)->Devices();
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  EXPECT_EQ(Domains(*devices), (std::vector<int32_t>{0, 1, 2, 1}));
}

TEST(NvmlTest, NvlinkChainsJoinTransitively) {
  // 4 GPUs, links 0-1, 1-2, two links 2-3 (a chain): one domain.
  REQUIRE_FAKE_NVML();
  ScopedEnv gpus("FAKE_NVML_GPUS", "4");
  ScopedEnv links("FAKE_NVML_LINKS", "0-1,1-2,2-3,2-3");
  auto nvml = Nvml::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.has_value()) << nvml.error().ToString();
  auto devices = (*nvml)->Devices();
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  EXPECT_EQ(Domains(*devices), (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST(NvmlTest, GpusOnTheSameNvswitchShareADomain) {
  // 4 GPUs: 0 and 1 on switch 0, 2 and 3 on switch 1 -> domains 0, 0, 1, 1.
  REQUIRE_FAKE_NVML();
  ScopedEnv gpus("FAKE_NVML_GPUS", "4");
  ScopedEnv links("FAKE_NVML_LINKS", "0-s0,1-s0,2-s1,3-s1");
  auto nvml = Nvml::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.has_value()) << nvml.error().ToString();
  auto devices = (*nvml)->Devices();
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  EXPECT_EQ(Domains(*devices), (std::vector<int32_t>{0, 0, 1, 1}));
}

TEST(NvmlTest, SampleReadsUtilisationAndMemoryUsed) {
  // The fake: GPU i at 37 + 20 i %, (i + 1) GiB used.
  REQUIRE_FAKE_NVML();
  auto nvml = Nvml::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.has_value()) << nvml.error().ToString();
  auto sample = (*nvml)->Sample();
  ASSERT_TRUE(sample.has_value()) << sample.error().ToString();
  EXPECT_EQ(*sample, (std::vector<GpuUsage>{
                         {.index = 0, .utilization_percent = 37, .memory_used_bytes = int64_t{1} << 30},
                         {.index = 1, .utilization_percent = 57, .memory_used_bytes = int64_t{2} << 30},
                     }));
}

TEST(NvmlTest, AMissingLibrarySaysThereIsNoDriver) {
  auto nvml = Nvml::Load("libnvidia-ml-tessera-missing.so.1");
  ASSERT_FALSE(nvml.has_value());
  EXPECT_EQ(nvml.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ(nvml.error().message(), "no NVIDIA driver (libnvidia-ml-tessera-missing.so.1 not found)");
}

TEST(NvmlTest, ALibraryWithoutTheSymbolsNamesTheMissingOne) {
  // libm is a real library, but not NVML.
  auto nvml = Nvml::Load("libm.so.6");
  ASSERT_FALSE(nvml.has_value());
  EXPECT_EQ(nvml.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(nvml.error().message(), HasSubstr("libm.so.6 has no symbol nvmlInit_v2"));
}

TEST(NvmlTest, AFailedInitCarriesTheNvmlErrorString) {
  REQUIRE_FAKE_NVML();
  ScopedEnv fail("FAKE_NVML_INIT_ERROR", "9");  // NVML_ERROR_DRIVER_NOT_LOADED
  auto nvml = Nvml::Load(FakeNvmlPath());
  ASSERT_FALSE(nvml.has_value());
  EXPECT_EQ(nvml.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(nvml.error().message(), HasSubstr("failed to initialise: Driver Not Loaded (NVML error 9)"));
}

TEST(NvmlTest, AFailedDeviceCallNamesTheCallTheGpuAndTheNvmlError) {
  REQUIRE_FAKE_NVML();
  auto nvml = Nvml::Load(FakeNvmlPath());
  ASSERT_TRUE(nvml.has_value()) << nvml.error().ToString();
  ScopedEnv fail("FAKE_NVML_FAIL", "nvmlDeviceGetMemoryInfo");
  auto devices = (*nvml)->Devices();
  ASSERT_FALSE(devices.has_value());
  EXPECT_EQ(devices.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ(devices.error().message(), "nvmlDeviceGetMemoryInfo (GPU 0): Unknown Error (NVML error 999)");
  auto sample = (*nvml)->Sample();
  ASSERT_FALSE(sample.has_value());
  EXPECT_THAT(sample.error().message(), HasSubstr("nvmlDeviceGetMemoryInfo (GPU 0): Unknown Error"));
}

TEST(NvmlTest, EachLoadIsShutDownWhenDestroyed) {
  // NVML counts inits; each Nvml holds one until it is destroyed.
  REQUIRE_FAKE_NVML();
  void* fake = dlopen(FakeNvmlPath().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(fake, nullptr) << dlerror();
  auto init_count = reinterpret_cast<int (*)()>(dlsym(fake, "fake_nvml_init_count"));
  ASSERT_NE(init_count, nullptr);
  const int before = init_count();
  {
    auto a = Nvml::Load(FakeNvmlPath());
    auto b = Nvml::Load(FakeNvmlPath());
    ASSERT_TRUE(a.has_value() && b.has_value());
    EXPECT_EQ(init_count(), before + 2);
  }
  EXPECT_EQ(init_count(), before);
  dlclose(fake);
}

// ---- DiscoverGpus -------------------------------------------------------------

TEST(DiscoverGpusTest, FallsBackToTheSimulatedInventoryAndSaysWhy) {
  auto inv = DiscoverGpus({.simulated = "8xH100-80GB", .nvml_library = "libnvidia-ml-tessera-missing.so.1"});
  ASSERT_TRUE(inv.has_value()) << inv.error().ToString();
  EXPECT_EQ(inv->source, GpuSource::kSimulated);
  EXPECT_TRUE(inv->simulated());
  EXPECT_EQ(inv->devices.size(), 8u);
  EXPECT_EQ(inv->nvml, nullptr);
  EXPECT_EQ(inv->reason,
            "no NVIDIA driver (libnvidia-ml-tessera-missing.so.1 not found): simulated inventory 8xH100-80GB");
}

TEST(DiscoverGpusTest, UsesNvmlWhenItLoads) {
  REQUIRE_FAKE_NVML();
  auto inv = DiscoverGpus({.simulated = "8xH100-80GB", .nvml_library = FakeNvmlPath()});
  ASSERT_TRUE(inv.has_value()) << inv.error().ToString();
  EXPECT_EQ(inv->source, GpuSource::kNvml);
  EXPECT_EQ(GpuSourceName(inv->source), "nvml");
  EXPECT_EQ(inv->devices.size(), 2u);
  EXPECT_EQ(inv->reason, "NVIDIA driver found: 2 GPUs from NVML (2xH100-80GB-HBM3)");
  ASSERT_NE(inv->nvml, nullptr);
  auto sample = inv->nvml->Sample();
  ASSERT_TRUE(sample.has_value()) << sample.error().ToString();
  EXPECT_EQ(sample->size(), 2u);
}

TEST(DiscoverGpusTest, ADriverThatCannotListItsGpusIsAnErrorNotASimulation) {
  // NVML initialises but a device query fails: a real GPU machine must not
  // advertise simulated GPUs, so even kAuto reports the error.
  REQUIRE_FAKE_NVML();
  ScopedEnv fail("FAKE_NVML_FAIL", "nvmlDeviceGetUUID");
  auto inv = DiscoverGpus({.simulated = "1xT4-16GB", .nvml_library = FakeNvmlPath()});
  ASSERT_FALSE(inv.has_value());
  EXPECT_EQ(inv.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(inv.error().message(), HasSubstr("listing its GPUs failed"));
  EXPECT_THAT(inv.error().message(), HasSubstr("nvmlDeviceGetUUID (GPU 0): Unknown Error (NVML error 999)"));
}

TEST(DiscoverGpusTest, FallsBackWhenTheDriverFailsToInitialise) {
  // A driver package without its kernel module: nvmlInit_v2 says Driver Not Loaded.
  REQUIRE_FAKE_NVML();
  ScopedEnv fail("FAKE_NVML_INIT_ERROR", "9");
  auto inv = DiscoverGpus({.simulated = "1xT4-16GB", .nvml_library = FakeNvmlPath()});
  ASSERT_TRUE(inv.has_value()) << inv.error().ToString();
  EXPECT_EQ(inv->source, GpuSource::kSimulated);
  EXPECT_EQ(inv->reason, fmt::format("NVML ({}) failed to initialise: Driver Not Loaded (NVML error 9): simulated "
                                     "inventory 1xT4-16GB",
                                     FakeNvmlPath()));
}

TEST(DiscoverGpusTest, RequiringNvmlFailsWithoutADriver) {
  auto inv = DiscoverGpus({.preference = GpuPreference::kNvml, .nvml_library = "libnvidia-ml-tessera-missing.so.1"});
  ASSERT_FALSE(inv.has_value());
  EXPECT_EQ(inv.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(inv.error().message(), HasSubstr("no NVIDIA driver"));
}

TEST(DiscoverGpusTest, AskingForSimulatedGpusSkipsNvml) {
  REQUIRE_FAKE_NVML();
  auto inv = DiscoverGpus(
      {.simulated = "2xA100-40GB", .preference = GpuPreference::kSimulated, .nvml_library = FakeNvmlPath()});
  ASSERT_TRUE(inv.has_value()) << inv.error().ToString();
  EXPECT_EQ(inv->source, GpuSource::kSimulated);
  EXPECT_EQ(inv->reason, "NVML not used (simulated GPUs asked for): simulated inventory 2xA100-40GB");
}

TEST(DiscoverGpusTest, ABadSimulatedSpecIsAnError) {
  auto inv = DiscoverGpus({.simulated = "8xH100", .nvml_library = "libnvidia-ml-tessera-missing.so.1"});
  ASSERT_FALSE(inv.has_value());
  EXPECT_EQ(inv.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(inv.error().message(), HasSubstr("8xH100-80GB"));
}

TEST(DiscoverGpusTest, NamesTheFileTheSimulatedInventoryCameFrom) {
  TempDir dir;
  const std::string path = dir.Write("gpus.txt", "2xL4-24GB\n");
  auto inv = DiscoverGpus({.simulated = path, .nvml_library = "libnvidia-ml-tessera-missing.so.1"});
  ASSERT_TRUE(inv.has_value()) << inv.error().ToString();
  EXPECT_EQ(inv->reason, fmt::format("no NVIDIA driver (libnvidia-ml-tessera-missing.so.1 not found): simulated "
                                     "inventory 2xL4-24GB (from {})",
                                     path));
}

// ---- Simulated inventory formats ------------------------------------------------

TEST(SimulatedInventoryTest, ASpecGivesIndexedDevicesFourPerNvlinkDomain) {
  auto devices = ParseSimulatedInventory("6xH100-80GB");
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  EXPECT_EQ(Domains(*devices), (std::vector<int32_t>{0, 0, 0, 0, 1, 1}));  // index / 4
  EXPECT_EQ((*devices)[5].index, 5);
  EXPECT_EQ((*devices)[5].memory_bytes, int64_t{80} << 30);
  EXPECT_EQ(DescribeInventory(*devices), "6xH100-80GB");
}

TEST(SimulatedInventoryTest, DescribeInventoryCountsRunsOfOneModel) {
  auto devices = ParseSimulatedInventory("2xA100-40GB,1xT4-16GB");
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  EXPECT_EQ(DescribeInventory(*devices), "2xA100-40GB,1xT4-16GB");
  EXPECT_EQ(DescribeInventory({}), "no GPUs");
}

TEST(SimulatedInventoryTest, ASpecFileMayHaveCommentsAndSeveralLines) {
  TempDir dir;
  const std::string path = dir.Write("gpus.txt", "# the lab's test node\n  4xH100-80GB  \n\n4xA100-40GB # old ones\n");
  auto devices = LoadSimulatedInventory(path);
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  ASSERT_EQ(devices->size(), 8u);
  EXPECT_EQ((*devices)[3].model, "H100-80GB");
  EXPECT_EQ((*devices)[4].model, "A100-40GB");
  EXPECT_EQ((*devices)[4].memory_bytes, int64_t{40} << 30);
}

TEST(SimulatedInventoryTest, AJsonFileListsDevicesWithDefaults) {
  // Entry 0 gives everything; entry 1 only its model: memory from "-24GB",
  // a simulated uuid, domain 1 / 4 = 0.
  TempDir dir;
  const std::string path = dir.Write("gpus.json", R"([
    {"index": 0, "uuid": "GPU-abc", "model": "H100-80GB-HBM3", "memoryBytes": 85520809984, "nvlinkDomain": 3},
    {"model": "L4-24GB"}
  ])");
  auto devices = LoadSimulatedInventory(path);
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0], (GpuDevice{.index = 0, .uuid = "GPU-abc", .model = "H100-80GB-HBM3",
                                      .memory_bytes = 85520809984, .nvlink_domain = 3}));
  EXPECT_EQ((*devices)[1].index, 1);
  EXPECT_EQ((*devices)[1].memory_bytes, int64_t{24} << 30);
  EXPECT_EQ((*devices)[1].nvlink_domain, 0);
  EXPECT_THAT((*devices)[1].uuid, ::testing::StartsWith("GPU-SIM-"));
}

TEST(SimulatedInventoryTest, JsonMistakesAreExplained) {
  struct Case {
    const char* json;
    const char* says;
  };
  for (const Case& c : {
           Case{"{", "not valid JSON"},
           Case{R"({"model": "H100-80GB"})", "not a list"},
           Case{"[]", "empty"},
           Case{R"([{"modle": "H100-80GB"}])", "unknown key \"modle\""},
           Case{R"([{"memoryBytes": 1}])", "no \"model\""},
           Case{R"([{"model": "H100"}])", "does not end in its size"},
           Case{R"([{"model": "H100-80GB", "memoryBytes": -1}])", "not a positive integer"},
           Case{R"([{"model": "H100-80GB", "index": 1}])", "must be its position, 0"},
           Case{R"([{"model": "H100-80GB", "uuid": "GPU-1"}, {"model": "H100-80GB", "uuid": "GPU-1"}])",
                "repeats uuid"},
       }) {
    auto devices = ParseSimulatedInventoryJson(c.json);
    ASSERT_FALSE(devices.has_value()) << c.json;
    EXPECT_EQ(devices.error().code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(devices.error().message(), HasSubstr(c.says)) << c.json;
  }
}

TEST(SimulatedInventoryTest, AMistakeInAFileNamesTheFile) {
  TempDir dir;
  const std::string path = dir.Write("gpus.txt", "8xH100\n");
  auto devices = LoadSimulatedInventory(path);
  ASSERT_FALSE(devices.has_value());
  EXPECT_EQ(devices.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(devices.error().message(), HasSubstr("GPU inventory file " + path));
}

TEST(SimulatedInventoryTest, AMissingFileIsNotFound) {
  auto devices = LoadSimulatedInventory("/nonexistent/tessera/gpus.json");
  ASSERT_FALSE(devices.has_value());
  EXPECT_EQ(devices.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(devices.error().message(), HasSubstr("/nonexistent/tessera/gpus.json does not exist"));
}

// ---- SimulatedGpuSampler on a fake /proc ------------------------------------------

// Writes <proc>/<pid>/stat with the fields the sampler reads (proc(5) numbering):
// 5 pgrp, 14 utime, 22 starttime, 24 rss; stime, cutime, cstime are 0 except
// `child_ticks` in cutime (children reaped).
void WriteStat(const TempDir& proc, int pid, int pgrp, int64_t utime, int64_t rss_pages, int64_t start = 1000,
               int64_t child_ticks = 0) {
  proc.Write(fmt::format("{}/stat", pid),
             fmt::format("{} (a (busy) one) R 1 {} {} 0 -1 4194304 0 0 0 0 {} 0 {} 0 20 0 1 0 {} 1000000 {} "
                         "18446744073709551615\n",
                         pid, pgrp, pgrp, utime, child_ticks, start, rss_pages));
}

SimulatedGpuSampler MakeFakeProcSampler(const TempDir& proc, const std::string& spec = "2xH100-80GB") {
  return SimulatedGpuSampler(*ParseSimulatedInventory(spec),
                             {.proc_root = proc.path().string(), .clock_ticks_per_second = 100, .page_size = 4096});
}

TEST(SimulatedGpuSamplerTest, UtilisationIsCpuRateTimesShareClampedPerPod) {
  // Device 0: pod 100 (whole GPU) with a child 101 in its group. Device 1:
  // pods 200 and 300, half a GPU each. Process 999 is someone else's.
  TempDir proc;
  WriteStat(proc, 100, 100, 10, 100);
  WriteStat(proc, 101, 100, 5, 50);
  WriteStat(proc, 200, 200, 0, 1000);
  WriteStat(proc, 300, 300, 0, 0);
  WriteStat(proc, 999, 999, 0, 7);
  SimulatedGpuSampler sampler = MakeFakeProcSampler(proc);
  const GpuAssignment assignment{{0, {{.pid = 100, .milli = 1000}}},
                                 {1, {{.pid = 200, .milli = 500}, {.pid = 300, .milli = 500}}}};
  auto first = sampler.Sample(assignment, Timestamp::FromMillis(0));
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  EXPECT_EQ((*first)[0].utilization_percent, 0);  // the first sample is the baseline
  EXPECT_EQ((*first)[1].utilization_percent, 0);

  // 2 s later: pod 100 used 40 + 60 = 100 ticks = 1 s -> rate 0.5; pod 200
  // 400 ticks = 4 s (two cores) -> rate 2, clamped to 1; pod 300 20 ticks -> 0.1.
  WriteStat(proc, 100, 100, 50, 100);
  WriteStat(proc, 101, 100, 65, 50);
  WriteStat(proc, 200, 200, 400, 1000);
  WriteStat(proc, 300, 300, 20, 0);
  WriteStat(proc, 999, 999, 1000, 7);
  auto second = sampler.Sample(assignment, Timestamp::FromMillis(2000));
  ASSERT_TRUE(second.has_value()) << second.error().ToString();
  EXPECT_EQ(*second, (std::vector<GpuUsage>{
                         // 0.5 * 1000/1000 = 50%; RSS (100 + 50) pages * 4096
                         {.index = 0, .utilization_percent = 50, .memory_used_bytes = 150 * 4096},
                         // 1 * 500/1000 + 0.1 * 500/1000 = 0.55 -> 55%; RSS 1000 pages * 4096
                         {.index = 1, .utilization_percent = 55, .memory_used_bytes = 1000 * 4096},
                     }));
}

TEST(SimulatedGpuSamplerTest, ProcessesJoiningAndLeavingAPodAreCountedOnce) {
  // Pod 100 has child 101; then 101 exits and 102 appears (its 30 ticks all
  // fall in the interval), and 100's cutime grows by 7 as it reaps a child.
  TempDir proc;
  WriteStat(proc, 100, 100, 10, 0);
  WriteStat(proc, 101, 100, 5, 0);
  SimulatedGpuSampler sampler = MakeFakeProcSampler(proc, "1xH100-80GB");
  const GpuAssignment assignment{{0, {{.pid = 100}}}};
  ASSERT_TRUE(sampler.Sample(assignment, Timestamp::FromMillis(0)).has_value());

  std::filesystem::remove_all(proc.path() / "101");
  WriteStat(proc, 100, 100, 13, 0, 1000, /*child_ticks=*/7);
  WriteStat(proc, 102, 100, 30, 0);
  auto sample = sampler.Sample(assignment, Timestamp::FromMillis(1000));
  ASSERT_TRUE(sample.has_value()) << sample.error().ToString();
  // (3 + 7) + 30 = 40 ticks = 0.4 s in 1 s -> 40%.
  EXPECT_EQ((*sample)[0].utilization_percent, 40);
}

TEST(SimulatedGpuSamplerTest, AReusedPidStartsFromZero) {
  // Pid 100 is a new process (another start time) with 20 ticks: only those count.
  TempDir proc;
  WriteStat(proc, 100, 100, 500, 0, /*start=*/1000);
  SimulatedGpuSampler sampler = MakeFakeProcSampler(proc, "1xH100-80GB");
  const GpuAssignment assignment{{0, {{.pid = 100}}}};
  ASSERT_TRUE(sampler.Sample(assignment, Timestamp::FromMillis(0)).has_value());
  WriteStat(proc, 100, 100, 20, 0, /*start=*/5000);
  auto sample = sampler.Sample(assignment, Timestamp::FromMillis(1000));
  ASSERT_TRUE(sample.has_value()) << sample.error().ToString();
  EXPECT_EQ((*sample)[0].utilization_percent, 20);  // 20 ticks = 0.2 s in 1 s
}

TEST(SimulatedGpuSamplerTest, APodOnTwoDevicesCountsFullyOnEachAndSplitsItsMemory) {
  // Pod 100 on both devices (whole GPUs), 50 ticks in 1 s -> 50% on each;
  // RSS 200 pages split over 2 devices -> 100 pages each.
  TempDir proc;
  WriteStat(proc, 100, 100, 0, 200);
  SimulatedGpuSampler sampler = MakeFakeProcSampler(proc);
  const GpuAssignment assignment{{0, {{.pid = 100}}}, {1, {{.pid = 100}}}, {7, {{.pid = 100}}}};  // 7: not a device
  ASSERT_TRUE(sampler.Sample(assignment, Timestamp::FromMillis(0)).has_value());
  WriteStat(proc, 100, 100, 50, 200);
  auto sample = sampler.Sample(assignment, Timestamp::FromMillis(1000));
  ASSERT_TRUE(sample.has_value()) << sample.error().ToString();
  // Three listings of pod 100 (device 7 too) -> RSS / 3 on each real device.
  EXPECT_EQ(*sample, (std::vector<GpuUsage>{
                         {.index = 0, .utilization_percent = 50, .memory_used_bytes = 200 * 4096 / 3},
                         {.index = 1, .utilization_percent = 50, .memory_used_bytes = 200 * 4096 / 3},
                     }));
}

TEST(SimulatedGpuSamplerTest, TimeWaitingForACpuCountsAsBusyUnlessTurnedOff) {
  // In 1 s pod 100 ran 30 ticks (0.3 s) and waited 0.5 s on a run queue:
  // 0.8 s of demand -> 80%; counting CPU time only -> 30%.
  for (const bool count_wait : {true, false}) {
    TempDir proc;
    WriteStat(proc, 100, 100, 0, 0);
    proc.Write("100/schedstat", "0 0 0\n");
    SimulatedGpuSampler sampler(*ParseSimulatedInventory("1xH100-80GB"),
                                {.proc_root = proc.path().string(), .clock_ticks_per_second = 100, .page_size = 4096,
                                 .count_runqueue_wait = count_wait});
    const GpuAssignment assignment{{0, {{.pid = 100}}}};
    ASSERT_TRUE(sampler.Sample(assignment, Timestamp::FromMillis(0)).has_value());
    WriteStat(proc, 100, 100, 30, 0);
    proc.Write("100/schedstat", "300000000 500000000 40\n");
    auto sample = sampler.Sample(assignment, Timestamp::FromMillis(1000));
    ASSERT_TRUE(sample.has_value()) << sample.error().ToString();
    EXPECT_EQ((*sample)[0].utilization_percent, count_wait ? 80 : 30);
  }
}

TEST(SimulatedGpuSamplerTest, ASampleThatDoesNotAdvanceTimeRepeatsThePreviousOne) {
  TempDir proc;
  WriteStat(proc, 100, 100, 0, 0);
  SimulatedGpuSampler sampler = MakeFakeProcSampler(proc, "1xH100-80GB");
  const GpuAssignment assignment{{0, {{.pid = 100}}}};
  ASSERT_TRUE(sampler.Sample(assignment, Timestamp::FromMillis(0)).has_value());
  WriteStat(proc, 100, 100, 30, 0);
  auto at_1s = sampler.Sample(assignment, Timestamp::FromMillis(1000));
  ASSERT_TRUE(at_1s.has_value());
  EXPECT_EQ((*at_1s)[0].utilization_percent, 30);
  WriteStat(proc, 100, 100, 90, 0);
  auto again = sampler.Sample(assignment, Timestamp::FromMillis(1000));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, *at_1s);
}

// One 10 ms tick in 200 ms would read as 5 %, the idle threshold: a rate is
// measured over at least a second, and a sooner call keeps the baseline.
TEST(SimulatedGpuSamplerTest, ARateIsMeasuredOverAtLeastASecond) {
  TempDir proc;
  WriteStat(proc, 100, 100, 0, 0);
  SimulatedGpuSampler sampler = MakeFakeProcSampler(proc, "1xH100-80GB");
  const GpuAssignment assignment{{0, {{.pid = 100}}}};
  ASSERT_TRUE(sampler.Sample(assignment, Timestamp::FromMillis(0)).has_value());
  WriteStat(proc, 100, 100, 1, 0);
  auto soon = sampler.Sample(assignment, Timestamp::FromMillis(200));
  ASSERT_TRUE(soon.has_value());
  EXPECT_EQ((*soon)[0].utilization_percent, 0) << "the previous result: too soon to measure";
  auto at_1s = sampler.Sample(assignment, Timestamp::FromMillis(1000));
  ASSERT_TRUE(at_1s.has_value());
  EXPECT_EQ((*at_1s)[0].utilization_percent, 1) << "one tick over the whole second";
}

TEST(SimulatedGpuSamplerTest, AnUnreadableProcRootIsAnIoError) {
  SimulatedGpuSampler sampler(*ParseSimulatedInventory("1xH100-80GB"), {.proc_root = "/nonexistent/proc"});
  auto sample = sampler.Sample({{0, {{.pid = 1}}}}, Timestamp::FromMillis(0));
  ASSERT_FALSE(sample.has_value());
  EXPECT_EQ(sample.error().code(), StatusCode::kIoError);
}

// ---- SimulatedGpuSampler on real processes ----------------------------------------

// A child running `sh -c script` as the leader of its own process group (as a
// pod runs); killed with its group at the end of the scope.
class Child {
 public:
  explicit Child(const std::string& script) {
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    std::string sh = "/bin/sh", c = "-c", s = script;
    char* argv[] = {sh.data(), c.data(), s.data(), nullptr};
    if (posix_spawn(&pid_, "/bin/sh", nullptr, &attr, argv, environ) != 0) pid_ = -1;
    posix_spawnattr_destroy(&attr);
  }
  ~Child() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

Timestamp SteadyNow() {
  return Timestamp::FromMillis(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Samples `assignment` every ~400 ms until `done` holds for a sample (a loaded
// machine may need a few tries), and returns the last sample.
template <typename Done>
std::vector<GpuUsage> SampleUntil(SimulatedGpuSampler& sampler, const GpuAssignment& assignment, Done done) {
  std::vector<GpuUsage> last;
  if (!sampler.Sample(assignment, SteadyNow()).has_value()) return last;  // the baseline
  for (int attempt = 0; attempt < 10; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    auto sample = sampler.Sample(assignment, SteadyNow());
    if (!sample.has_value()) return {};
    last = *sample;
    if (done(last)) break;
  }
  return last;
}

TEST(SimulatedGpuSamplerTest, ABusyPodShowsHighUtilisationAndASleepingOneNearZero) {
  // Device 0: a busy loop (one core: 100% of a whole GPU); device 1: `sleep 5`.
  Child busy("while :; do :; done");
  Child sleeping("sleep 5");
  ASSERT_GT(busy.pid(), 0);
  ASSERT_GT(sleeping.pid(), 0);
  SimulatedGpuSampler sampler(*ParseSimulatedInventory("2xH100-80GB"));
  const GpuAssignment assignment{{0, {{.pid = busy.pid(), .milli = 1000}}},
                                 {1, {{.pid = sleeping.pid(), .milli = 1000}}}};
  const std::vector<GpuUsage> last = SampleUntil(sampler, assignment, [](const std::vector<GpuUsage>& u) {
    return u[0].utilization_percent > 50 && u[1].utilization_percent < 10;
  });
  ASSERT_EQ(last.size(), 2u);
  EXPECT_GT(last[0].utilization_percent, 50);
  EXPECT_LT(last[1].utilization_percent, 10);
  EXPECT_GT(last[0].memory_used_bytes, 0);  // the shells' resident sets
  EXPECT_GT(last[1].memory_used_bytes, 0);
}

TEST(SimulatedGpuSamplerTest, ABusyChildInThePodsProcessGroupCounts) {
  // The pod's leader only waits; its background subshell (same process group) spins.
  Child parent("(while :; do :; done) & wait");
  ASSERT_GT(parent.pid(), 0);
  SimulatedGpuSampler sampler(*ParseSimulatedInventory("1xH100-80GB"));
  const GpuAssignment assignment{{0, {{.pid = parent.pid(), .milli = 1000}}}};
  const std::vector<GpuUsage> last =
      SampleUntil(sampler, assignment, [](const std::vector<GpuUsage>& u) { return u[0].utilization_percent > 50; });
  ASSERT_EQ(last.size(), 1u);
  EXPECT_GT(last[0].utilization_percent, 50);
}

TEST(SimulatedGpuSamplerTest, AHalfGpuBusyPodShowsAtMostHalfTheDevice) {
  // A busy loop holding 0.5 GPU: 100% of its share = 50% of the device (the
  // loop gets at most one core, so never more).
  Child busy("while :; do :; done");
  ASSERT_GT(busy.pid(), 0);
  SimulatedGpuSampler sampler(*ParseSimulatedInventory("1xH100-80GB"));
  const GpuAssignment assignment{{0, {{.pid = busy.pid(), .milli = 500}}}};
  const std::vector<GpuUsage> last =
      SampleUntil(sampler, assignment, [](const std::vector<GpuUsage>& u) { return u[0].utilization_percent > 25; });
  ASSERT_EQ(last.size(), 1u);
  EXPECT_GT(last[0].utilization_percent, 25);
  EXPECT_LE(last[0].utilization_percent, 50);
}

}  // namespace
}  // namespace tessera
