#include "sched/placement.h"

#include <algorithm>
#include <array>
#include <functional>
#include <numeric>
#include <span>
#include <tuple>

#include "common/check.h"

namespace tessera {
namespace {

// How many candidate nodes a multi-GPU pod looks at for one that holds all its
// GPUs in one NVLink domain before it settles for the best fit across domains.
constexpr int kNvlinkScan = 32;
// How many partly used devices a fraction looks at before it takes a whole one.
constexpr int kPartialScan = 256;
// How many racks a gang tries to fit within before it spans racks.
constexpr int kRackTries = 4;

}  // namespace

int64_t GpuMemoryToMilli(int64_t gpu_memory, int64_t device_memory) {
  if (device_memory <= 0) return 1001;
  auto milli = static_cast<int64_t>((static_cast<__int128>(gpu_memory) * 1000 + device_memory - 1) / device_memory);
  return std::max<int64_t>(milli, 1);
}

struct Placer::Context {
  const Workload* w = nullptr;
  const PodSet* ps = nullptr;
  int32_t cq = -1;
  int32_t flavor = -1;
  const std::vector<Toleration>* flavor_tolerations = nullptr;
  int32_t whole = 0;        // whole devices per pod
  int64_t fraction = 0;     // milli on one device, when below one GPU
  int64_t gpu_memory = 0;   // bytes on one device, instead of a fraction
  bool needs_label_check = false;
  bool needs_taint_check = false;
  bool require_nvlink = false;
  int32_t rack = -1;             // restrict to this rack
  int32_t pin_node = -1;         // restrict to this node (same-node pod sets)
  int64_t min_device_memory = 0; // whole devices must have this much memory
  bool avoid_used = false;       // spread: skip nodes this pod set already uses
  std::vector<int32_t> used_nodes;
  bool quota_stopped = false;
  FlavorAttempt* why = nullptr;
  // The flavor's capacity before this pod set was placed, for explanations.
  int64_t largest_whole_before = 0;
  int64_t best_fraction_before = 0;
  int64_t free_before = 0;
};

bool Placer::Accepts(const Context& ctx, int32_t node, int64_t pods_on_node) const {
  const CapacityState::NodeState& s = state_.capacity().node(node);
  if (!s.schedulable) return false;
  if (ctx.pin_node >= 0 && node != ctx.pin_node) return false;
  if (ctx.rack >= 0 && s.rack != ctx.rack) return false;
  if (s.free_cpu < ctx.ps->requests.cpu() * pods_on_node) return false;
  if (s.free_memory < ctx.ps->requests.memory() * pods_on_node) return false;
  if (ctx.avoid_used && std::find(ctx.used_nodes.begin(), ctx.used_nodes.end(), node) != ctx.used_nodes.end()) {
    return false;
  }
  const Node& n = state_.snapshot().nodes[node];
  if (ctx.needs_label_check && !n.labels.Matches(ctx.ps->node_selector)) return false;
  if (ctx.needs_taint_check && s.tainted) {
    for (const Taint& t : n.taints) {
      if (t.effect == TaintEffect::kPreferNoSchedule) continue;
      auto tolerated = [&](const std::vector<Toleration>& tols) {
        return std::any_of(tols.begin(), tols.end(), [&](const Toleration& tol) { return tol.Tolerates(t); });
      };
      if (!tolerated(ctx.ps->tolerations) && !tolerated(*ctx.flavor_tolerations)) return false;
    }
  }
  if (ctx.require_nvlink && ctx.whole > 1 && !HasNvlinkBlock(node, ctx.whole)) return false;
  if (ctx.min_device_memory > 0 && ctx.whole > 0) {
    int32_t big_enough = 0;
    const CapacityState& cap = state_.capacity();
    for (int32_t d = s.first_device; d < s.first_device + s.num_devices; ++d) {
      if (cap.device(d).free_milli == 1000 && cap.device(d).memory_bytes >= ctx.min_device_memory) ++big_enough;
    }
    if (big_enough < ctx.whole * pods_on_node) return false;
  }
  return true;
}

std::span<const int64_t> Placer::FreeMilli(int32_t node, FreeTable& table) const {
  const CapacityState& cap = state_.capacity();
  const auto& s = cap.node(node);
  const int32_t devices = std::min(s.num_devices, kMaxScoredDevices);
  for (int32_t i = 0; i < devices; ++i) table[i] = std::max<int64_t>(cap.device(s.first_device + i).free_milli, 0);
  return std::span<const int64_t>(table.data(), devices);
}

bool Placer::HasNvlinkBlock(int32_t node, int32_t k) const { return LargestNvlinkBlock(node) >= k; }

int32_t Placer::LargestNvlinkBlock(int32_t node) const {
  const CapacityState& cap = state_.capacity();
  const auto& s = cap.node(node);
  // Domains are small integers; count whole free devices per domain.
  std::array<int32_t, 64> per_domain{};
  int32_t best = 0;
  for (int32_t d = s.first_device; d < s.first_device + s.num_devices; ++d) {
    const auto& dev = cap.device(d);
    if (dev.free_milli != 1000) continue;
    const auto dom = static_cast<size_t>(static_cast<uint32_t>(dev.nvlink_domain) % per_domain.size());
    best = std::max(best, ++per_domain[dom]);
  }
  return best;
}

int32_t Placer::PickWholeNode(const Context& ctx, int32_t k, int64_t pods_on_node) const {
  const CapacityState& cap = state_.capacity();
  const bool prefer_nvlink = k > 1 && !ctx.require_nvlink;
  if (ctx.pin_node >= 0) {
    return cap.node(ctx.pin_node).whole_free >= k && Accepts(ctx, ctx.pin_node, pods_on_node) ? ctx.pin_node : -1;
  }
  if (ctx.rack >= 0) {
    // Within a rack: the fullest accepting node that has k whole devices free.
    int32_t best = -1;
    bool best_nvlink = false;
    for (int32_t n : cap.rack_members(ctx.rack)) {
      const auto& s = cap.node(n);
      if (s.whole_free < k) continue;
      if (std::find(s.flavors.begin(), s.flavors.end(), ctx.flavor) == s.flavors.end()) continue;
      if (!Accepts(ctx, n, pods_on_node)) continue;
      const bool nv = prefer_nvlink && HasNvlinkBlock(n, k);
      if (best < 0 || (nv && !best_nvlink) || (nv == best_nvlink && s.whole_free < cap.node(best).whole_free)) {
        best = n;
        best_nvlink = nv;
      }
    }
    return best;
  }
  const auto& buckets = cap.flavor(ctx.flavor).by_whole_free;
  int32_t fallback = -1;
  int scanned = 0;
  for (size_t b = k; b < buckets.size(); ++b) {
    for (int32_t n : buckets[b]) {
      if (!Accepts(ctx, n, pods_on_node)) continue;
      if (!prefer_nvlink || HasNvlinkBlock(n, k)) return n;
      if (fallback < 0) fallback = n;
      if (++scanned >= kNvlinkScan) return fallback;
    }
  }
  return fallback;
}

std::vector<int32_t> Placer::ChooseWholeDevices(int32_t node, int32_t k, int64_t min_memory) const {
  const CapacityState& cap = state_.capacity();
  const auto& s = cap.node(node);
  auto usable = [&](int32_t d) { return cap.device(d).free_milli == 1000 && cap.device(d).memory_bytes >= min_memory; };
  // Free devices per NVLink domain (few domains per node: a small linear table).
  constexpr int kMaxDomains = 16;
  std::array<int32_t, kMaxDomains> domain{}, count{};
  int domains = 0;
  bool overflow = false;
  for (int32_t d = s.first_device; d < s.first_device + s.num_devices; ++d) {
    if (!usable(d)) continue;
    const int32_t dom = cap.device(d).nvlink_domain;
    int i = 0;
    while (i < domains && domain[i] != dom) ++i;
    if (i == domains) {
      if (domains == kMaxDomains) {
        overflow = true;
        continue;
      }
      domain[domains++] = dom;
    }
    ++count[i];
  }
  std::vector<int32_t> out;
  out.reserve(k);
  auto take_from = [&](int32_t dom) {
    for (int32_t d = s.first_device; d < s.first_device + s.num_devices && static_cast<int32_t>(out.size()) < k; ++d) {
      if (usable(d) && cap.device(d).nvlink_domain == dom &&
          std::find(out.begin(), out.end(), d) == out.end()) {
        out.push_back(d);
      }
    }
  };
  // The tightest domain that holds all k.
  int best = -1;
  for (int i = 0; i < domains; ++i) {
    if (count[i] >= k && (best < 0 || count[i] < count[best])) best = i;
  }
  if (best >= 0 && !overflow) {
    take_from(domain[best]);
    return out;
  }
  // Else the largest domains first, so the pod spans as few as possible.
  std::array<int, kMaxDomains> order{};
  for (int i = 0; i < domains; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.begin() + domains, [&](int a, int b) { return count[a] > count[b]; });
  for (int i = 0; i < domains && static_cast<int32_t>(out.size()) < k; ++i) take_from(domain[order[i]]);
  for (int32_t d = s.first_device; d < s.first_device + s.num_devices && static_cast<int32_t>(out.size()) < k; ++d) {
    if (usable(d) && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  TESSERA_CHECK(static_cast<int32_t>(out.size()) == k, "node {} had fewer than {} usable whole devices", node, k);
  return out;
}

int64_t Placer::NeedOn(const Context& ctx, int32_t device) const {
  return ctx.gpu_memory > 0 ? GpuMemoryToMilli(ctx.gpu_memory, state_.capacity().device(device).memory_bytes)
                            : ctx.fraction;
}

bool Placer::PickByFragmentation(const Context& ctx, int32_t* node_out,
                                 std::vector<std::pair<int32_t, int64_t>>* takes_out) const {
  const CapacityState& cap = state_.capacity();
  const auto& idx = cap.flavor(ctx.flavor);
  const auto limit = static_cast<size_t>(config_.fragmentation_candidates);
  // Candidates in best-fit order: the fullest nodes with k whole devices free; for
  // a fraction, the nodes of the tightest partly used devices it fits, then the
  // fullest nodes with a whole device free.
  std::vector<int32_t> candidates;
  candidates.reserve(limit + limit / 2 + 1);
  auto add = [&](int32_t n, size_t cap_at) {
    if (candidates.size() >= cap_at) return;
    if (std::find(candidates.begin(), candidates.end(), n) != candidates.end()) return;
    if (Accepts(ctx, n, 1)) candidates.push_back(n);
  };
  auto add_whole = [&](int32_t k, size_t cap_at) {
    for (size_t b = k; b < idx.by_whole_free.size() && candidates.size() < cap_at; ++b) {
      for (int32_t n : idx.by_whole_free[b]) {
        if (candidates.size() >= cap_at) break;
        add(n, cap_at);
      }
    }
  };
  if (ctx.whole > 0) {
    add_whole(ctx.whole, limit);
    if (ctx.whole > 1) {
      // NVLink blocks are preferred: keep only candidates that have one, if any does.
      std::vector<int32_t> nvlink;
      for (int32_t n : candidates) {
        if (HasNvlinkBlock(n, ctx.whole)) nvlink.push_back(n);
      }
      if (!nvlink.empty()) candidates.swap(nvlink);
    }
  } else {
    const int64_t lower =
        ctx.gpu_memory > 0 ? GpuMemoryToMilli(ctx.gpu_memory, idx.max_device_memory) : ctx.fraction;
    int scanned = 0;
    for (auto it = idx.partial.lower_bound({lower, -1});
         it != idx.partial.end() && candidates.size() < limit && scanned < kPartialScan; ++it, ++scanned) {
      if (cap.device(it->second).free_milli >= NeedOn(ctx, it->second)) add(cap.device(it->second).node, limit);
    }
    add_whole(1, candidates.size() + std::max<size_t>(limit / 2, 1));
  }
  if (candidates.empty()) return false;

  FreeTable before{}, after{}, other{};
  const int64_t cpu = ctx.ps->requests.cpu();
  const int64_t memory = ctx.ps->requests.memory();
  int64_t best_delta = 0, best_free = 0;
  *node_out = -1;
  std::vector<std::pair<int32_t, int64_t>> option;
  // Nodes in the same state score the same, and a later one would lose the tie:
  // score each state once (a fleet of empty nodes is one evaluation).
  std::vector<std::pair<int32_t, size_t>> scored;  // (node, hash of its state)
  for (int32_t n : candidates) {
    const auto& s = cap.node(n);
    if (s.num_devices > kMaxScoredDevices) return false;  // beyond the scorer's table: plain best fit
    const std::span<const int64_t> free = FreeMilli(n, before);
    size_t hash = std::hash<int64_t>{}(s.free_cpu) ^ (std::hash<int64_t>{}(s.free_memory) << 1);
    for (int64_t f : free) hash = hash * 1000003 + static_cast<size_t>(f);
    const bool same_as_scored = std::any_of(scored.begin(), scored.end(), [&](const auto& prev) {
      if (prev.second != hash) return false;
      const auto& p = cap.node(prev.first);
      if (p.free_cpu != s.free_cpu || p.free_memory != s.free_memory) return false;
      return std::ranges::equal(FreeMilli(prev.first, other), free);
    });
    if (same_as_scored) continue;
    scored.emplace_back(n, hash);
    const int64_t frag_before = NodeFragmentation(NodeFree{s.free_cpu, s.free_memory, free}, *profile_);
    auto consider = [&]() {
      after = before;
      int64_t free_after = 0;
      for (const auto& [d, milli] : option) after[d - s.first_device] -= milli;
      for (int32_t i = 0; i < s.num_devices; ++i) free_after += after[i];
      const int64_t delta =
          NodeFragmentation(NodeFree{s.free_cpu - cpu, s.free_memory - memory,
                                     std::span<const int64_t>(after.data(), s.num_devices)},
                            *profile_) -
          frag_before;
      if (*node_out < 0 || delta < best_delta || (delta == best_delta && free_after < best_free)) {
        *node_out = n;
        best_delta = delta;
        best_free = free_after;
        *takes_out = option;
      }
    };
    if (ctx.whole > 0) {
      option.clear();
      for (int32_t d : ChooseWholeDevices(n, ctx.whole, ctx.min_device_memory)) option.emplace_back(d, 1000);
      consider();
      continue;
    }
    // A fraction: the tightest partly used device on the node it fits, and a whole one.
    int32_t tightest = -1, whole = -1;
    for (int32_t d = s.first_device; d < s.first_device + s.num_devices; ++d) {
      const int64_t free = cap.device(d).free_milli;
      const int64_t need = NeedOn(ctx, d);
      if (need > 1000 || free < need) continue;
      if (free == 1000) {
        if (whole < 0) whole = d;
      } else if (tightest < 0 || free < cap.device(tightest).free_milli) {
        tightest = d;
      }
    }
    for (int32_t d : {tightest, whole}) {
      if (d < 0) continue;
      option.assign(1, {d, NeedOn(ctx, d)});
      consider();
    }
  }
  return *node_out >= 0;
}

int32_t Placer::PickCpuOnlyNode(const Context& ctx) const {
  // CPU beside free GPUs is what GPU pods need: a pod without GPUs goes where
  // taking its CPU and memory strands the least GPU for the expected work (with a
  // demand profile), then where the least GPU is left free (GPU-less or fully
  // allocated nodes first), then where the most CPU is left.
  const CapacityState& cap = state_.capacity();
  const bool scored = profile_ != nullptr && !profile_->empty() && config_.fragmentation_candidates > 0;
  const int64_t cpu = ctx.ps->requests.cpu();
  const int64_t memory = ctx.ps->requests.memory();
  FreeTable table{};
  int32_t best = -1;
  std::tuple<int64_t, int64_t, int64_t> best_key;
  for (int32_t n : cap.flavor(ctx.flavor).members) {
    if (!Accepts(ctx, n, 1)) continue;
    const auto& s = cap.node(n);
    const std::span<const int64_t> view = FreeMilli(n, table);
    const int64_t free_gpu = std::accumulate(view.begin(), view.end(), int64_t{0});
    int64_t delta = 0;
    if (scored && free_gpu > 0) {
      delta = NodeFragmentation(NodeFree{s.free_cpu - cpu, s.free_memory - memory, view}, *profile_) -
              NodeFragmentation(NodeFree{s.free_cpu, s.free_memory, view}, *profile_);
    }
    const std::tuple<int64_t, int64_t, int64_t> key{delta, free_gpu, -s.free_cpu};
    if (best < 0 || key < best_key) {
      best = n;
      best_key = key;
    }
  }
  return best;
}

bool Placer::PlaceOnePod(Context& ctx, PodSetAssignment* out) {
  const CapacityState& cap = state_.capacity();
  int32_t node = -1;
  std::vector<std::pair<int32_t, int64_t>> takes;  // (device, milli)

  const bool scored = profile_ != nullptr && !profile_->empty() && config_.fragmentation_candidates > 0 &&
                      ctx.pin_node < 0 && ctx.rack < 0 && (ctx.whole > 0 || ctx.fraction > 0 || ctx.gpu_memory > 0) &&
                      PickByFragmentation(ctx, &node, &takes);
  if (scored) {
    // node and takes chosen
  } else if (ctx.whole > 0) {
    node = PickWholeNode(ctx, ctx.whole, 1);
    if (node < 0) return false;
    for (int32_t d : ChooseWholeDevices(node, ctx.whole, ctx.min_device_memory)) takes.emplace_back(d, 1000);
  } else if (ctx.fraction > 0 || ctx.gpu_memory > 0) {
    const auto& idx = cap.flavor(ctx.flavor);
    auto need_on = [&](int32_t d) { return NeedOn(ctx, d); };
    const int64_t lower = ctx.gpu_memory > 0 ? GpuMemoryToMilli(ctx.gpu_memory, idx.max_device_memory) : ctx.fraction;
    int scanned = 0;
    for (auto it = idx.partial.lower_bound({lower, -1}); it != idx.partial.end() && (scanned < kPartialScan || ctx.pin_node >= 0);
         ++it, ++scanned) {
      const int32_t d = it->second;
      if (cap.device(d).free_milli < need_on(d)) continue;
      if (!Accepts(ctx, cap.device(d).node, 1)) continue;
      node = cap.device(d).node;
      takes.emplace_back(d, need_on(d));
      break;
    }
    if (node < 0) {
      node = PickWholeNode(ctx, 1, 1);
      if (node < 0) return false;
      const auto& s = cap.node(node);
      for (int32_t d = s.first_device; d < s.first_device + s.num_devices; ++d) {
        if (cap.device(d).free_milli == 1000 && need_on(d) <= 1000) {
          takes.emplace_back(d, need_on(d));
          break;
        }
      }
      if (takes.empty()) return false;
    }
  } else {
    node = PickCpuOnlyNode(ctx);
    if (node < 0) return false;
  }

  PodPlacement pod{.node = NodeId(node)};
  const int32_t first = cap.node(node).first_device;
  for (const auto& [d, milli] : takes) pod.gpus.push_back(DeviceShare{.device = d - first, .milli = milli});
  const Resources charge = [&] {
    Resources r = ctx.ps->requests;
    int64_t gpu = 0;
    for (const auto& t : takes) gpu += t.second;
    r.set(ResourceKind::kGpu, gpu);
    return r;
  }();
  if (!state_.quota().Fits(ctx.cq, ctx.flavor, charge, ctx.why, ctx.w->non_preemptible)) {
    ctx.quota_stopped = true;
    return false;
  }
  for (const auto& [d, milli] : takes) state_.TakeDevice(d, milli);
  state_.TakeNode(node, ctx.ps->requests.cpu(), ctx.ps->requests.memory());
  state_.AddQuota(ctx.cq, ctx.flavor, charge);
  ctx.used_nodes.push_back(node);
  out->pods.push_back(std::move(pod));
  ++out->count;
  return true;
}

int32_t Placer::PlaceLoop(Context& ctx, int32_t count, PodSetAssignment* out) {
  int32_t placed = 0;
  while (placed < count) {
    if (PlaceOnePod(ctx, out)) {
      ++placed;
      continue;
    }
    if (ctx.quota_stopped || !ctx.avoid_used) break;
    // Spread is a preference: when no unused node fits, share one.
    ctx.avoid_used = false;
    const bool ok = PlaceOnePod(ctx, out);
    ctx.avoid_used = true;
    if (!ok) break;
    ++placed;
  }
  return placed;
}

bool Placer::PlaceSameNode(Context& ctx, int32_t count, PodSetAssignment* out) {
  const CapacityState& cap = state_.capacity();
  int32_t node = -1;
  if (ctx.whole > 0) {
    node = PickWholeNode(ctx, ctx.whole * count, count);
  } else {
    for (int32_t n : cap.flavor(ctx.flavor).members) {
      if (Accepts(ctx, n, count)) {
        node = n;
        break;
      }
    }
  }
  if (node < 0) return false;
  ctx.pin_node = node;
  int32_t placed = 0;
  while (placed < count && PlaceOnePod(ctx, out)) ++placed;
  ctx.pin_node = -1;
  return placed == count;
}

void Placer::ExplainCapacity(const Context& ctx, int32_t placed, FlavorAttempt* why) const {
  if (why == nullptr || ctx.quota_stopped) return;
  const CapacityState& cap = state_.capacity();
  const auto& idx = cap.flavor(ctx.flavor);
  why->code = idx.members.empty() ? PendingCode::kNoMatchingNodes : PendingCode::kNoCapacity;
  why->pod_set = static_cast<int32_t>(ctx.ps - ctx.w->pod_sets.data());
  why->pods_needed = ctx.ps->MinCount();
  why->pods_placed = placed;
  why->free_gpu_milli = ctx.free_before;
  why->nodes = static_cast<int32_t>(idx.members.size());
  if (ctx.whole > 0) {
    why->pod_gpu_milli = ctx.whole * 1000;
    why->largest_free_milli = ctx.largest_whole_before * 1000;
  } else if (ctx.fraction > 0 || ctx.gpu_memory > 0) {
    why->pod_gpu_milli = ctx.gpu_memory > 0 ? GpuMemoryToMilli(ctx.gpu_memory, idx.max_device_memory) : ctx.fraction;
    why->largest_free_milli = ctx.best_fraction_before;
  }
  const bool gpus_short = why->pod_gpu_milli > 0 && why->largest_free_milli < why->pod_gpu_milli;
  why->bottleneck = gpus_short    ? (ctx.whole > 0 ? CapacityBottleneck::kWholeGpus : CapacityBottleneck::kFraction)
                    : placed > 0 ? CapacityBottleneck::kGangSize
                                 : CapacityBottleneck::kCpuMemory;
  if (why->bottleneck == CapacityBottleneck::kGangSize && ctx.gpu_memory == 0) {
    // Nodes the pod could go to (labels, taints), with free GPUs it could use
    // (big enough, when it names a device memory), but not its cpu or memory.
    Context any_node = ctx;
    any_node.avoid_used = false;
    for (int32_t n : idx.members) {
      const CapacityState::NodeState& s = cap.node(n);
      if (s.free_cpu >= ctx.ps->requests.cpu() && s.free_memory >= ctx.ps->requests.memory()) continue;
      if (!Accepts(any_node, n, 0)) continue;
      int32_t whole_free = 0;
      bool fraction_free = ctx.whole == 0 && ctx.fraction == 0;  // needs no GPU
      for (int32_t d = s.first_device; d < s.first_device + s.num_devices; ++d) {
        const CapacityState::Device& device = cap.device(d);
        if (device.free_milli == 1000 && device.memory_bytes >= ctx.min_device_memory) ++whole_free;
        fraction_free = fraction_free || device.free_milli >= ctx.fraction;
      }
      if (ctx.whole > 0 ? whole_free >= ctx.whole : fraction_free) ++why->nodes_short_of_cpu_memory;
    }
  }
  if (!gpus_short && ctx.require_nvlink && ctx.whole > 1) {
    // Enough whole GPUs on a node, but not within one NVLink domain: the best block.
    int64_t best = 0;
    for (int32_t n : idx.members) best = std::max<int64_t>(best, LargestNvlinkBlock(n));
    if (best < ctx.whole) {
      why->bottleneck = CapacityBottleneck::kTopology;
      why->largest_free_milli = best * 1000;
    }
  }
  if (why->code == PendingCode::kNoCapacity && why->bottleneck == CapacityBottleneck::kCpuMemory &&
      (!ctx.ps->node_selector.empty() || idx.any_tainted)) {
    // Selectors or taints may be what excludes the nodes: say so when none accepts at all.
    std::vector<Toleration> tols = ctx.ps->tolerations;
    tols.insert(tols.end(), ctx.flavor_tolerations->begin(), ctx.flavor_tolerations->end());
    const bool any = std::any_of(idx.members.begin(), idx.members.end(), [&](int32_t n) {
      const Node& node = state_.snapshot().nodes[n];
      return node.labels.Matches(ctx.ps->node_selector) && ToleratesAll(node.taints, tols);
    });
    if (!any) why->code = PendingCode::kNoMatchingNodes;
  }
}

bool Placer::PlacePodSet(const Workload& w, int p, int32_t cq, int32_t flavor, PodSetAssignment* out,
                         FlavorAttempt* why) {
  ++attempts_;
  const PodSet& ps = w.pod_sets[p];
  const CapacityState& cap = state_.capacity();
  Context ctx;
  ctx.w = &w;
  ctx.ps = &ps;
  ctx.cq = cq;
  ctx.flavor = flavor;
  ctx.flavor_tolerations = &state_.snapshot().flavors[flavor].tolerations;
  ctx.why = why;
  const int64_t gpu = ps.requests.gpu();
  if (gpu >= 1000) {
    ctx.whole = static_cast<int32_t>(gpu / 1000);
  } else if (gpu > 0) {
    if (config_.enable_gpu_sharing) {
      ctx.fraction = gpu;
    } else {
      ctx.whole = 1;
    }
  } else if (ps.requests.get(ResourceKind::kGpuMemory) > 0) {
    if (config_.enable_gpu_sharing) {
      ctx.gpu_memory = ps.requests.get(ResourceKind::kGpuMemory);
    } else {
      // Without sharing: a whole device that has at least that much memory.
      ctx.whole = 1;
      ctx.min_device_memory = ps.requests.get(ResourceKind::kGpuMemory);
    }
  }
  ctx.needs_label_check = !ps.node_selector.empty();
  ctx.needs_taint_check = cap.flavor(flavor).any_tainted;
  ctx.require_nvlink = ps.topology == TopologyPreference::kSameNvlink;
  if (why != nullptr) {
    const auto& idx = cap.flavor(flavor);
    ctx.largest_whole_before = cap.LargestWholeBlock(flavor);
    ctx.best_fraction_before = idx.whole_free > 0 ? 1000 : (idx.partial.empty() ? 0 : idx.partial.rbegin()->first);
    ctx.free_before = idx.free_milli;
  }

  out->flavor = FlavorId(flavor);
  out->count = 0;
  out->pods.clear();
  const int32_t count = ps.count;
  const int32_t min = ps.MinCount();

  if (ps.topology == TopologyPreference::kSameNode) {
    for (int32_t n : {count, min}) {
      const size_t cp = state_.Checkpoint();
      if (PlaceSameNode(ctx, n, out)) return true;
      state_.Rollback(cp);
      out->pods.clear();
      out->count = 0;
      ctx.used_nodes.clear();
      if (ctx.quota_stopped || n == min) break;
    }
    if (why != nullptr && !ctx.quota_stopped) {
      ExplainCapacity(ctx, 0, why);
      why->bottleneck = CapacityBottleneck::kTopology;
    }
    return false;
  }

  const bool rack_required = ps.topology == TopologyPreference::kSameRack;
  const bool rack_preferred = (count > 1 && ctx.whole > 0 && ps.topology == TopologyPreference::kNone);
  if ((rack_required || rack_preferred) && cap.num_racks() > 0) {
    const auto& rack_free = cap.flavor(flavor).rack_whole_free;
    const int64_t need = static_cast<int64_t>(ctx.whole) * (rack_required ? min : count);
    std::vector<int32_t> racks;
    for (int32_t r = 0; r < cap.num_racks(); ++r) {
      if (rack_free[r] >= need) racks.push_back(r);
    }
    // Best-fitting racks first: those with the least room that holds the gang.
    const size_t tries = std::min(racks.size(), static_cast<size_t>(kRackTries));
    std::partial_sort(racks.begin(), racks.begin() + tries, racks.end(), [&](int32_t a, int32_t b) {
      return rack_free[a] != rack_free[b] ? rack_free[a] < rack_free[b] : a < b;
    });
    racks.resize(tries);
    for (int32_t r : racks) {
      const size_t cp = state_.Checkpoint();
      ctx.rack = r;
      ctx.used_nodes.clear();
      const int32_t placed = PlaceLoop(ctx, count, out);
      if (placed == count || (rack_required && placed >= min)) return true;
      state_.Rollback(cp);
      out->pods.clear();
      out->count = 0;
      if (ctx.quota_stopped) return false;
    }
    ctx.rack = -1;
    ctx.used_nodes.clear();
    if (rack_required) {
      ExplainCapacity(ctx, 0, why);
      if (why != nullptr && why->bottleneck != CapacityBottleneck::kWholeGpus) {
        why->bottleneck = CapacityBottleneck::kTopology;
        why->largest_free_milli = 1000 * (rack_free.empty() ? 0 : *std::max_element(rack_free.begin(), rack_free.end()));
      }
      return false;
    }
  }

  ctx.avoid_used = ps.topology == TopologyPreference::kSpread;
  if (ctx.avoid_used && !ps.spread_from_nodes.empty()) {
    const std::vector<Node>& nodes = state_.snapshot().nodes;
    for (int32_t n = 0; n < static_cast<int32_t>(nodes.size()); ++n) {
      if (std::find(ps.spread_from_nodes.begin(), ps.spread_from_nodes.end(), nodes[n].name) !=
          ps.spread_from_nodes.end()) {
        ctx.used_nodes.push_back(n);
      }
    }
  }
  const int32_t placed = PlaceLoop(ctx, count, out);
  if (placed >= min) return true;
  ExplainCapacity(ctx, placed, why);
  return false;
}

}  // namespace tessera
