#include "agent/gpu_inventory.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace tessera {

namespace {

constexpr int kMaxSimulatedGpus = 64;

// "H100-80GB" -> 80 GiB; nullopt when the model does not end in -<digits>GB.
std::optional<int64_t> ModelMemoryBytes(std::string_view model) {
  const auto dash = model.rfind('-');
  if (dash == std::string_view::npos || model.size() < dash + 4 || !model.ends_with("GB")) return std::nullopt;
  int64_t gb = 0;
  for (char c : model.substr(dash + 1, model.size() - dash - 3)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    gb = gb * 10 + (c - '0');
    if (gb > (int64_t{1} << 20)) return std::nullopt;  // a petabyte GPU is a typo
  }
  return gb << 30;
}

std::string SimulatedUuid(const std::string& model, int32_t index) {
  return fmt::format("GPU-SIM-{:08x}-{:04}", std::hash<std::string>()(model) & 0xffffffff, index);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

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
      if (count > kMaxSimulatedGpus) return bad("has more than 64 GPUs");
    }
    const std::string model(item.substr(x + 1));
    const auto dash = model.rfind('-');
    if (dash == std::string::npos || model.size() < dash + 4 || model.substr(model.size() - 2) != "GB") {
      return bad("has a model without its memory (such as H100-80GB)");
    }
    const std::optional<int64_t> memory = ModelMemoryBytes(model);
    if (!memory) return bad("has a memory size that is not a number of GB");
    for (int i = 0; i < count; ++i) {
      const auto index = static_cast<int32_t>(out.size());
      out.push_back(GpuDevice{.index = index,
                              .uuid = SimulatedUuid(model, index),
                              .model = model,
                              .memory_bytes = *memory,
                              .nvlink_domain = index / 4});
    }
  }
  if (out.empty()) return Err(Status::InvalidArgument("GPU inventory is empty; write COUNTxMODEL-MEMORY, such as 8xH100-80GB"));
  return out;
}

