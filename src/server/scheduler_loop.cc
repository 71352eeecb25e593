#include "server/scheduler_loop.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "api/convert.h"
#include "api/time_format.h"
#include "domain/quantity.h"
#include "sched/cycle.h"
#include "sched/pending_reason.h"
#include "sched/snapshot_builder.h"
#include "sched/workload_usage.h"

namespace tessera {
namespace {

constexpr auto kBatchWindow = std::chrono::milliseconds(5);
constexpr auto kResyncPeriod = std::chrono::seconds(5);

const char* kJob = "batch/Job";
const char* kVolcanoJob = "batch.volcano.sh/Job";
const char* kWorkload = "kueue.x-k8s.io/Workload";
const char* kPod = "/Pod";

using nlohmann::json;

std::string Str(const json& obj, std::initializer_list<const char*> path) {
  const json* cur = &obj;
  for (const char* p : path) {
    if (!cur->is_object()) return "";
    auto it = cur->find(p);
    if (it == cur->end()) return "";
    cur = &*it;
  }
  return cur->is_string() ? cur->get<std::string>() : "";
}

// Sets condition `type` in obj.status.conditions; true when anything changed.
bool SetCondition(json& obj, const std::string& type, bool status, const std::string& reason,
                  const std::string& message, const std::string& now) {
  json& conds = obj["status"]["conditions"];
  if (!conds.is_array()) conds = json::array();
  const std::string s = status ? "True" : "False";
  for (json& c : conds) {
    if (c.value("type", "") != type) continue;
    if (c.value("status", "") == s && c.value("reason", "") == reason && c.value("message", "") == message) return false;
    if (c.value("status", "") != s) c["lastTransitionTime"] = now;
    c["status"] = s;
    c["reason"] = reason;
    c["message"] = message;
    return true;
  }
  conds.push_back({{"type", type}, {"status", s}, {"reason", reason}, {"message", message}, {"lastTransitionTime", now}});
  return true;
}

bool ConditionTrue(const json& obj, const std::string& type) {
  const json conds = obj.value("status", json::object()).value("conditions", json::array());
  for (const json& c : conds) {
    if (c.value("type", "") == type) return c.value("status", "") == "True";
  }
  return false;
}

}  // namespace

SchedulerLoop::SchedulerLoop(Store& store, SchedulerConfig config, Clock clock, std::function<void()> written)
    : store_(store), config_(config), clock_(std::move(clock)), written_(std::move(written)) {}

SchedulerLoop::~SchedulerLoop() { Stop(); }

void SchedulerLoop::Start() { thread_ = std::thread([this] { Run(); }); }

void SchedulerLoop::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SchedulerLoop::Kick() {
  {
    std::lock_guard lock(mu_);
    kicked_ = true;
  }
  cv_.notify_one();
}

SchedulerLoopStats SchedulerLoop::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void SchedulerLoop::Run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, kResyncPeriod, [this] { return kicked_ || stop_; });
    if (stop_) break;
    // Let a burst of writes land, then schedule them together.
    cv_.wait_for(lock, kBatchWindow, [this] { return stop_; });
    kicked_ = false;
    lock.unlock();
    Status s = RunOnce();
    if (!s.ok()) spdlog::warn("scheduling pass failed: {}", s.ToString());
    lock.lock();
  }
}

