#include "sim/fragmentation_experiment.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "sched/cluster_state.h"
#include "sched/placement.h"

namespace tessera {
namespace {

// One pod's request, per the pod list.
struct PodRequest {
  int64_t gpu_milli = 0;  // < 1000: a fraction of one device; else whole devices
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  const std::vector<std::string>* models = nullptr;
};

// The interface the replay needs of a placement method: place one pod or not.
class Placement {
 public:
  virtual ~Placement() = default;
  // GPU milli allocated to the pod, or -1 when it does not fit anywhere.
  virtual int64_t Place(const PodRequest& pod) = 0;
};

// The scheduler core's Placer on a one-flavor snapshot with an unlimited queue.
class CorePlacement : public Placement {
 public:
  // `demand`: the pod list the pods are sampled from, as the work to leave room for.
  CorePlacement(const std::vector<Node>& nodes, const std::vector<TraceJob>& demand, int32_t candidates)
      : config_{.fragmentation_candidates = candidates},
        snapshot_(MakeSnapshot(nodes)),
        state_(snapshot_, config_),
        placer_(state_, config_) {
    for (const TraceJob& t : demand) profile_.Add(t.gpu_milli, t.cpu_milli, t.memory_bytes, t.pods);
    profile_.Finish();
    placer_.SetDemandProfile(&profile_);
  }

  int64_t Place(const PodRequest& pod) override {
    workload_.pod_sets[0].requests.set(ResourceKind::kGpu, pod.gpu_milli);
    workload_.pod_sets[0].requests.set(ResourceKind::kCpu, pod.cpu_milli);
    workload_.pod_sets[0].requests.set(ResourceKind::kMemory, pod.memory_bytes);
    workload_.pod_sets[0].limits = workload_.pod_sets[0].requests;
    const size_t checkpoint = state_.Checkpoint();
    PodSetAssignment assignment;
    FlavorAttempt why;
    if (!placer_.PlacePodSet(workload_, 0, 0, 0, &assignment, &why)) {
      state_.Rollback(checkpoint);
      return -1;
    }
    state_.Commit();
    int64_t milli = 0;
    for (const PodPlacement& p : assignment.pods) {
      for (const DeviceShare& d : p.gpus) milli += d.milli;
    }
    return milli;
  }

 private:
  static ClusterSnapshot MakeSnapshot(const std::vector<Node>& nodes) {
    ClusterSnapshot s;
    s.nodes = nodes;
    s.flavors.push_back(ResourceFlavor{.name = "default"});
    ResourceGroup group;
    FlavorQuotas quotas{.flavor = FlavorId(0)};
    for (ResourceKind k : kAllResourceKinds) {
      group.covered_resources.push_back(k);
      quotas.resources.push_back(ResourceQuotaSpec{.resource = k, .nominal = std::numeric_limits<int64_t>::max() / 4});
    }
    group.flavors.push_back(std::move(quotas));
    s.cluster_queues.push_back(ClusterQueue{.name = "all", .resource_groups = {std::move(group)}});
    s.namespaces.push_back(Namespace{.name = "default"});
    return s;
  }

  SchedulerConfig config_;
  ClusterSnapshot snapshot_;
  ClusterState state_;
  DemandProfile profile_;
  Placer placer_;
  Workload workload_{.namespace_name = "default", .name = "pod", .pod_sets = {PodSet{}}};
};

// The baselines keep their own free capacity per node and device.
class BaselinePlacement : public Placement {
 public:
  BaselinePlacement(const std::vector<Node>& nodes, PlacementMethod method, uint64_t seed)
      : nodes_(nodes), method_(method), rng_(seed ^ 0x9e3779b97f4a7c15ULL) {
    for (const Node& n : nodes) {
      first_device_.push_back(static_cast<int32_t>(device_free_.size()));
      device_free_.resize(device_free_.size() + n.gpus.size(), 1000);
      free_cpu_.push_back(n.cpu_milli);
      free_memory_.push_back(n.memory_bytes);
    }
    first_device_.push_back(static_cast<int32_t>(device_free_.size()));
  }