Result<std::vector<GpuDevice>> ParseSimulatedInventoryJson(std::string_view text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [](std::string why) {
    return Err(Status::InvalidArgument(fmt::format(
        "GPU inventory (JSON): {}; write a list such as [{{\"model\": \"H100-80GB\"}}, {{\"model\": \"H100-80GB\"}}]",
        why)));
  };
  if (doc.is_discarded()) return bad("not valid JSON");
  if (!doc.is_array()) return bad("not a list of devices");
  if (doc.empty()) return bad("the list is empty");
  if (doc.size() > kMaxSimulatedGpus) return bad("more than 64 GPUs");
  std::vector<GpuDevice> out;
  std::set<std::string> uuids;
  for (size_t i = 0; i < doc.size(); ++i) {
    const nlohmann::json& e = doc[i];
    const auto index = static_cast<int32_t>(i);
    if (!e.is_object()) return bad(fmt::format("entry {} is not an object", i));
    for (const auto& [key, value] : e.items()) {
      if (key != "model" && key != "memoryBytes" && key != "uuid" && key != "index" && key != "nvlinkDomain") {
        return bad(fmt::format("entry {} has an unknown key \"{}\" (known: model, memoryBytes, uuid, index, "
                               "nvlinkDomain)",
                               i, key));
      }
    }
    GpuDevice d{.index = index, .nvlink_domain = index / 4};
    if (!e.contains("model") || !e["model"].is_string() || e["model"].get<std::string>().empty()) {
      return bad(fmt::format("entry {} has no \"model\" string", i));
    }
    d.model = e["model"].get<std::string>();
    if (e.contains("memoryBytes")) {
      if (!e["memoryBytes"].is_number_integer() || e["memoryBytes"].get<int64_t>() <= 0) {
        return bad(fmt::format("entry {}: \"memoryBytes\" is not a positive integer", i));
      }
      d.memory_bytes = e["memoryBytes"].get<int64_t>();
    } else if (const std::optional<int64_t> m = ModelMemoryBytes(d.model)) {
      d.memory_bytes = *m;
    } else {
      return bad(fmt::format("entry {}: no \"memoryBytes\", and model \"{}\" does not end in its size (such as "
                             "H100-80GB)",
                             i, d.model));
    }
    if (e.contains("index")) {
      if (!e["index"].is_number_integer() || e["index"].get<int64_t>() != index) {
        return bad(fmt::format("entry {}: \"index\" must be its position, {}", i, i));
      }
    }
    if (e.contains("nvlinkDomain")) {
      if (!e["nvlinkDomain"].is_number_integer() || e["nvlinkDomain"].get<int64_t>() < 0 ||
          e["nvlinkDomain"].get<int64_t>() > kMaxSimulatedGpus) {
        return bad(fmt::format("entry {}: \"nvlinkDomain\" is not an integer from 0 to 64", i));
      }
      d.nvlink_domain = e["nvlinkDomain"].get<int32_t>();
    }
    if (e.contains("uuid")) {
      if (!e["uuid"].is_string() || e["uuid"].get<std::string>().empty()) {
        return bad(fmt::format("entry {}: \"uuid\" is not a non-empty string", i));
      }
      d.uuid = e["uuid"].get<std::string>();
    } else {
      d.uuid = SimulatedUuid(d.model, index);
    }
    if (!uuids.insert(d.uuid).second) return bad(fmt::format("entry {} repeats uuid \"{}\"", i, d.uuid));
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::vector<GpuDevice>> LoadSimulatedInventory(std::string_view spec_or_path) {
  const std::string path(spec_or_path);
  struct stat st{};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && path.find('/') == std::string::npos) return ParseSimulatedInventory(spec_or_path);
  if (!exists) {
    return Err(Status::NotFound(fmt::format("GPU inventory file {} does not exist ({})", path, std::strerror(errno))));
  }
  if (!S_ISREG(st.st_mode)) {
    return Err(Status::InvalidArgument(fmt::format("GPU inventory file {} is not a regular file", path)));
  }
  std::ifstream in(path);
  if (!in) return Err(Status::IoError(fmt::format("cannot read GPU inventory file {}", path)));
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Err(Status::IoError(fmt::format("cannot read GPU inventory file {}", path)));
  const std::string text = buffer.str();
  const std::string_view body = Trim(text);
  auto in_file = [&](Result<std::vector<GpuDevice>> r) -> Result<std::vector<GpuDevice>> {
    if (!r) return Err(r.error().WithContext(fmt::format("GPU inventory file {}", path)));
    return r;
  };
  if (body.starts_with('[')) return in_file(ParseSimulatedInventoryJson(body));
  // A spec over lines: comments dropped, lines joined with ','.
  std::string spec;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::string_view l = line;
    if (const auto hash = l.find('#'); hash != std::string_view::npos) l = l.substr(0, hash);
    l = Trim(l);
    if (l.empty()) continue;
    if (!spec.empty()) spec += ',';
    spec += l;
  }
  return in_file(ParseSimulatedInventory(spec));
}

std::string DescribeInventory(const std::vector<GpuDevice>& devices) {
  if (devices.empty()) return "no GPUs";
  std::string out;
  for (size_t i = 0; i < devices.size();) {
    size_t j = i;
    while (j < devices.size() && devices[j].model == devices[i].model) ++j;
    if (!out.empty()) out += ',';
    out += fmt::format("{}x{}", j - i, devices[i].model);
    i = j;
  }
  return out;
}

