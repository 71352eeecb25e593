#include "agent/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

namespace tessera {

namespace {

// ---- The NVML ABI used here, declared after the public API (nvml.h of the
// CUDA toolkit); only what the calls below need.
using nvmlReturn_t = int;  // an enum in C: int-sized
constexpr nvmlReturn_t NVML_SUCCESS = 0;
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlEnableState_t = int;  // enum nvmlEnableState_enum
constexpr nvmlEnableState_t NVML_FEATURE_ENABLED = 1;

struct nvmlMemory_t {  // nvmlMemory_st (v1), bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct nvmlUtilization_t {  // nvmlUtilization_st, percent
  unsigned int gpu;
  unsigned int memory;
};
struct nvmlPciInfo_t {  // nvmlPciInfo_st, as filled by the _v2/_v3 calls
  char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
};
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlPciInfo_t) == 68);

constexpr unsigned int kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
constexpr unsigned int kNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned int kUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*device_count)(unsigned int*);
  nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*memory_info)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*);
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned int, nvmlEnableState_t*);
  nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned int, nvmlPciInfo_t*);
  nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t*);

  std::string Error(nvmlReturn_t rc) const {
    const char* s = error_string(rc);
    return s != nullptr ? fmt::format("{} (NVML error {})", s, rc) : fmt::format("NVML error {}", rc);
  }
};

namespace {

// A PCI function address; vertices of the NVLink graph.
using PciAddress = std::tuple<unsigned int, unsigned int, unsigned int>;  // domain, bus, device
PciAddress AddressOf(const nvmlPciInfo_t& pci) { return {pci.domain, pci.bus, pci.device}; }

// "NVIDIA H100 80GB HBM3" -> "H100-80GB-HBM3".
std::string ModelFromName(std::string name) {
  constexpr std::string_view kVendor = "NVIDIA ";
  if (name.starts_with(kVendor)) name.erase(0, kVendor.size());
  std::replace(name.begin(), name.end(), ' ', '-');
  return name;
}

// Disjoint sets over vertex numbers, for the NVLink components.
class UnionFind {
 public:
  int Add() {
    parent_.push_back(static_cast<int>(parent_.size()));
    return parent_.back();
  }
  int Find(int v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int> parent_;
};

template <typename Fn>
Status Resolve(void* handle, const std::string& library, const char* symbol, Fn* out) {
  dlerror();
  void* p = dlsym(handle, symbol);
  if (p == nullptr) {
    return Status::Unavailable(
        fmt::format("NVML unusable ({} has no symbol {}: the NVIDIA driver is too old, or this is not NVML)", library,
                    symbol));
  }
  *out = reinterpret_cast<Fn>(p);
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Nvml>> Nvml::Load(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    const std::string why = error != nullptr ? error : "unknown dlopen error";
    // glibc's message when the library itself (not one of its dependencies) is
    // nowhere on the search path: "<library>: cannot open shared object file:
    // No such file or directory" (in the C locale, which the agent keeps).
    if (why.starts_with(library + ":") && why.find("No such file or directory") != std::string::npos) {
      return Err(Status::Unavailable(fmt::format("no NVIDIA driver ({} not found)", library)));
    }
    return Err(Status::Unavailable(fmt::format("cannot load NVML ({})", why)));
  }
  auto api = std::make_unique<Api>();
  const Status resolved = [&]() -> Status {
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlInit_v2", &api->init));
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlShutdown", &api->shutdown));
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlErrorString", &api->error_string));
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlDeviceGetCount_v2", &api->device_count));
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlDeviceGetHandleByIndex_v2", &api->handle_by_index));
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlDeviceGetUUID", &api->uuid));
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlDeviceGetName", &api->name));
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlDeviceGetMemoryInfo", &api->memory_info));
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlDeviceGetUtilizationRates", &api->utilization));
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlDeviceGetNvLinkState", &api->nvlink_state));
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &api->nvlink_remote_pci));
    RETURN_IF_ERROR(Resolve(handle, library, "nvmlDeviceGetPciInfo_v3", &api->pci_info));
    return Status::Ok();
  }();
  if (!resolved.ok()) {
    dlclose(handle);
    return Err(resolved);
  }
  if (const nvmlReturn_t rc = api->init(); rc != NVML_SUCCESS) {
    const std::string why = api->Error(rc);
    dlclose(handle);
    return Err(Status::Unavailable(fmt::format("NVML ({}) failed to initialise: {}", library, why)));
  }
  return std::unique_ptr<Nvml>(new Nvml(library, handle, std::move(api)));
}

Nvml::Nvml(std::string library, void* handle, std::unique_ptr<Api> api)
    : library_(std::move(library)), handle_(handle), api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  dlclose(handle_);
}