  int64_t Place(const PodRequest& pod) override {
    candidates_.clear();
    for (int32_t n = 0; n < static_cast<int32_t>(nodes_.size()); ++n) {
      if (Fits(n, pod)) candidates_.push_back(n);
    }
    if (candidates_.empty()) return -1;
    int32_t node = candidates_[0];
    if (method_ == PlacementMethod::kRandom) {
      node = candidates_[std::uniform_int_distribution<size_t>(0, candidates_.size() - 1)(rng_)];
    } else {
      // Least free GPU after placement, then least free CPU.
      auto key = [&](int32_t n) { return std::make_tuple(FreeGpu(n), free_cpu_[n], n); };
      node = *std::min_element(candidates_.begin(), candidates_.end(),
                               [&](int32_t a, int32_t b) { return key(a) < key(b); });
    }
    free_cpu_[node] -= pod.cpu_milli;
    free_memory_[node] -= pod.memory_bytes;
    if (pod.gpu_milli == 0) return 0;
    if (pod.gpu_milli < 1000) {
      std::vector<int32_t> fits;
      for (int32_t d = first_device_[node]; d < first_device_[node + 1]; ++d) {
        if (device_free_[d] >= pod.gpu_milli) fits.push_back(d);
      }
      int32_t d = fits[0];
      if (method_ == PlacementMethod::kRandom) {
        d = fits[std::uniform_int_distribution<size_t>(0, fits.size() - 1)(rng_)];
      } else {
        d = *std::min_element(fits.begin(), fits.end(), [&](int32_t a, int32_t b) {
          return std::make_pair(device_free_[a], a) < std::make_pair(device_free_[b], b);
        });
      }
      device_free_[d] -= pod.gpu_milli;
      return pod.gpu_milli;
    }
    int64_t left = pod.gpu_milli / 1000;
    for (int32_t d = first_device_[node]; d < first_device_[node + 1] && left > 0; ++d) {
      if (device_free_[d] == 1000) {
        device_free_[d] = 0;
        --left;
      }
    }
    return pod.gpu_milli;
  }

 private:
  int64_t FreeGpu(int32_t n) const {
    int64_t free = 0;
    for (int32_t d = first_device_[n]; d < first_device_[n + 1]; ++d) free += device_free_[d];
    return free;
  }

  bool Fits(int32_t n, const PodRequest& pod) const {
    if (free_cpu_[n] < pod.cpu_milli || free_memory_[n] < pod.memory_bytes) return false;
    if (pod.gpu_milli == 0) return true;
    if (pod.models != nullptr && !pod.models->empty() && !nodes_[n].gpus.empty() &&
        std::find(pod.models->begin(), pod.models->end(), nodes_[n].gpus[0].model) == pod.models->end()) {
      return false;
    }
    if (pod.gpu_milli < 1000) {
      for (int32_t d = first_device_[n]; d < first_device_[n + 1]; ++d) {
        if (device_free_[d] >= pod.gpu_milli) return true;
      }
      return false;
    }
    int64_t whole = 0;
    for (int32_t d = first_device_[n]; d < first_device_[n + 1]; ++d) whole += device_free_[d] == 1000;
    return whole * 1000 >= pod.gpu_milli;
  }