bool NvidiaDriverPresent() {
  void* handle = dlopen(Nvml::kDefaultLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

std::string_view GpuSourceName(GpuSource source) {
  switch (source) {
    case GpuSource::kNvml:
      return "nvml";
    case GpuSource::kSimulated:
      return "simulated";
  }
  return "unknown";
}

Result<GpuInventory> DiscoverGpus(const GpuDiscoveryOptions& options) {
  std::string why_not_nvml;
  if (options.preference == GpuPreference::kSimulated) {
    why_not_nvml = "NVML not used (simulated GPUs asked for)";
  } else {
    Result<std::unique_ptr<Nvml>> nvml = Nvml::Load(options.nvml_library);
    if (nvml) {
      // A machine whose driver works but whose GPUs cannot be read must not
      // advertise simulated ones: that is an error to fix, in every mode.
      Result<std::vector<GpuDevice>> devices = (*nvml)->Devices();
      if (!devices) {
        return Err(devices.error().WithContext(
            "NVIDIA driver found, but listing its GPUs failed (fix the driver, or choose simulated GPUs)"));
      }
      if (!devices->empty()) {
        GpuInventory inv{.devices = std::move(*devices), .source = GpuSource::kNvml};
        inv.reason = fmt::format("NVIDIA driver found: {} GPU{} from NVML ({})", inv.devices.size(),
                                 inv.devices.size() == 1 ? "" : "s", DescribeInventory(inv.devices));
        inv.nvml = std::move(*nvml);
        return inv;
      }
      nvml = Err(Status::Unavailable("NVIDIA driver found, but NVML lists no GPUs"));
    }
    if (options.preference == GpuPreference::kNvml) return Err(nvml.error());
    why_not_nvml = nvml.error().message();
  }

  ASSIGN_OR_RETURN(std::vector<GpuDevice> devices, LoadSimulatedInventory(options.simulated));
  GpuInventory inv{.devices = std::move(devices), .source = GpuSource::kSimulated};
  const std::string described = DescribeInventory(inv.devices);
  inv.reason = described == options.simulated
                   ? fmt::format("{}: simulated inventory {}", why_not_nvml, described)
                   : fmt::format("{}: simulated inventory {} (from {})", why_not_nvml, described, options.simulated);
  return inv;
}

// ---- SimulatedGpuSampler -------------------------------------------------------

namespace {

struct ProcStat {
  pid_t pid = 0;
  pid_t pgrp = 0;
  uint64_t start_time = 0;
  int64_t ticks = 0;      // utime + stime + cutime + cstime
  int64_t rss_pages = 0;
};

// Parses /proc/<pid>/stat: "pid (comm) state ppid pgrp ...". comm may hold
// spaces and parentheses, so fields are counted from the last ')'.
std::optional<ProcStat> ReadProcStat(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;  // exited, or not a process
  std::string text;
  std::getline(in, text);
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  ProcStat s;
  s.pid = static_cast<pid_t>(std::atol(text.c_str()));
  std::istringstream fields(text.substr(close + 1));
  // After comm: field 3 is state; we need 5 (pgrp), 14-17 (times), 22 (starttime), 24 (rss).
  std::vector<std::string> f;
  for (std::string tok; fields >> tok && f.size() < 22;) f.push_back(std::move(tok));
  if (f.size() < 22) return std::nullopt;
  auto field = [&](int n) { return f[n - 3]; };  // field numbers as in proc(5)
  s.pgrp = static_cast<pid_t>(std::atol(field(5).c_str()));
  s.ticks = std::atoll(field(14).c_str()) + std::atoll(field(15).c_str()) + std::atoll(field(16).c_str()) +
            std::atoll(field(17).c_str());
  s.start_time = std::strtoull(field(22).c_str(), nullptr, 10);
  s.rss_pages = std::atoll(field(24).c_str());
  return s;
}

// The second field of /proc/<pid>/schedstat: ns spent runnable on a run
// queue; 0 when the kernel does not provide it.
int64_t ReadRunqueueWaitNs(const std::string& path) {
  std::ifstream in(path);
  int64_t run_ns = 0;
  int64_t wait_ns = 0;
  if (!(in >> run_ns >> wait_ns)) return 0;
  return wait_ns;
}

bool IsPid(const char* name) {
  if (*name == '\0') return false;
  for (const char* c = name; *c != '\0'; ++c) {
    if (!std::isdigit(static_cast<unsigned char>(*c))) return false;
  }
  return true;
}

}  // namespace

SimulatedGpuSampler::SimulatedGpuSampler(std::vector<GpuDevice> devices)
    : SimulatedGpuSampler(std::move(devices), Options{}) {}

SimulatedGpuSampler::SimulatedGpuSampler(std::vector<GpuDevice> devices, Options options)
    : devices_(std::move(devices)), options_(std::move(options)) {
  if (options_.clock_ticks_per_second <= 0) options_.clock_ticks_per_second = sysconf(_SC_CLK_TCK);
  if (options_.page_size <= 0) options_.page_size = sysconf(_SC_PAGESIZE);
  for (const GpuDevice& d : devices_) last_result_.push_back(GpuUsage{.index = d.index});
}

Result<std::vector<GpuUsage>> SimulatedGpuSampler::Sample(const GpuAssignment& assignment, Timestamp now) {
  // Steps: 1. scan /proc once: the processes of each pod (its pid and its
  // process group); 2. per pod, CPU ticks and RSS, and the rate since the last
  // sample; 3. per device, the sum over its pods by the model in the header.
  if (last_time_ && (now <= *last_time_ || (now - *last_time_).ms < options_.min_interval_ms)) return last_result_;

  std::map<pid_t, int> devices_of_pod;  // pod pid -> how many devices it is on
  for (const auto& [index, shares] : assignment) {
    for (const GpuProcessShare& s : shares) ++devices_of_pod[s.pid];
  }

  // 1. The pods' processes.
  std::map<pid_t, std::vector<ProcStat>> members;  // pod pid -> its processes
  if (!devices_of_pod.empty()) {
    DIR* dir = opendir(options_.proc_root.c_str());
    if (dir == nullptr) {
      return Err(Status::IoError(fmt::format("cannot list {}: {}", options_.proc_root, std::strerror(errno))));
    }
    while (const dirent* entry = readdir(dir)) {
      if (!IsPid(entry->d_name)) continue;
      const std::optional<ProcStat> s = ReadProcStat(fmt::format("{}/{}/stat", options_.proc_root, entry->d_name));
      if (!s) continue;
      if (devices_of_pod.contains(s->pid)) {
        members[s->pid].push_back(*s);
      } else if (devices_of_pod.contains(s->pgrp)) {
        members[s->pgrp].push_back(*s);
      }
    }
    closedir(dir);
  }

  // 2. Per pod: rate = (CPU seconds [+ run-queue wait seconds]) in the
  // interval / wall seconds of the interval.
  const double interval_s = last_time_ ? static_cast<double>((now - *last_time_).ms) / 1000.0 : 0.0;
  const auto ticks_per_s = static_cast<double>(options_.clock_ticks_per_second);
  std::map<pid_t, PodTicks> ticks_now;
  std::map<pid_t, double> rate;       // CPU-seconds per wall-second
  std::map<pid_t, int64_t> rss_bytes;
  for (const auto& [pod, _] : devices_of_pod) {
    PodTicks& current = ticks_now[pod];
    const auto before = last_ticks_.find(pod);
    int64_t delta_ticks = 0;
    int64_t delta_wait_ns = 0;
    int64_t rss_pages = 0;
    for (const ProcStat& s : members[pod]) {
      const int64_t wait_ns =
          options_.count_runqueue_wait ? ReadRunqueueWaitNs(fmt::format("{}/{}/schedstat", options_.proc_root, s.pid))
                                       : 0;
      current[s.pid] = ProcessTicks{.start_time = s.start_time, .ticks = s.ticks, .wait_ns = wait_ns};
      rss_pages += s.rss_pages;
      if (before == last_ticks_.end()) continue;  // a new pod: this sample is its baseline
      const auto prev = before->second.find(s.pid);
      if (prev != before->second.end() && prev->second.start_time == s.start_time) {
        delta_ticks += std::max<int64_t>(0, s.ticks - prev->second.ticks);
        delta_wait_ns += std::max<int64_t>(0, wait_ns - prev->second.wait_ns);
      } else {  // started within the interval: all of it falls there
        delta_ticks += s.ticks;
        delta_wait_ns += wait_ns;
      }
    }
    const double busy_s = static_cast<double>(delta_ticks) / ticks_per_s + static_cast<double>(delta_wait_ns) / 1e9;
    rate[pod] = interval_s > 0 ? busy_s / interval_s : 0.0;
    rss_bytes[pod] = rss_pages * options_.page_size;
  }

  // 3. Per device.
  std::vector<GpuUsage> out;
  for (const GpuDevice& d : devices_) {
    double busy = 0;  // in whole devices
    int64_t memory = 0;
    if (const auto it = assignment.find(d.index); it != assignment.end()) {
      for (const GpuProcessShare& s : it->second) {
        busy += std::min(1.0, rate[s.pid]) * static_cast<double>(s.milli) / 1000.0;
        memory += rss_bytes[s.pid] / devices_of_pod[s.pid];
      }
    }
    out.push_back(GpuUsage{.index = d.index,
                           .utilization_percent = static_cast<int32_t>(std::lround(std::clamp(busy, 0.0, 1.0) * 100)),
                           .memory_used_bytes = std::min(memory, d.memory_bytes)});
  }
  last_time_ = now;
  last_ticks_ = std::move(ticks_now);
  last_result_ = out;
  return out;
}

}  // namespace tessera
