// GPUs inside a container, as NVIDIA's container toolkit gives them: a CDI
// spec (Container Device Interface, github.com/cncf-tags/container-device-
// interface, kind nvidia.com/gpu) of the node's devices, and the edits of a
// pod's own devices applied to its OCI config, so that the container sees
// exactly its GPUs (docs/agent.md, "GPUs in containers").
//
// The spec, written by the agent at start to <data-dir>/cdi/nvidia.com-gpu.json:
//   - one device per GPU, named by its index ("0", "1", ...), whose edits are
//     its device node /dev/nvidia<index>;
//   - edits common to every device: the control nodes /dev/nvidiactl,
//     /dev/nvidia-uvm, /dev/nvidia-uvm-tools (those that exist), and the
//     driver's user-space libraries (libcuda.so*, libnvidia-ml.so*,
//     libnvidia-ptxjitcompiler.so*, ... found in the usual library
//     directories) bind-mounted read-only at the same paths, with
//     nvidia-smi when it is there.
// Device nodes are looked up under a device root (--device-root, /dev by
// default; tests point it at stand-in nodes they make), and each carries its
// type, major and minor (stat) so that applying a spec needs no I/O. Where
// `nvidia-ctk` is installed, its `nvidia-ctk cdi generate` spec is taken
// instead (it knows every library and hook of the installed driver).
//
// Applying devices to a config: linux.devices gets their nodes,
// linux.resources.devices an allow rule for exactly each (after the default
// deny), mounts their mounts, process.env their env, hooks their hooks.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "domain/node.h"

namespace tessera {

inline constexpr const char* kNvidiaCdiKind = "nvidia.com/gpu";

struct CdiOptions {
  std::string device_root = "/dev";
  // Where the driver's libraries are looked for; empty: the usual ones
  // (DefaultDriverLibraryDirs).
  std::vector<std::string> library_dirs;
};

std::vector<std::string> DefaultDriverLibraryDirs();

// The driver's user-space libraries in `dirs` (libcuda.so*, libnvidia-ml.so*,
// libnvidia-ptxjitcompiler.so*, libnvidia-nvvm.so*, libnvidia-gpucomp.so*,
// libcudadebugger.so*, libnvidia-allocator.so*, libnvidia-cfg.so*,
// libnvidia-opencl.so*, libnvidia-fatbinaryloader.so*), sorted; symbolic links
// are listed as the names they are.
std::vector<std::string> FindDriverLibraries(const std::vector<std::string>& dirs);

// The node's spec, from its devices (NVML's or the simulated inventory's).
// A GPU whose device node is missing under the device root is left out, with
// a note; `notes` gets one line per such fact (no libraries found, ...).
nlohmann::json NvidiaCdiSpec(const std::vector<GpuDevice>& devices, const CdiOptions& options,
                             std::vector<std::string>* notes);

// Fills in type, major, minor and fileMode of each deviceNode from stat() of
// its hostPath (or path) under nothing but itself: for specs made elsewhere
// (nvidia-ctk's). A node that cannot be read is an error naming it.
Status ResolveCdiDeviceNodes(nlohmann::json& spec);

// Whether `spec` lists a device of that name.
bool CdiHasDevice(const nlohmann::json& spec, const std::string& name);

// nvidia-ctk in PATH, or "".
std::string FindNvidiaCtk();

// The spec the agent uses: `nvidia-ctk cdi generate` written to `output` (its
// device nodes resolved) when nvidia-ctk is installed and the device root is
// /dev, else NvidiaCdiSpec. `notes` says which, and what is missing.
Result<nlohmann::json> NodeCdiSpec(const std::vector<GpuDevice>& devices, const CdiOptions& options,
                                   const std::string& output, std::vector<std::string>* notes);

// Applies the devices `names` of `spec` (and its common edits) to an OCI
// runtime config. NotFound naming a device the spec lacks.
Status ApplyCdiDevices(const nlohmann::json& spec, const std::vector<std::string>& names, nlohmann::json& config);

}  // namespace tessera