  const std::vector<Node>& nodes_;
  PlacementMethod method_;
  std::mt19937_64 rng_;
  std::vector<int32_t> first_device_;
  std::vector<int64_t> device_free_;
  std::vector<int64_t> free_cpu_, free_memory_;
  std::vector<int32_t> candidates_;
};

}  // namespace

Result<PlacementMethod> ParsePlacementMethod(std::string_view name) {
  if (name == "tessera") return PlacementMethod::kTessera;
  if (name == "bestfit") return PlacementMethod::kBestFit;
  if (name == "random") return PlacementMethod::kRandom;
  return Err(Status::InvalidArgument(fmt::format("unknown placement \"{}\": use tessera, bestfit or random", name)));
}

std::string_view PlacementMethodName(PlacementMethod method) {
  switch (method) {
    case PlacementMethod::kTessera: return "tessera";
    case PlacementMethod::kBestFit: return "bestfit";
    case PlacementMethod::kRandom: return "random";
  }
  return "?";
}

Result<ArrivalOrder> ParseArrivalOrder(std::string_view name) {
  if (name == "published") return ArrivalOrder::kPublished;
  if (name == "creation") return ArrivalOrder::kCreation;
  return Err(Status::InvalidArgument(fmt::format("unknown arrival order \"{}\": use published or creation", name)));
}

std::string_view ArrivalOrderName(ArrivalOrder order) {
  switch (order) {
    case ArrivalOrder::kPublished: return "published";
    case ArrivalOrder::kCreation: return "creation";
  }
  return "?";
}

FragmentationRun RunFragmentationProtocol(const std::vector<Node>& nodes, const std::vector<TraceJob>& pods,
                                          PlacementMethod method, uint64_t seed, double tune,
                                          int32_t candidates, ArrivalOrder order) {
  FragmentationRun run{.method = method, .seed = seed};
  int64_t total = 0;
  for (const Node& n : nodes) total += n.GpuMilli();
  const auto max_pct = static_cast<int32_t>(tune * 100 + 0.5);
  if (pods.empty() || total == 0) {
    run.allocation_pct.assign(max_pct + 1, 0);
    return run;
  }
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, pods.size() - 1);
  std::vector<size_t> sample;
  int64_t requested = 0;
  const auto target = static_cast<int64_t>(tune * static_cast<double>(total));
  if (order == ArrivalOrder::kCreation) {
    // Sample with replacement until the requests reach tune x capacity; replay in creation order.
    for (size_t guard = 0; requested < target && guard < 100 * pods.size() + 1000; ++guard) {
      const size_t i = pick(rng);
      sample.push_back(i);
      requested += pods[i].TotalGpuMilli();
    }
    std::stable_sort(sample.begin(), sample.end(),
                     [&](size_t a, size_t b) { return pods[a].submit_s < pods[b].submit_s; });
  } else {
    // Every pod once (by name, then shuffled), then random copies appended while
    // the next one's per-GPU share still fits under the target.
    sample.resize(pods.size());
    std::iota(sample.begin(), sample.end(), size_t{0});
    std::stable_sort(sample.begin(), sample.end(), [&](size_t a, size_t b) { return pods[a].name < pods[b].name; });
    std::vector<size_t> by_name = sample;
    std::shuffle(sample.begin(), sample.end(), rng);
    for (size_t i : sample) requested += pods[i].TotalGpuMilli();
    for (size_t guard = 0; requested < target && guard < 100 * pods.size() + 1000; ++guard) {
      const size_t i = by_name[pick(rng)];
      if (requested + std::min<int64_t>(pods[i].gpu_milli, 1000) > target) break;
      sample.push_back(i);
      requested += pods[i].TotalGpuMilli();
    }
  }

  std::unique_ptr<Placement> placement;
  if (method == PlacementMethod::kTessera) {
    placement = std::make_unique<CorePlacement>(nodes, pods, candidates);
  } else {
    placement = std::make_unique<BaselinePlacement>(nodes, method, seed);
  }
  int64_t arrived = 0, allocated = 0;
  int32_t next_pct = 0;
  run.allocation_pct.reserve(max_pct + 1);
  for (size_t i : sample) {
    const TraceJob& t = pods[i];
    const PodRequest pod{.gpu_milli = t.TotalGpuMilli(), .cpu_milli = t.cpu_milli, .memory_bytes = t.memory_bytes,
                         .models = &t.gpu_models};
    const auto start = std::chrono::steady_clock::now();
    const int64_t placed = placement->Place(pod);
    run.placement_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    ++run.pods_arrived;
    if (placed >= 0) {
      ++run.pods_placed;
      allocated += placed;
    }
    arrived += pod.gpu_milli;
    while (next_pct <= max_pct && arrived * 100 >= static_cast<int64_t>(next_pct) * total) {
      run.allocation_pct.push_back(100.0 * static_cast<double>(allocated) / static_cast<double>(total));
      ++next_pct;
    }
  }
  while (next_pct++ <= max_pct) run.allocation_pct.push_back(100.0 * static_cast<double>(allocated) / static_cast<double>(total));
  return run;
}

}  // namespace tessera
