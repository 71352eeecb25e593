#include "server/controllers/approval_controller.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "api/convert.h"
#include "api/validation.h"
#include "auth/rbac.h"
#include "common/time_format.h"
#include "domain/budget.h"
#include "domain/quantity.h"
#include "sched/pending_reason.h"
#include "server/controllers/job_controller.h"
#include "server/object_json.h"
#include "server/controllers/workload_lifecycle.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr const char* kPhaseApproved = "Approved";
constexpr const char* kPhaseDenied = "Denied";
constexpr const char* kPhaseExpired = "Expired";
constexpr const char* kPhasePending = "Pending";

std::string GpusText(int64_t milli) { return FormatMilliDecimal(milli) + (milli == 1000 ? " GPU" : " GPUs"); }

// A threshold of the policy ("8", "2.5") in thousandths; nullopt when absent.
std::optional<int64_t> Threshold(const json& policy, const char* field) {
  const json* thresholds = nullptr;
  if (auto spec = policy.find("spec"); spec != policy.end() && spec->is_object()) {
    if (auto t = spec->find("thresholds"); t != spec->end() && t->is_object()) thresholds = &*t;
  }
  if (thresholds == nullptr) return std::nullopt;
  auto v = thresholds->find(field);
  if (v == thresholds->end()) return std::nullopt;
  auto text = QuantityText(*v);
  if (!text) return std::nullopt;
  auto milli = ParseMilli(*text);
  return milli ? std::optional<int64_t>(*milli) : std::nullopt;
}

