// The GPUs of this machine and how busy they are: found through NVML when a
// driver is present, or a simulated inventory such as "8xH100-80GB" on
// machines without one, so that everything else can be developed and tested.
//
// DiscoverGpus chooses the source and says why, in one line for `tessera up`
// and `tessera agent` to print. SimulatedGpuSampler stands in for NVML's
// utilisation on simulated GPUs: it follows the CPU activity of the pods
// assigned to each device, so that idle detection can be tested without GPUs.
//
// Thread-safety: the free functions are thread-safe. A SimulatedGpuSampler is
// not (one sampling loop owns it); a GpuInventory is a value (move-only).
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/nvml.h"
#include "common/result.h"
#include "common/time.h"
#include "domain/node.h"

namespace tessera {

// ---- Simulated inventories -------------------------------------------------

// "8xH100-80GB", "2xA100-40GB,1xT4-16GB": COUNT x MODEL, the model ending in
// its memory size (GB, as vendors write it, taken as GiB). Devices are indexed
// in order; every 4 consecutive devices share an NVLink domain.
Result<std::vector<GpuDevice>> ParseSimulatedInventory(std::string_view spec);

// A JSON list of devices, with the keys of the tessera.dev/gpus node annotation
// (so that a real node's annotation can be replayed):
//   [{"model": "H100-80GB", "memoryBytes": 85899345920, "uuid": "GPU-...",
//     "index": 0, "nvlinkDomain": 0}, ...]
// "model" is required; "memoryBytes" may be left out when the model ends in its
// size ("H100-80GB" -> 80 GiB); "uuid" defaults to a simulated one; "index",
// when given, must be the entry's position; "nvlinkDomain" defaults to
// position / 4 as in a spec. Other keys are errors (they would be typos).
Result<std::vector<GpuDevice>> ParseSimulatedInventoryJson(std::string_view json);

// `spec_or_path` is a file when it contains '/' or names an existing file,
// else a spec as above. A file holds either a JSON list (its first non-blank
// character is '[') or a spec, possibly over several lines that are joined
// with ',', with '#' starting a comment:
//   # the lab's test node
//   4xH100-80GB
//   4xA100-40GB
Result<std::vector<GpuDevice>> LoadSimulatedInventory(std::string_view spec_or_path);

// "8xH100-80GB", "2xA100-40GB,1xT4-16GB": consecutive devices of one model
// counted together, for messages; "no GPUs" when empty.
std::string DescribeInventory(const std::vector<GpuDevice>& devices);

// True when libnvidia-ml.so.1 can be loaded (an NVIDIA driver is installed).
bool NvidiaDriverPresent();

// ---- Discovery ---------------------------------------------------------------

enum class GpuSource { kNvml, kSimulated };
std::string_view GpuSourceName(GpuSource source);  // "nvml", "simulated"

enum class GpuPreference {
  kAuto,       // NVML when it loads and lists a GPU, else the simulated inventory (see DiscoverGpus)
  kNvml,       // NVML or an error: for nodes that must not pretend
  kSimulated,  // the simulated inventory even where a driver is installed
};

struct GpuDiscoveryOptions {
  // A spec or a file (see LoadSimulatedInventory); read only when used.
  std::string simulated = "8xH100-80GB";
  GpuPreference preference = GpuPreference::kAuto;
  std::string nvml_library = Nvml::kDefaultLibrary;
};

struct GpuInventory {
  std::vector<GpuDevice> devices;
  GpuSource source = GpuSource::kSimulated;
  // Which source and why, one line, such as "no NVIDIA driver
  // (libnvidia-ml.so.1 not found): simulated inventory 8xH100-80GB".
  std::string reason;
  // The loaded library when source is kNvml (for Sample()), else null.
  std::unique_ptr<Nvml> nvml;