namespace {

// Calls `fn(index, handle)` for every device; the first failure is returned.
template <typename Fn>
Status ForEachDevice(const Nvml::Api& api, Fn fn) {
  unsigned int count = 0;
  if (const nvmlReturn_t rc = api.device_count(&count); rc != NVML_SUCCESS) {
    return Status::Unavailable(fmt::format("nvmlDeviceGetCount_v2: {}", api.Error(rc)));
  }
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (const nvmlReturn_t rc = api.handle_by_index(i, &device); rc != NVML_SUCCESS) {
      return Status::Unavailable(fmt::format("nvmlDeviceGetHandleByIndex_v2 (GPU {}): {}", i, api.Error(rc)));
    }
    RETURN_IF_ERROR(fn(i, device));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<GpuDevice>> Nvml::Devices() const {
  const Api& api = *api_;
  std::vector<GpuDevice> out;
  // NVLink graph: vertex per local GPU (its own PCI address) and per remote end.
  UnionFind graph;
  std::map<PciAddress, int> vertex_of;
  auto vertex = [&](const PciAddress& a) {
    auto [it, inserted] = vertex_of.try_emplace(a, 0);
    if (inserted) it->second = graph.Add();
    return it->second;
  };
  std::vector<int> gpu_vertex;  // by device index; -1 when the GPU's own address is unknown
  std::vector<std::vector<PciAddress>> remotes;  // by device index: remote ends of active links

  const Status st = ForEachDevice(api, [&](unsigned int i, nvmlDevice_t device) -> Status {
    auto failed = [&](std::string_view call, nvmlReturn_t rc) {
      return Status::Unavailable(fmt::format("{} (GPU {}): {}", call, i, api.Error(rc)));
    };
    char uuid[kUuidBufferSize] = {};
    if (const nvmlReturn_t rc = api.uuid(device, uuid, sizeof(uuid)); rc != NVML_SUCCESS) {
      return failed("nvmlDeviceGetUUID", rc);
    }
    char name[kNameBufferSize] = {};
    if (const nvmlReturn_t rc = api.name(device, name, sizeof(name)); rc != NVML_SUCCESS) {
      return failed("nvmlDeviceGetName", rc);
    }
    nvmlMemory_t memory{};
    if (const nvmlReturn_t rc = api.memory_info(device, &memory); rc != NVML_SUCCESS) {
      return failed("nvmlDeviceGetMemoryInfo", rc);
    }
    uuid[sizeof(uuid) - 1] = '\0';
    name[sizeof(name) - 1] = '\0';
    out.push_back(GpuDevice{.index = static_cast<int32_t>(i),
                            .uuid = uuid,
                            .model = ModelFromName(name),
                            .memory_bytes = static_cast<int64_t>(memory.total),
                            .nvlink_domain = 0});

    // Topology is best effort: a GPU whose links cannot be read stands alone.
    nvmlPciInfo_t pci{};
    gpu_vertex.push_back(api.pci_info(device, &pci) == NVML_SUCCESS ? vertex(AddressOf(pci)) : -1);
    remotes.emplace_back();
    if (gpu_vertex.back() < 0) return Status::Ok();
    for (unsigned int link = 0; link < kNvlinkMaxLinks; ++link) {
      nvmlEnableState_t active = 0;
      if (api.nvlink_state(device, link, &active) != NVML_SUCCESS || active != NVML_FEATURE_ENABLED) continue;
      nvmlPciInfo_t remote{};
      if (api.nvlink_remote_pci(device, link, &remote) != NVML_SUCCESS) continue;
      remotes.back().push_back(AddressOf(remote));
    }
    return Status::Ok();
  });
  RETURN_IF_ERROR(st);

  for (size_t i = 0; i < out.size(); ++i) {
    for (const PciAddress& r : remotes[i]) graph.Union(gpu_vertex[i], vertex(r));
  }
  // Number components by their lowest device index; an isolated GPU gets its own.
  std::map<int, int32_t> domain_of_root;
  int32_t next_domain = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (gpu_vertex[i] < 0) {
      out[i].nvlink_domain = next_domain++;
      continue;
    }
    auto [it, inserted] = domain_of_root.try_emplace(graph.Find(gpu_vertex[i]), next_domain);
    if (inserted) ++next_domain;
    out[i].nvlink_domain = it->second;
  }
  return out;
}

Result<std::vector<GpuUsage>> Nvml::Sample() const {
  const Api& api = *api_;
  std::vector<GpuUsage> out;
  const Status st = ForEachDevice(api, [&](unsigned int i, nvmlDevice_t device) -> Status {
    nvmlUtilization_t util{};
    if (const nvmlReturn_t rc = api.utilization(device, &util); rc != NVML_SUCCESS) {
      return Status::Unavailable(fmt::format("nvmlDeviceGetUtilizationRates (GPU {}): {}", i, api.Error(rc)));
    }
    nvmlMemory_t memory{};
    if (const nvmlReturn_t rc = api.memory_info(device, &memory); rc != NVML_SUCCESS) {
      return Status::Unavailable(fmt::format("nvmlDeviceGetMemoryInfo (GPU {}): {}", i, api.Error(rc)));
    }
    out.push_back(GpuUsage{.index = static_cast<int32_t>(i),
                           .utilization_percent = static_cast<int32_t>(std::min(util.gpu, 100u)),
                           .memory_used_bytes = static_cast<int64_t>(memory.used)});
    return Status::Ok();
  });
  RETURN_IF_ERROR(st);
  return out;
}

}  // namespace tessera