Status SchedulerLoop::RunOnce() {
  const Timestamp now = clock_();
  const std::string now_text = FormatRfc3339(now);
  bool wrote = false;

  // 1. Jobs -> Workloads; orphaned Workloads (their Job deleted) go with their Pods.
  ASSIGN_OR_RETURN(ListResult workloads, store_.List(kWorkload, ""));
  std::set<std::pair<std::string, std::string>> existing;
  for (const StoredObject& w : workloads.items) existing.insert({w.key.ns, w.key.name});
  std::set<std::pair<std::string, std::string>> owners;  // (ns, workload name) that still have their job
  // A job that names no queue goes to its namespace's only LocalQueue, when it has
  // exactly one (the seed's Volcano job names none), else to the one named "default".
  ASSIGN_OR_RETURN(ListResult local_queues, store_.List("kueue.x-k8s.io/LocalQueue", ""));
  std::map<std::string, std::vector<std::string>> queues_in;
  for (const StoredObject& lq : local_queues.items) queues_in[lq.key.ns].push_back(lq.key.name);
  for (const char* kind : {kJob, kVolcanoJob}) {
    ASSIGN_OR_RETURN(ListResult jobs, store_.List(kind, ""));
    for (const StoredObject& job : jobs.items) {
      auto wl = WorkloadForJob(job.object);
      if (!wl) {
        spdlog::warn("job {}/{}: {}", job.key.ns, job.key.name, wl.error().message());
        continue;
      }
      const std::string name = Str(*wl, {"metadata", "name"});
      const bool names_queue = !Str(job.object, {"metadata", "labels", "kueue.x-k8s.io/queue-name"}).empty() ||
                               !Str(job.object, {"spec", "queue"}).empty();
      if (!names_queue && queues_in[job.key.ns].size() == 1) (*wl)["spec"]["queueName"] = queues_in[job.key.ns].front();
      owners.insert({job.key.ns, name});
      if (existing.count({job.key.ns, name})) continue;
      (*wl)["metadata"]["creationTimestamp"] = now_text;
      (*wl)["metadata"]["generation"] = 1;
      auto created = store_.Create(ObjectKey{kWorkload, job.key.ns, name}, std::move(*wl));
      if (!created && created.error().code() != StatusCode::kAlreadyExists) return created.error();
      wrote = true;
    }
  }
  ASSIGN_OR_RETURN(ListResult pods, store_.List(kPod, ""));
  std::map<std::pair<std::string, std::string>, std::vector<const StoredObject*>> pods_of;  // (ns, workload)
  for (const StoredObject& p : pods.items) {
    pods_of[{p.key.ns, Str(p.object, {"metadata", "labels", "tessera.dev/workload"})}].push_back(&p);
  }
  for (const StoredObject& w : workloads.items) {
    const bool job_owned = Str(w.object, {"metadata", "labels", "tessera.dev/job-name"}) != "";
    if (!job_owned || owners.count({w.key.ns, w.key.name})) continue;
    for (const StoredObject* p : pods_of[{w.key.ns, w.key.name}]) (void)store_.Delete(p->key, 0);
    (void)store_.Delete(w.key, 0);
    wrote = true;
  }
  if (wrote) {
    ASSIGN_OR_RETURN(workloads, store_.List(kWorkload, ""));
  }

  // 2. Evicted workloads whose pods are gone return to their queue.
  for (StoredObject& w : workloads.items) {
    if (!ConditionTrue(w.object, "Evicted") || !w.object["status"].contains("admission")) continue;
    if (!pods_of[{w.key.ns, w.key.name}].empty()) continue;
    json next = w.object;
    next["status"].erase("admission");
    SetCondition(next, "QuotaReserved", false, "Evicted", "preempted; waiting in its queue again", now_text);
    SetCondition(next, "Admitted", false, "Evicted", "preempted; waiting in its queue again", now_text);
    SetCondition(next, "Evicted", false, "Requeued", "its pods have terminated; back in the queue", now_text);
    auto updated = store_.Update(w.key, next, w.revision);
    if (updated) {
      w = *updated;
      wrote = true;
    }
  }

  // 3. The snapshot.
  SnapshotBuilder b;
  ASSIGN_OR_RETURN(ListResult flavors, store_.List("kueue.x-k8s.io/ResourceFlavor", ""));
  for (const StoredObject& f : flavors.items) {
    auto rf = ResourceFlavorFromJson(f.object);
    if (rf) b.AddFlavor(std::move(*rf));
  }
  ASSIGN_OR_RETURN(ListResult nodes, store_.List("/Node", ""));
  for (const StoredObject& n : nodes.items) {
    auto node = NodeFromJson(n.object);
    if (node) b.AddNode(std::move(*node));
  }
  ASSIGN_OR_RETURN(ListResult cqs, store_.List("kueue.x-k8s.io/ClusterQueue", ""));
  for (const StoredObject& c : cqs.items) {
    auto cq = ClusterQueueFromJson(
        c.object, [&](std::string_view name) { return b.FlavorIdOf(std::string(name)); },
        [&](std::string_view name) { return b.Cohort(std::string(name)); });
    if (cq) b.AddClusterQueue(std::move(*cq));
  }
  ASSIGN_OR_RETURN(ListResult lqs, store_.List("kueue.x-k8s.io/LocalQueue", ""));
  for (const StoredObject& l : lqs.items) {
    auto lq = LocalQueueFromJson(l.object);
    if (lq) b.AddLocalQueue(lq->namespace_name, lq->name, lq->cluster_queue_name);
  }
  ASSIGN_OR_RETURN(ListResult namespaces, store_.List("/Namespace", ""));
  for (const StoredObject& n : namespaces.items) b.Namespace(n.key.name);
  ASSIGN_OR_RETURN(ListResult quotas, store_.List("/ResourceQuota", ""));
  for (const StoredObject& q : quotas.items) {
    auto rq = ResourceQuotaFromJson(q.object);
    if (rq) b.AddResourceQuota(q.key.ns, std::move(*rq));
  }
  ASSIGN_OR_RETURN(ListResult pcs, store_.List("scheduling.k8s.io/PriorityClass", ""));
  std::map<std::string, PriorityClass, std::less<>> classes;
  const PriorityClass* default_class = nullptr;
  for (const StoredObject& p : pcs.items) {
    auto pc = PriorityClassFromJson(p.object);
    if (pc) classes[pc->name] = *pc;
  }
  for (const auto& [name, pc] : classes) {
    if (pc.global_default) default_class = &pc;
  }
  std::vector<StoredObject*> stored;  // by WorkloadId
  for (StoredObject& w : workloads.items) {
    auto wl = WorkloadFromJson(
        w.object,
        [&](std::string_view name) -> const PriorityClass* {
          auto it = classes.find(name);
          return it == classes.end() ? nullptr : &it->second;
        },
        default_class, [&](std::string_view name) { return b.ClusterQueueIdOf(std::string(name)); },
        [&](std::string_view name) { return b.FlavorIdOf(std::string(name)); },
        [&](std::string_view name) { return b.NodeIdOf(std::string(name)); });
    if (!wl) {
      spdlog::warn("workload {}/{}: {}", w.key.ns, w.key.name, wl.error().message());
      continue;
    }
    b.AddWorkload(std::move(*wl));
    stored.push_back(&w);
  }
  const ClusterSnapshot snapshot = b.Build();

  // 4. Decide.
  const Plan plan = RunCycle(snapshot, config_, now);

  // 5. Write the decisions back.
  auto queue_name = [&](ClusterQueueId id) { return snapshot.cluster_queue(id).name; };
  auto flavor_name = [&](FlavorId id) { return snapshot.flavor(id).name; };
  auto node_name = [&](NodeId id) { return snapshot.node(id).name; };
  for (const AdmitDecision& a : plan.admissions) {
    StoredObject& so = *stored[a.workload.value()];
    const Workload& w = snapshot.workload(a.workload);
    json next = so.object;
    next["status"]["admission"] = AdmissionToJson(a.admission, w, queue_name, flavor_name, node_name, now_text);
    const std::string cq = snapshot.cluster_queue(a.admission.cluster_queue).name;
    SetCondition(next, "QuotaReserved", true, "QuotaReserved", fmt::format("Quota reserved in ClusterQueue {}", cq), now_text);
    SetCondition(next, "Admitted", true, "Admitted", fmt::format("The workload is admitted by ClusterQueue {}", cq), now_text);
    std::vector<WriteOp> ops;
    ops.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = so.key, .object = next, .expected_revision = so.revision});
    // Pods bound to their nodes and devices; the agent on each node runs them.
    const json& pod_sets = so.object["spec"].value("podSets", json::array());
    for (size_t p = 0; p < a.admission.pod_sets.size(); ++p) {
      const PodSetAssignment& psa = a.admission.pod_sets[p];
      const json tmpl = p < pod_sets.size() ? pod_sets[p].value("template", json::object()) : json::object();
      for (size_t i = 0; i < psa.pods.size(); ++i) {
        const PodPlacement& placement = psa.pods[i];
        const Node& node = snapshot.node(placement.node);
        std::vector<std::string> indices, uuids;
        for (const DeviceShare& d : placement.gpus) {
          indices.push_back(std::to_string(node.gpus[d.device].index));
          uuids.push_back(node.gpus[d.device].uuid);
        }
        const std::string pod_name = fmt::format("{}-{}-{}", so.key.name, w.pod_sets[p].name, i);
        json pod{{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata",
                  {{"name", pod_name},
                   {"namespace", so.key.ns},
                   {"creationTimestamp", now_text},
                   {"labels", tmpl.value("metadata", json::object()).value("labels", json::object())},
                   {"annotations",
                    {{"tessera.dev/gpu-devices", fmt::format("{}", fmt::join(indices, ","))},
                     {"tessera.dev/gpu-uuids", fmt::format("{}", fmt::join(uuids, ","))},
                     {"tessera.dev/gpu-milli", std::to_string(PlacedGpuMilli(placement))},
                     {"tessera.dev/pod-set", w.pod_sets[p].name},
                     {"tessera.dev/rank", std::to_string(i)},
                     {"tessera.dev/world-size", std::to_string(psa.count)}}},
                   {"ownerReferences",
                    {{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "Workload"}, {"name", so.key.name},
                      {"uid", Str(so.object, {"metadata", "uid"})}, {"controller", true}}}}}},
                 {"spec", tmpl.value("spec", json::object())},
                 {"status", {{"phase", "Pending"}}}};
        pod["metadata"]["labels"]["tessera.dev/workload"] = so.key.name;
        pod["spec"]["nodeName"] = node.name;
        pod["spec"]["schedulerName"] = "tessera";
        ops.push_back(WriteOp{.op = WriteOp::Kind::kCreate, .key = ObjectKey{kPod, so.key.ns, pod_name}, .object = std::move(pod)});
      }
    }
    auto applied = store_.Apply(std::move(ops));
    if (!applied) {
      spdlog::warn("admitting {}/{}: {}", so.key.ns, so.key.name, applied.error().message());
      continue;
    }
    wrote = true;
  }
  for (const PreemptDecision& p : plan.preemptions) {
    StoredObject& so = *stored[p.victim.value()];
    static const char* kWhy[] = {"InClusterQueue", "InCohortReclamation", "InCohortReclaimWhileBorrowing"};
    json next = so.object;
    SetCondition(next, "Evicted", true, "Preempted",
                 fmt::format("preempted by {} ({})", snapshot.workload(p.preemptor).Key(), kWhy[static_cast<int>(p.reason)]),
                 now_text);
    std::vector<WriteOp> ops;
    ops.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = so.key, .object = next, .expected_revision = so.revision});
    // Pods are marked terminating: the agent sends SIGTERM, waits the grace period, then deletes them.
    for (const StoredObject* pod : pods_of[{so.key.ns, so.key.name}]) {
      json pnext = pod->object;
      if (pnext["metadata"].contains("deletionTimestamp")) continue;
      pnext["metadata"]["deletionTimestamp"] = now_text;
      pnext["status"]["reason"] = "Preempted";
      ops.push_back(WriteOp{.op = WriteOp::Kind::kUpdate, .key = pod->key, .object = std::move(pnext),
                            .expected_revision = pod->revision});
    }
    if (store_.Apply(std::move(ops))) wrote = true;
  }
  for (const PendingDecision& p : plan.pending) {
    StoredObject& so = *stored[p.workload.value()];
    json next = so.object;
    const std::string message = DescribePending(snapshot, p.workload, p.reason, now);
    const std::string reason(PendingReasonName(p.reason.code));
    bool changed = SetCondition(next, "QuotaReserved", false, reason, message, now_text);
    changed = SetCondition(next, "Admitted", false, reason, message, now_text) || changed;
    if (!changed) continue;
    if (store_.Update(so.key, std::move(next), so.revision)) wrote = true;
  }

  // ClusterQueue status: usage per flavor and resource, admitted and pending counts.
  std::map<std::string, std::map<std::string, Resources>> usage;  // cq -> flavor -> used
  std::map<std::string, int64_t> admitted_count, pending_count;
  for (const Workload& w : snapshot.workloads) {
    if (!w.admission) continue;
    const std::string cq = snapshot.cluster_queue(w.admission->cluster_queue).name;
    ++admitted_count[cq];
    ForEachFlavorUsage(snapshot, w, [&](int32_t f, const Resources& r) { usage[cq][snapshot.flavors[f].name] += r; });
  }
  for (const AdmitDecision& a : plan.admissions) {
    const std::string cq = snapshot.cluster_queue(a.admission.cluster_queue).name;
    ++admitted_count[cq];
    Workload w = snapshot.workload(a.workload);
    w.admission = a.admission;
    ForEachFlavorUsage(snapshot, w, [&](int32_t f, const Resources& r) { usage[cq][snapshot.flavors[f].name] += r; });
  }
  for (const PendingDecision& p : plan.pending) {
    const Workload& w = snapshot.workload(p.workload);
    if (!w.local_queue.valid() || !snapshot.local_queue(w.local_queue).cluster_queue.valid()) continue;
    ++pending_count[snapshot.cluster_queue(snapshot.local_queue(w.local_queue).cluster_queue).name];
  }
  for (const StoredObject& c : cqs.items) {
    const std::string& name = c.key.name;
    json flavors_usage = json::array();
    for (const ClusterQueue& cq : snapshot.cluster_queues) {
      if (cq.name != name) continue;
      for (const ResourceGroup& g : cq.resource_groups) {
        for (const FlavorQuotas& fq : g.flavors) {
          if (!fq.flavor.valid()) continue;
          const std::string fname = snapshot.flavor(fq.flavor).name;
          const Resources used = usage[name][fname];
          json resources = json::array();
          for (ResourceKind k : g.covered_resources) {
            const ResourceQuotaSpec* spec = fq.Find(k);
            const int64_t borrowed = std::max<int64_t>(0, used.get(k) - (spec ? spec->nominal : 0));
            resources.push_back({{"name", ResourceName(k)},
                                 {"total", FormatAmount(k, used.get(k))},
                                 {"borrowed", FormatAmount(k, borrowed)}});
          }
          flavors_usage.push_back({{"name", fname}, {"resources", resources}});
        }
      }
    }
    json next = c.object;
    json status = next.value("status", json::object());
    status["flavorsUsage"] = flavors_usage;
    status["admittedWorkloads"] = admitted_count[name];
    status["reservingWorkloads"] = admitted_count[name];
    status["pendingWorkloads"] = pending_count[name];
    if (status == next.value("status", json::object())) continue;
    next["status"] = status;
    if (store_.Update(c.key, std::move(next), c.revision)) wrote = true;
  }

  // ResourceQuota status: what admitted work uses against each hard ceiling.
  std::map<std::string, std::pair<Resources, Resources>> ns_used;  // ns -> (requests, limits)
  auto charge = [&](const Workload& w, const Admission& a) {
    for (size_t p = 0; p < a.pod_sets.size(); ++p) {
      for (const PodPlacement& pod : a.pod_sets[p].pods) {
        ns_used[w.namespace_name].first += PodCharge(w.pod_sets[p], pod);
        ns_used[w.namespace_name].second += PodLimitCharge(w.pod_sets[p], pod);
      }
    }
  };
  for (const Workload& w : snapshot.workloads) {
    if (w.admission) charge(w, *w.admission);
  }
  for (const AdmitDecision& a : plan.admissions) charge(snapshot.workload(a.workload), a.admission);
  for (const StoredObject& q : quotas.items) {
    const json hard = q.object.value("spec", json::object()).value("hard", json::object());
    json used = json::object();
    for (const auto& [key, value] : hard.items()) {
      std::string resource = key;
      bool limits = false;
      if (resource.rfind("requests.", 0) == 0) resource = resource.substr(9);
      if (resource.rfind("limits.", 0) == 0) {
        resource = resource.substr(7);
        limits = true;
      }
      const auto kind = ParseResourceName(resource);
      if (!kind) continue;  // counted by nothing Tessera runs (persistentvolumeclaims...): not reported
      const auto& u = ns_used[q.key.ns];
      used[key] = FormatAmount(*kind, (limits ? u.second : u.first).get(*kind));
    }
    json next = q.object;
    const json status{{"hard", hard}, {"used", used}};
    if (next.value("status", json::object()) == status) continue;
    next["status"] = status;
    if (store_.Update(q.key, std::move(next), q.revision)) wrote = true;
  }

  {
    std::lock_guard lock(mu_);
    ++stats_.passes;
    stats_.admitted += static_cast<int64_t>(plan.admissions.size());
    stats_.preempted += static_cast<int64_t>(plan.preemptions.size());
    stats_.pending = static_cast<int64_t>(plan.pending.size());
  }
  if (wrote && written_) written_();
  return Status::Ok();
}

}  // namespace tessera