  bool simulated() const { return source == GpuSource::kSimulated; }
};

// Steps: 1. unless kSimulated, load NVML and list its devices; 2. with at
// least one GPU, that is the inventory; 3. when NVML loads but listing its
// GPUs fails, that is an error (Unavailable) in every mode: a machine with a
// working driver never advertises simulated GPUs by accident; 4. when NVML
// does not load (no library, a missing symbol, nvmlInit_v2 failing, as with a
// driver package but no kernel module) or lists no GPU, kNvml fails with that
// reason (Unavailable) and kAuto falls back to options.simulated, whose errors
// (InvalidArgument, NotFound, IoError) are returned as they are.
Result<GpuInventory> DiscoverGpus(const GpuDiscoveryOptions& options);

// ---- Simulated utilisation ----------------------------------------------------

// A pod on a device: the pid that leads its process group, and its fraction of
// the device in milli-GPU (1000 = the whole device).
struct GpuProcessShare {
  pid_t pid = 0;
  int64_t milli = 1000;
};

// Device index -> the pods using it.
using GpuAssignment = std::map<int32_t, std::vector<GpuProcessShare>>;

// The model, per sample interval (between two Sample calls):
//   - A pod's processes are its pid and every process whose process group is
//     that pid (one /proc scan per Sample). Their CPU time is
//     utime + stime + cutime + cstime from /proc/<pid>/stat, so that children
//     reaped within the interval count too.
//   - Where /proc/<pid>/schedstat exists and count_runqueue_wait is set (the
//     default), the time each process spent runnable but waiting for a CPU
//     (its second field, ns) is added to its CPU time: the rate is then the
//     CPU the pod asked for, not the CPU it got, so that a busy pod still
//     shows ~100% on an overloaded machine (a busy loop on 2 cores with a load
//     of 8 gets ~30% of a core) and is not taken for idle.
//   - rate(pod) = CPU-seconds used in the interval / wall seconds of the
//     interval, summed over the pod's processes: per process, the increase
//     since the previous Sample; a process new to a pod seen before counts
//     all its CPU time; one that exited is no longer counted. A pod seen for
//     the first time has rate 0 (it only sets the baseline).
//   - utilisation(device) = min(100, sum over its pods of
//       min(1, rate(pod)) * milli / 1000 * 100)
//     so a pod busy on one core shows 100% of its share; a pod on several
//     devices counts in full on each (a busy multi-GPU pod never looks idle).
//   - memory_used(device) = min(device memory, sum over its pods of
//       RSS(pod) / number of devices the pod is on)
//     with RSS the resident set of the pod's processes (field 24, pages).
// Timestamps are passed in (any monotonic milliseconds); /proc is read for real.
class SimulatedGpuSampler {
 public:
  struct Options {
    std::string proc_root = "/proc";
    int64_t clock_ticks_per_second = 0;  // 0: sysconf(_SC_CLK_TCK)
    int64_t page_size = 0;               // 0: sysconf(_SC_PAGESIZE)
    bool count_runqueue_wait = true;     // see the model above
    // The shortest interval a rate is measured over; a call sooner returns the
    // previous result. CPU time comes in clock ticks (10 ms): over 200 ms one
    // tick of a process that only woke to answer a request reads as 5 %, the
    // idle threshold; over 1 s it reads as 1 % (NVML averages over up to 1 s too).
    int64_t min_interval_ms = 1000;
  };

  explicit SimulatedGpuSampler(std::vector<GpuDevice> devices);
  SimulatedGpuSampler(std::vector<GpuDevice> devices, Options options);

  // One GpuUsage per device, in device order. Devices of `assignment` that are
  // not in the inventory are ignored. A call whose `now` is not at least
  // options.min_interval_ms after the previous one returns the previous result
  // unchanged (and keeps its baseline). Errors: IoError when
  // proc_root cannot be listed.
  Result<std::vector<GpuUsage>> Sample(const GpuAssignment& assignment, Timestamp now);

 private:
  struct ProcessTicks {
    uint64_t start_time = 0;  // field 22, tells a reused pid apart
    int64_t ticks = 0;        // utime + stime + cutime + cstime
    int64_t wait_ns = 0;      // runnable, waiting for a CPU (schedstat), or 0
  };
  using PodTicks = std::map<pid_t, ProcessTicks>;  // member pid -> ticks

  std::vector<GpuDevice> devices_;
  Options options_;
  std::optional<Timestamp> last_time_;
  std::map<pid_t, PodTicks> last_ticks_;  // pod pid -> its processes at the last sample
  std::vector<GpuUsage> last_result_;
};

}  // namespace tessera
