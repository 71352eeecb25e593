#include "agent/gpu_inventory.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cctype>

namespace tessera {

Result<std::vector<GpuDevice>> ParseSimulatedInventory(std::string_view spec) {
  std::vector<GpuDevice> out;
  std::string_view rest = spec;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto x = item.find('x');
    auto bad = [&](std::string_view why) {
      return Err(Status::InvalidArgument(
          fmt::format("GPU inventory \"{}\": \"{}\" {}; write COUNTxMODEL-MEMORY, such as 8xH100-80GB", spec, item, why)));
    };
    if (x == std::string_view::npos || x == 0) return bad("has no count");
    int count = 0;
    for (char c : item.substr(0, x)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return bad("has a count that is not a number");
      count = count * 10 + (c - '0');
      if (count > 64) return bad("has more than 64 GPUs");
    }
    const std::string model(item.substr(x + 1));
    const auto dash = model.rfind('-');
    if (dash == std::string::npos || model.size() < dash + 4 || model.substr(model.size() - 2) != "GB") {
      return bad("has a model without its memory (such as H100-80GB)");
    }
    int64_t gb = 0;
    for (char c : model.substr(dash + 1, model.size() - dash - 3)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return bad("has a memory size that is not a number");
      gb = gb * 10 + (c - '0');
    }
    for (int i = 0; i < count; ++i) {
      const auto index = static_cast<int32_t>(out.size());
      out.push_back(GpuDevice{.index = index,
                              .uuid = fmt::format("GPU-SIM-{:08x}-{:04}", std::hash<std::string>()(model) & 0xffffffff, index),
                              .model = model,
                              .memory_bytes = gb << 30,
                              .nvlink_domain = index / 4});
    }
  }
  if (out.empty()) return Err(Status::InvalidArgument("GPU inventory is empty; write COUNTxMODEL-MEMORY, such as 8xH100-80GB"));
  return out;
}

bool NvidiaDriverPresent() {
  void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

}  // namespace tessera
