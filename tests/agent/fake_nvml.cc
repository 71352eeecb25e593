// A fake libnvidia-ml: the few NVML C symbols the agent resolves, over a
// made-up machine, so that Nvml's loader and topology code run without a
// driver. Built as a shared library (fake_nvml) that tests dlopen by path.
//
// The machine (defaults: 2 GPUs, one NVLink between them):
//   GPU i: UUID "GPU-FAKE0000-0000-0000-0000-00000000000i", name
//          "NVIDIA H100 80GB HBM3", 81559 MiB total, (i + 1) GiB used,
//          utilisation 37 + 20 * i %, PCI 0000:(0x10 + i):00.0; links 0..5.
// Environment, read at each call, to vary it:
//   FAKE_NVML_GPUS=N        N GPUs (1..8)
//   FAKE_NVML_LINKS=...     "a-b,..." one active NVLink per pair, a and b GPU
//                           indexes or "sK" for NVSwitch K (PCI 0000:(0xc0 + K):00.0);
//                           default "0-1"; empty for none
//   FAKE_NVML_INIT_ERROR=E  nvmlInit_v2 returns E
//   FAKE_NVML_FAIL=NAME     the function NAME returns 999 (Unknown Error)
// fake_nvml_init_count() returns the init reference count (for shutdown tests).
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {

typedef int nvmlReturn_t;
typedef int nvmlEnableState_t;
struct nvmlDevice_st {
  unsigned int index;
};
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

}  // extern "C"

namespace {

constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kUninitialized = 1;
constexpr nvmlReturn_t kInvalidArgument = 2;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr nvmlReturn_t kUnknown = 999;
constexpr unsigned int kMaxGpus = 8;
constexpr unsigned int kLinksPerGpu = 6;

int init_count = 0;
nvmlDevice_st devices[kMaxGpus] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};

unsigned int GpuCount() {
  const char* v = std::getenv("FAKE_NVML_GPUS");
  if (v == nullptr) return 2;
  const int n = std::atoi(v);
  return n < 1 ? 1 : (n > static_cast<int>(kMaxGpus) ? kMaxGpus : static_cast<unsigned int>(n));
}

bool Fails(const char* function) {
  const char* v = std::getenv("FAKE_NVML_FAIL");
  return v != nullptr && std::strcmp(v, function) == 0;
}

// Endpoint: a GPU index, or 100 + K for NVSwitch K.
int ParseEndpoint(const char* s, const char** end) {
  int base = 0;
  if (*s == 's') {
    base = 100;
    ++s;
  }
  char* e = nullptr;
  const long v = std::strtol(s, &e, 10);
  *end = e;
  return e == s ? -1 : base + static_cast<int>(v);
}

// The remote endpoint of `link` on GPU `gpu`, or -1 when that link is down.
// Links are handed out in the order of FAKE_NVML_LINKS.
int RemoteOf(unsigned int gpu, unsigned int link) {
  const char* spec = std::getenv("FAKE_NVML_LINKS");
  if (spec == nullptr) spec = "0-1";
  unsigned int used = 0;
  const char* p = spec;
  while (*p != '\0') {
    const char* e = nullptr;
    const int a = ParseEndpoint(p, &e);
    if (a < 0 || *e != '-') return -1;
    const int b = ParseEndpoint(e + 1, &e);
    if (b < 0) return -1;
    p = *e == ',' ? e + 1 : e;
    int remote = -1;
    if (a == static_cast<int>(gpu)) remote = b;
    else if (b == static_cast<int>(gpu)) remote = a;
    if (remote < 0) continue;
    if (used == link) return remote;
    ++used;
  }
  return -1;
}

void FillPci(int endpoint, nvmlPciInfo_t* pci) {
  std::memset(pci, 0, sizeof(*pci));
  pci->domain = 0;
  pci->bus = endpoint >= 100 ? 0xc0 + static_cast<unsigned int>(endpoint - 100)
                             : 0x10 + static_cast<unsigned int>(endpoint);
  pci->device = 0;
  pci->pciDeviceId = endpoint >= 100 ? 0x22a310de : 0x233010de;
  std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", pci->bus);
  std::snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", pci->bus);
}

// The checks every device call makes first.
nvmlReturn_t Check(const char* function, nvmlDevice_t device) {
  if (init_count == 0) return kUninitialized;
  if (device == nullptr || device->index >= GpuCount()) return kInvalidArgument;
  if (Fails(function)) return kUnknown;
  return kSuccess;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int fake_nvml_init_count() { return init_count; }

__attribute__((visibility("default"))) nvmlReturn_t nvmlInit_v2() {
  if (const char* e = std::getenv("FAKE_NVML_INIT_ERROR")) return std::atoi(e);
  ++init_count;
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlShutdown() {
  if (init_count == 0) return kUninitialized;
  --init_count;
  return kSuccess;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 7: return "Insufficient Size";
    case 9: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (init_count == 0) return kUninitialized;
  if (Fails("nvmlDeviceGetCount_v2")) return kUnknown;
  *count = GpuCount();
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                                                 nvmlDevice_t* device) {
  if (init_count == 0) return kUninitialized;
  if (index >= GpuCount()) return kInvalidArgument;
  *device = &devices[index];
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                                     unsigned int length) {
  if (nvmlReturn_t rc = Check("nvmlDeviceGetUUID", device); rc != kSuccess) return rc;
  char buf[96];
  std::snprintf(buf, sizeof(buf), "GPU-FAKE0000-0000-0000-0000-%012u", device->index);
  if (std::strlen(buf) + 1 > length) return kInsufficientSize;
  std::strcpy(uuid, buf);
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                                     unsigned int length) {
  if (nvmlReturn_t rc = Check("nvmlDeviceGetName", device); rc != kSuccess) return rc;
  const char* n = "NVIDIA H100 80GB HBM3";
  if (std::strlen(n) + 1 > length) return kInsufficientSize;
  std::strcpy(name, n);
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
                                                                           nvmlMemory_t* memory) {
  if (nvmlReturn_t rc = Check("nvmlDeviceGetMemoryInfo", device); rc != kSuccess) return rc;
  memory->total = 81559ull << 20;
  memory->used = static_cast<unsigned long long>(device->index + 1) << 30;
  memory->free = memory->total - memory->used;
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                                                 nvmlUtilization_t* util) {
  if (nvmlReturn_t rc = Check("nvmlDeviceGetUtilizationRates", device); rc != kSuccess) return rc;
  util->gpu = 37 + 20 * device->index;
  util->memory = 10;
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
                                                                           nvmlPciInfo_t* pci) {
  if (nvmlReturn_t rc = Check("nvmlDeviceGetPciInfo_v3", device); rc != kSuccess) return rc;
  FillPci(static_cast<int>(device->index), pci);
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device,
                                                                            unsigned int link,
                                                                            nvmlEnableState_t* active) {
  if (nvmlReturn_t rc = Check("nvmlDeviceGetNvLinkState", device); rc != kSuccess) return rc;
  if (link >= kLinksPerGpu) return kInvalidArgument;
  *active = RemoteOf(device->index, link) >= 0 ? 1 : 0;
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device,
                                                                                       unsigned int link,
                                                                                       nvmlPciInfo_t* pci) {
  if (nvmlReturn_t rc = Check("nvmlDeviceGetNvLinkRemotePciInfo_v2", device); rc != kSuccess) return rc;
  if (link >= kLinksPerGpu) return kInvalidArgument;
  const int remote = RemoteOf(device->index, link);
  if (remote < 0) return kInvalidArgument;
  FillPci(remote, pci);
  return kSuccess;
}

}  // extern "C"