std::map<std::string, std::string> LabelsOf(const json& obj) {
  std::map<std::string, std::string> out;
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return out;
  auto labels = meta->find("labels");
  if (labels == meta->end() || !labels->is_object()) return out;
  for (const auto& [k, v] : labels->items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

// Milli-units as a decimal ("2.5").
std::string Decimal(int64_t milli) { return FormatMilliDecimal(milli); }

std::string WaitMessage(const std::string& ns, const std::string& name, const json& request,
                        const std::vector<std::string>& approvers) {
  const json status = request.value("status", json::object());
  const json spec = request.value("spec", json::object());
  const int64_t got = static_cast<int64_t>(status.value("approvals", json::array()).size());
  const int64_t required = spec.value("requiredApprovals", int64_t{1});
  std::vector<std::string> reasons;
  for (const json& r : spec.value("reasons", json::array())) {
    if (r.is_string()) reasons.push_back(r.get<std::string>());
  }
  return fmt::format(
      "waits for approval, holding no quota: ApprovalRequest {}/{} has {} of {} approval{} ({}); who may approve: {} "
      "(tessera approve {} -n {}); the request expires at {}",
      ns, name, got, required, required == 1 ? "" : "s", fmt::join(reasons, "; "),
      approvers.empty() ? std::string("nobody yet: an admin binds a role with update on approvalrequests/approval")
                        : fmt::format("{}", fmt::join(approvers, ", ")),
      name, ns, spec.value("expiresAt", std::string("?")));
}

std::string DecisionMessage(const json& request) {
  const json status = request.value("status", json::object());
  const std::string phase = status.value("phase", "");
  if (phase == kPhaseExpired) {
    return fmt::format("deactivated: its ApprovalRequest expired at {} without enough approvals; submit it again",
                       request.value("spec", json::object()).value("expiresAt", std::string("?")));
  }
  const json denial = status.value("denial", json::object());
  return fmt::format("deactivated: its ApprovalRequest was denied by {} at {}: {}", denial.value("user", "?"),
                     denial.value("time", "?"), denial.value("reason", ""));
}

}  // namespace

ApprovalController::Verdict ApprovalController::Evaluate(const ObjectCache& cache, const StoredObject& so) const {
  Verdict v{.revision = so.revision, .context = context_};
  const json& w = so.object;
  const std::string ns = so.key.ns;
  // What it asks for, as the scheduler reads it.
  std::map<std::string, PriorityClass, std::less<>> classes;
  const PriorityClass* default_class = nullptr;
  for (const auto& [unused, p] : cache.Of("scheduling.k8s.io/PriorityClass")) {
    if (auto pc = PriorityClassFromJson(p.object)) classes[pc->name] = *pc;
  }
  for (const auto& [name, pc] : classes) {
    if (pc.global_default) default_class = &pc;
  }
  auto wl = WorkloadFromJson(
      w,
      [&](std::string_view name) -> const PriorityClass* {
        auto it = classes.find(name);
        return it == classes.end() ? nullptr : &it->second;
      },
      default_class, [](std::string_view) { return ClusterQueueId(); }, [](std::string_view) { return FlavorId(); },
      [](std::string_view) { return NodeId(); });
  if (!wl) return v;  // the scheduler reports what is wrong with it
  int64_t gpu_milli = 0;
  for (const PodSet& ps : wl->pod_sets) gpu_milli += ps.requests.gpu() * ps.count;
  const std::string klass = wl->priority_class.empty() && default_class ? default_class->name : wl->priority_class;
  // Its ClusterQueue: nominal GPUs per flavor, and the dearest flavor's price.
  const StoredObject* lq = cache.Find(ObjectKey{"kueue.x-k8s.io/LocalQueue", ns, wl->local_queue_name});
  const std::string cq_name = lq ? StringAt(lq->object, {"spec", "clusterQueue"}) : "";
  const StoredObject* cq_object = cq_name.empty() ? nullptr : cache.Find(ObjectKey{"kueue.x-k8s.io/ClusterQueue", "", cq_name});
  int64_t max_nominal = -1, max_price = 0;
  std::string max_nominal_flavor;
  if (cq_object != nullptr) {
    std::vector<std::string> flavor_names;
    auto cq = ClusterQueueFromJson(
        cq_object->object,
        [&](std::string_view name) {
          flavor_names.emplace_back(name);
          return FlavorId(static_cast<int32_t>(flavor_names.size() - 1));
        },
        [](std::string_view) { return CohortId(0); });
    if (cq) {
      for (const ResourceGroup& g : cq->resource_groups) {
        for (const FlavorQuotas& fq : g.flavors) {
          if (!fq.flavor.valid()) continue;
          const std::string& flavor = flavor_names[fq.flavor.value()];
          if (const ResourceQuotaSpec* r = fq.Find(ResourceKind::kGpu); r && r->nominal > max_nominal) {
            max_nominal = r->nominal;
            max_nominal_flavor = flavor;
          }
          if (const StoredObject* f = cache.Find(ObjectKey{"kueue.x-k8s.io/ResourceFlavor", "", flavor})) {
            max_price = std::max(max_price, FlavorPriceMicro(f->object));
          }
        }
      }
    }
  }
  std::map<std::string, std::string> ns_labels;
  if (const StoredObject* n = cache.Find(ObjectKey{"/Namespace", "", ns})) ns_labels = LabelsOf(n->object);
  ns_labels[std::string(kNamespaceNameLabel)] = ns;  // as Kubernetes labels every namespace

  const bool unbounded = wl->max_run.infinite();
  const int64_t run_seconds = unbounded ? 0 : wl->max_run.seconds();
  // GPU-hours in thousandths: milli-GPUs x seconds / 3600.
  const int64_t gpu_hours_milli = unbounded ? 0 : gpu_milli * run_seconds / 3600;
  for (const auto& [unused, p] : cache.Of(kApprovalPolicyKind)) {
    const json& policy = p.object;
    const json* spec = nullptr;
    if (auto s = policy.find("spec"); s != policy.end() && s->is_object()) spec = &*s;
    if (spec == nullptr) continue;
    if (auto sel = spec->find("namespaceSelector"); sel != spec->end() && sel->is_object()) {
      auto terms = LabelSelectorTermsFromJson(*sel, "spec.namespaceSelector");
      if (!terms || !terms->Matches(ns_labels)) continue;
    }
    const std::string name = p.key.name;
    const size_t before = v.reasons.size();
    if (auto gpus = Threshold(policy, "gpus"); gpus && gpu_milli > *gpus) {
      v.reasons.push_back(fmt::format("asks for {}, above the {} of ApprovalPolicy {}", GpusText(gpu_milli), Decimal(*gpus), name));
    }
    if (auto hours = Threshold(policy, "gpuHours"); hours && gpu_milli > 0) {
      if (unbounded) {
        v.reasons.push_back(fmt::format("has no run-time limit, so its GPU-hours are unbounded (ApprovalPolicy {} lets "
                                        "{} through without approval; set activeDeadlineSeconds)",
                                        name, Decimal(*hours)));
      } else if (gpu_hours_milli > *hours) {
        v.reasons.push_back(fmt::format("asks for {} GPU-hours ({} for {}), above the {} of ApprovalPolicy {}",
                                        Decimal(gpu_hours_milli), GpusText(gpu_milli),
                                        FormatDuration(wl->max_run), Decimal(*hours), name));
      }
    }
    if (auto cost = Threshold(policy, "estimatedCost"); cost && gpu_milli > 0 && max_price > 0) {
      const int64_t limit_micro = *cost * 1000;
      if (unbounded) {
        v.reasons.push_back(fmt::format("has no run-time limit, so its cost is unbounded (ApprovalPolicy {} lets {} "
                                        "through without approval; set activeDeadlineSeconds)",
                                        name, FormatMoney(limit_micro)));
      } else if (const int64_t estimate = GpuCostMicro(gpu_milli, run_seconds, max_price); estimate > limit_micro) {
        v.reasons.push_back(fmt::format("could cost {} (at the dearest flavor of its queue), above the {} of "
                                        "ApprovalPolicy {}",
                                        FormatMoney(estimate), FormatMoney(limit_micro), name));
      }
    }
    if (auto classes_json = spec->value("thresholds", json::object()).value("priorityClasses", json::array());
        classes_json.is_array()) {
      for (const json& c : classes_json) {
        if (c.is_string() && c.get<std::string>() == klass && !klass.empty()) {
          v.reasons.push_back(fmt::format("runs at priority class {}, which ApprovalPolicy {} gates", klass, name));
        }
      }
    }
    if (spec->value("thresholds", json::object()).value("overNominalQuota", false) && max_nominal >= 0 &&
        gpu_milli > max_nominal) {
      v.reasons.push_back(fmt::format("asks for {}, more than the {} of nominal quota ClusterQueue {} has in any flavor "
                                      "(ApprovalPolicy {})",
                                      GpusText(gpu_milli), FormatMilliDecimal(max_nominal), cq_name, name));
    }
    if (v.reasons.size() == before) continue;
    const bool first = v.policies.empty();
    v.policies.push_back(name);
    const int32_t required = spec->value("requiredApprovals", 1);
    const bool allow_self = spec->value("allowSelfApproval", false);
    Duration expire = kDefaultApprovalExpiry;
    if (auto e = spec->find("expireAfter"); e != spec->end() && e->is_string()) {
      if (auto d = ParseDuration(e->get<std::string>())) expire = *d;
    }
    v.required = first ? required : std::max(v.required, required);
    v.allow_self = first ? allow_self : v.allow_self && allow_self;
    v.expire_after = first ? expire : std::min(v.expire_after, expire);
  }
  if (!v.policies.empty()) {
    // What was asked for: an approval holds for this, not for a later, larger ask.
    const json asked{{"podSets", w.value("spec", json::object()).value("podSets", json::array())},
                     {"priorityClassName", w.value("spec", json::object()).value("priorityClassName", json())},
                     {"queueName", w.value("spec", json::object()).value("queueName", json())},
                     {"maxRun", run_seconds}};
    v.hash = fmt::format("{:016x}", std::hash<std::string>{}(asked.dump(-1, ' ', false, json::error_handler_t::replace)));
  }
  return v;
}

void ApprovalController::Reconcile(const ObjectCache& cache, Timestamp now, BatchedWriter& writer, EventRecorder& events) {
  gated_.clear();
  const ObjectCache::Objects& requests = cache.Of(kApprovalRequestKind);
  if (cache.Of(kApprovalPolicyKind).empty() && requests.empty()) {
    verdicts_.clear();
    return;
  }
  // What the verdicts depend on besides the workload itself.
  std::string context;
  for (const char* kind : {kApprovalPolicyKind, "kueue.x-k8s.io/LocalQueue", "kueue.x-k8s.io/ClusterQueue",
                           "kueue.x-k8s.io/ResourceFlavor", "scheduling.k8s.io/PriorityClass", "/Namespace"}) {
    for (const auto& [key, o] : cache.Of(kind)) context += fmt::format("{}/{}/{}={};", kind, key.first, key.second, o.revision);
  }
  if (const uint64_t hash = std::hash<std::string>{}(context); hash != context_) {
    context_ = hash;
    verdicts_.clear();
  }
  const std::string now_text = FormatRfc3339(Timestamp::FromSeconds(now.seconds()));
  std::set<const StoredObject*> seen;
  for (const auto& [key, active] : cache.ActiveOf(kWorkloadKind)) {
    const StoredObject& so = *active;
    if (so.object.value("status", json::object()).contains("admission")) continue;  // admitted: past any gate
    if (!StringAt(so.object, {"metadata", "deletionTimestamp"}).empty()) continue;
    // A placeholder holds room for work already approved at its full size (an
    // elastic gang's Workload asks for its maximum): no gate of its own.
    if (StringAt(so.object, {"metadata", "annotations", std::string(kPlaceholderAnnotation).c_str()}) == "true") continue;
    seen.insert(&so);
    auto [it, fresh] = verdicts_.try_emplace(&so);
    if (fresh || it->second.revision != so.revision || it->second.context != context_) it->second = Evaluate(cache, so);
    const Verdict& v = it->second;
    if (v.policies.empty()) continue;
    const std::string uid = StringAt(so.object, {"metadata", "uid"});
    const StoredObject* request = cache.Find(ObjectKey{kApprovalRequestKind, so.key.ns, so.key.name});
    const bool current = request != nullptr && StringAt(request->object, {"spec", "workloadUID"}) == uid &&
                         StringAt(request->object, {"spec", "specHash"}) == v.hash;
    gated_.insert(&so);
    const std::vector<std::string> approvers = approvers_ ? approvers_(so.key.ns) : std::vector<std::string>{};
    if (!current) {
      // A new request (or a fresh one: the workload now asks for something else).
      json next{{"apiVersion", "tessera.dev/v1"},
                {"kind", "ApprovalRequest"},
                {"metadata",
                 {{"name", so.key.name},
                  {"namespace", so.key.ns},
                  {"creationTimestamp", now_text},
                  {"labels", {{"tessera.dev/workload", so.key.name}}},
                  {"ownerReferences",
                   {{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "Workload"}, {"name", so.key.name},
                     {"uid", uid}, {"controller", true}}}}}},
                {"spec",
                 {{"workload", so.key.name},
                  {"workloadUID", uid},
                  {"requester", StringAt(so.object, {"metadata", "annotations", kCreatedByAnnotation.data()})},
                  {"policies", v.policies},
                  {"reasons", v.reasons},
                  {"requiredApprovals", v.required},
                  {"allowSelfApproval", v.allow_self},
                  {"specHash", v.hash},
                  {"expiresAt", FormatRfc3339(Timestamp::FromSeconds((now + v.expire_after).seconds()))},
                  {"approvers", approvers}}},
                {"status", {{"phase", kPhasePending}, {"approvals", json::array()}}}};
      const std::string message = WaitMessage(so.key.ns, so.key.name, next, approvers);
      if (request != nullptr) {
        writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = request->key, .object = next,
                           .expected_revision = request->revision},
                   fmt::format("renew approval request {}/{}", so.key.ns, so.key.name));
      } else {
        writer.Add(WriteOp{.op = WriteOp::Kind::kCreate, .key = ObjectKey{kApprovalRequestKind, so.key.ns, so.key.name},
                           .object = next},
                   fmt::format("request approval for {}/{}", so.key.ns, so.key.name));
      }
      events.Record(writer, so, EventRecorder::Type::kNormal, "ApprovalRequested", message, now);
      json w = so.object;
      if (SetCondition(w, "QuotaReserved", false, "AwaitingApproval", message, now_text)) {
        writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = so.key, .object = std::move(w), .expected_revision = so.revision},
                   fmt::format("workload {}/{} waits for approval", so.key.ns, so.key.name));
      }
      continue;
    }
    std::string phase = StringAt(request->object, {"status", "phase"});
    if (phase.empty()) phase = kPhasePending;
    if (phase == kPhaseApproved) {
      gated_.erase(&so);
      continue;
    }
    json decided = request->object;
    if (phase == kPhasePending) {
      auto expires = ParseRfc3339(StringAt(request->object, {"spec", "expiresAt"}));
      if (expires && now >= *expires) {
        phase = kPhaseExpired;
        decided["status"]["phase"] = kPhaseExpired;
        SetCondition(decided, "Expired", true, "Expired", "not enough approvals before spec.expiresAt", now_text);
        writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = request->key, .object = decided,
                           .expected_revision = request->revision},
                   fmt::format("expire approval request {}/{}", so.key.ns, so.key.name));
      }
    }
    json w = so.object;
    bool changed = false;
    if (phase == kPhasePending) {
      changed = SetCondition(w, "QuotaReserved", false, "AwaitingApproval",
                             WaitMessage(so.key.ns, so.key.name, request->object, approvers), now_text);
    } else {
      // Denied or expired: deactivated, with who and why (a resume cannot bring it past the gate).
      const std::string message = DecisionMessage(decided);
      changed = SetCondition(w, "QuotaReserved", false, phase == kPhaseDenied ? "ApprovalDenied" : "ApprovalExpired",
                             message, now_text);
      if (w["spec"].value("active", true)) {
        w["spec"]["active"] = false;
        changed = true;
        events.Record(writer, so, EventRecorder::Type::kWarning, phase == kPhaseDenied ? "ApprovalDenied" : "ApprovalExpired",
                      message, now);
      }
    }
    if (changed) {
      writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = so.key, .object = std::move(w), .expected_revision = so.revision},
                 fmt::format("workload {}/{} approval state", so.key.ns, so.key.name));
    }
  }
  std::erase_if(verdicts_, [&](const auto& e) { return !seen.count(e.first); });
  // Requests whose workload is gone go with it.
  for (const auto& [key, r] : requests) {
    const StoredObject* w = cache.Find(ObjectKey{kWorkloadKind, key.first, key.second});
    if (w == nullptr || StringAt(w->object, {"metadata", "uid"}) != StringAt(r.object, {"spec", "workloadUID"})) {
      writer.Add(WriteOp{.op = WriteOp::Kind::kDelete, .key = r.key, .expected_revision = r.revision},
                 fmt::format("delete approval request {}/{} of a workload that is gone", key.first, key.second));
    }
  }
}

}  // namespace tessera
