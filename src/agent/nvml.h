// Nvml: the NVIDIA Management Library, loaded at run time with dlopen so that
// the agent builds and runs on machines without a driver (no link-time
// dependency, no NVIDIA headers: the few types and signatures used are declared
// in nvml.cc after the public NVML API).
//
// What it reads:
//   - Devices(): index, UUID, model, total memory and NVLink domain of each GPU.
//   - Sample(): per GPU, utilisation % (NVML's "percent of time over the past
//     sample period during which one or more kernels was executing") and
//     memory used.
//
// NVLink domains: the connected components of the graph whose vertices are the
// local GPUs and the remote ends of their active NVLinks (PCI addresses, as
// nvmlDeviceGetNvLinkRemotePciInfo_v2 reports them), one edge per active link.
// Two GPUs linked directly, or through the same NVSwitch, share a domain. A GPU
// without active links (or when the driver does not report them) is alone.
// Domains are numbered 0, 1, ... in order of their lowest device index, so the
// numbering is deterministic.
//
// Model: the NVML name without its "NVIDIA " prefix, spaces as '-', such as
// "H100-80GB-HBM3" for "NVIDIA H100 80GB HBM3" (the simulated "H100-80GB" is
// a shorter form; a flavor that matches on the model must use the real name).
//
// Index: NVML's enumeration order (PCI bus order). CUDA's ordinal follows it
// only with CUDA_DEVICE_ORDER=PCI_BUS_ID; address devices by UUID or set it.
//
// Thread-safety: NVML is thread-safe, and so is an Nvml once loaded (it only
// reads). Init and shutdown are reference-counted by NVML itself: several Nvml
// objects may coexist. The destructor calls nvmlShutdown and dlclose.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "domain/node.h"

namespace tessera {

// One device's usage at a point in time, from NVML or the simulated sampler.
struct GpuUsage {
  int32_t index = 0;             // GpuDevice::index
  int32_t utilization_percent = 0;  // 0..100
  int64_t memory_used_bytes = 0;
  friend bool operator==(const GpuUsage&, const GpuUsage&) = default;
};

class Nvml {
 public:
  static constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";

  // Opens `library` (a soname searched as dlopen does, or a path), resolves the
  // NVML symbols and calls nvmlInit_v2. Errors, all Unavailable: the library
  // cannot be opened (no driver), a symbol is missing (a driver too old), or
  // nvmlInit_v2 fails (its NVML error string is in the message).
  static Result<std::unique_ptr<Nvml>> Load(const std::string& library = kDefaultLibrary);

  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // The GPUs NVML lists, in its order (index = position). An NVML call that
  // fails gives Unavailable with the call, the device and NVML's error string;
  // NVLink queries that fail only leave that link out.
  Result<std::vector<GpuDevice>> Devices() const;

  // Utilisation and memory used of every GPU, in Devices() order.
  Result<std::vector<GpuUsage>> Sample() const;

  // The library as given to Load, for messages.
  const std::string& library() const { return library_; }

  struct Api;  // the resolved function pointers (nvml.cc)

 private:
  Nvml(std::string library, void* handle, std::unique_ptr<Api> api);

  std::string library_;
  void* handle_ = nullptr;  // from dlopen
  std::unique_ptr<Api> api_;
};

}  // namespace tessera
