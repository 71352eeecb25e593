#include "api/object_views.h"

#include <limits>
#include <string>
#include <utility>

namespace tessera {
namespace {

using nlohmann::json;

// obj[key] when obj is an object holding a non-null key; else nullptr.
const json* At(const json* obj, std::string_view key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  auto it = obj->find(key);
  if (it == obj->end() || it->is_null()) return nullptr;
  return &*it;
}

const json* ObjectAt(const json* obj, std::string_view key) {
  const json* v = At(obj, key);
  return v != nullptr && v->is_object() ? v : nullptr;
}

std::string_view TextAt(const json* obj, std::string_view key) {
  const json* v = At(obj, key);
  return v != nullptr && v->is_string() ? std::string_view(v->get_ref<const std::string&>()) : std::string_view();
}

// Integers only (a JSON 2.5 or "2" is not a count); an unsigned one beyond int64 reads as absent.
std::optional<int64_t> AsInt(const json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

std::optional<int64_t> IntAt(const json* obj, std::string_view key) {
  const json* v = At(obj, key);
  return v == nullptr ? std::nullopt : AsInt(*v);
}

std::optional<bool> BoolAt(const json* obj, std::string_view key) {
  const json* v = At(obj, key);
  if (v == nullptr || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

std::vector<std::pair<std::string_view, std::string_view>> StringPairs(const json* map) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  if (map == nullptr) return out;
  for (auto it = map->begin(); it != map->end(); ++it) {
    if (it->is_string()) out.emplace_back(it.key(), it->get_ref<const std::string&>());
  }
  return out;
}

std::optional<std::string_view> StringIn(const json* map, std::string_view key) {
  const json* v = At(map, key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return std::string_view(v->get_ref<const std::string&>());
}

OwnerReference OwnerReferenceOf(const json& ref) {
  return {.api_version = TextAt(&ref, "apiVersion"),
          .kind = TextAt(&ref, "kind"),
          .name = TextAt(&ref, "name"),
          .uid = TextAt(&ref, "uid"),
          .controller = BoolAt(&ref, "controller").value_or(false),
          .block_owner_deletion = BoolAt(&ref, "blockOwnerDeletion").value_or(false)};
}

Condition ConditionOf(const json& c) {
  return {.type = TextAt(&c, "type"),
          .status = TextAt(&c, "status"),
          .reason = TextAt(&c, "reason"),
          .message = TextAt(&c, "message"),
          .last_transition_time = TextAt(&c, "lastTransitionTime")};
}

std::optional<ContainerTermination> TerminationOf(const json* state) {
  const json* t = ObjectAt(state, "terminated");
  if (t == nullptr) return std::nullopt;
  return ContainerTermination{.exit_code = IntAt(t, "exitCode"),
                              .signal = IntAt(t, "signal"),
                              .reason = TextAt(t, "reason"),
                              .message = TextAt(t, "message")};
}

}  // namespace

// ---------------------------------------------------------------------------
// ObjectMetaView

ObjectMetaView::ObjectMetaView(const json& object) : metadata_(ObjectAt(&object, "metadata")) {}

std::string_view ObjectMetaView::Name() const { return TextAt(metadata_, "name"); }
std::string_view ObjectMetaView::Namespace() const { return TextAt(metadata_, "namespace"); }
std::string_view ObjectMetaView::Uid() const { return TextAt(metadata_, "uid"); }
std::string_view ObjectMetaView::ResourceVersion() const { return TextAt(metadata_, "resourceVersion"); }
std::string_view ObjectMetaView::CreationTimestamp() const { return TextAt(metadata_, "creationTimestamp"); }
std::string_view ObjectMetaView::DeletionTimestamp() const { return TextAt(metadata_, "deletionTimestamp"); }

std::optional<std::string_view> ObjectMetaView::Label(std::string_view key) const {
  return StringIn(ObjectAt(metadata_, "labels"), key);
}
std::optional<std::string_view> ObjectMetaView::Annotation(std::string_view key) const {
  return StringIn(ObjectAt(metadata_, "annotations"), key);
}
std::vector<std::pair<std::string_view, std::string_view>> ObjectMetaView::Labels() const {
  return StringPairs(ObjectAt(metadata_, "labels"));
}
std::vector<std::pair<std::string_view, std::string_view>> ObjectMetaView::Annotations() const {
  return StringPairs(ObjectAt(metadata_, "annotations"));
}

std::vector<OwnerReference> ObjectMetaView::OwnerReferences() const {
  std::vector<OwnerReference> out;
  const json* refs = At(metadata_, "ownerReferences");
  if (refs == nullptr || !refs->is_array()) return out;
  for (const json& ref : *refs) {
    if (ref.is_object()) out.push_back(OwnerReferenceOf(ref));
  }
  return out;
}

std::optional<OwnerReference> ObjectMetaView::ControllerRef() const {
  for (const OwnerReference& ref : OwnerReferences()) {
    if (ref.controller) return ref;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// ConditionsView

ConditionsView::ConditionsView(const json& object) : conditions_(nullptr) {
  const json* list = At(ObjectAt(&object, "status"), "conditions");
  if (list != nullptr && list->is_array()) conditions_ = list;
}

std::optional<Condition> ConditionsView::Find(std::string_view type) const {
  if (conditions_ == nullptr) return std::nullopt;
  for (const json& c : *conditions_) {
    if (c.is_object() && TextAt(&c, "type") == type) return ConditionOf(c);
  }
  return std::nullopt;
}

bool ConditionsView::IsTrue(std::string_view type) const {
  std::optional<Condition> c = Find(type);
  return c && c->IsTrue();
}

std::vector<Condition> ConditionsView::All() const {
  std::vector<Condition> out;
  if (conditions_ == nullptr) return out;
  for (const json& c : *conditions_) {
    if (c.is_object()) out.push_back(ConditionOf(c));
  }
  return out;
}

// ---------------------------------------------------------------------------
// PodView

PodView::PodView(const json& pod) : pod_(&pod) {}

std::string_view PodView::Phase() const { return TextAt(ObjectAt(pod_, "status"), "phase"); }
std::string_view PodView::NodeName() const { return TextAt(ObjectAt(pod_, "spec"), "nodeName"); }
std::string_view PodView::PodIp() const { return TextAt(ObjectAt(pod_, "status"), "podIP"); }

std::string_view PodView::RestartPolicy() const {
  const std::string_view policy = TextAt(ObjectAt(pod_, "spec"), "restartPolicy");
  return policy.empty() ? std::string_view("Always") : policy;
}

std::vector<ContainerStatus> PodView::ContainerStatuses() const {
  std::vector<ContainerStatus> out;
  const json* statuses = At(ObjectAt(pod_, "status"), "containerStatuses");
  if (statuses == nullptr || !statuses->is_array()) return out;
  for (const json& s : *statuses) {
    if (!s.is_object()) continue;
    const json* state = ObjectAt(&s, "state");
    out.push_back({.name = TextAt(&s, "name"),
                   .ready = BoolAt(&s, "ready").value_or(false),
                   .restart_count = IntAt(&s, "restartCount").value_or(0),
                   .waiting_reason = TextAt(ObjectAt(state, "waiting"), "reason"),
                   .terminated = TerminationOf(state),
                   .last_terminated = TerminationOf(ObjectAt(&s, "lastState"))});
  }
  return out;
}

int64_t PodView::RestartCount() const {
  int64_t total = 0;
  for (const ContainerStatus& s : ContainerStatuses()) total += s.restart_count;
  return total;
}

// ---------------------------------------------------------------------------
// WorkloadView

WorkloadView::WorkloadView(const json& workload) : workload_(&workload) {}

std::string_view WorkloadView::QueueName() const { return TextAt(ObjectAt(workload_, "spec"), "queueName"); }
std::string_view WorkloadView::PriorityClassName() const {
  return TextAt(ObjectAt(workload_, "spec"), "priorityClassName");
}
std::optional<int64_t> WorkloadView::Priority() const { return IntAt(ObjectAt(workload_, "spec"), "priority"); }
bool WorkloadView::Active() const { return BoolAt(ObjectAt(workload_, "spec"), "active").value_or(true); }
bool WorkloadView::HasAdmission() const { return ObjectAt(ObjectAt(workload_, "status"), "admission") != nullptr; }
std::string_view WorkloadView::AdmittedClusterQueue() const {
  return TextAt(ObjectAt(ObjectAt(workload_, "status"), "admission"), "clusterQueue");
}

// ---------------------------------------------------------------------------
// JobView

JobView::JobView(const json& job) : job_(&job) {}

int64_t JobView::Parallelism() const { return IntAt(ObjectAt(job_, "spec"), "parallelism").value_or(1); }
std::optional<int64_t> JobView::Completions() const { return IntAt(ObjectAt(job_, "spec"), "completions"); }
std::string_view JobView::CompletionMode() const {
  const std::string_view mode = TextAt(ObjectAt(job_, "spec"), "completionMode");
  return mode.empty() ? std::string_view("NonIndexed") : mode;
}
int64_t JobView::BackoffLimit() const { return IntAt(ObjectAt(job_, "spec"), "backoffLimit").value_or(6); }
std::optional<int64_t> JobView::ActiveDeadlineSeconds() const {
  return IntAt(ObjectAt(job_, "spec"), "activeDeadlineSeconds");
}
std::optional<int64_t> JobView::TtlSecondsAfterFinished() const {
  return IntAt(ObjectAt(job_, "spec"), "ttlSecondsAfterFinished");
}
bool JobView::Suspend() const { return BoolAt(ObjectAt(job_, "spec"), "suspend").value_or(false); }
const json* JobView::Template() const { return ObjectAt(ObjectAt(job_, "spec"), "template"); }

std::vector<PodFailurePolicyRule> JobView::PodFailurePolicyRules() const {
  std::vector<PodFailurePolicyRule> out;
  const json* rules = At(ObjectAt(ObjectAt(job_, "spec"), "podFailurePolicy"), "rules");
  if (rules == nullptr || !rules->is_array()) return out;
  for (const json& r : *rules) {
    if (!r.is_object()) continue;
    PodFailurePolicyRule rule{.action = TextAt(&r, "action")};
    if (const json* on_exit = ObjectAt(&r, "onExitCodes")) {
      rule.exit_codes_operator = TextAt(on_exit, "operator");
      rule.container_name = TextAt(on_exit, "containerName");
      if (const json* values = At(on_exit, "values"); values != nullptr && values->is_array()) {
        for (const json& v : *values) {
          if (std::optional<int64_t> code = AsInt(v)) rule.exit_codes.push_back(*code);
        }
      }
    }
    if (const json* conditions = At(&r, "onPodConditions"); conditions != nullptr && conditions->is_array()) {
      for (const json& c : *conditions) {
        if (c.is_object()) rule.pod_conditions.emplace_back(TextAt(&c, "type"), TextAt(&c, "status"));
      }
    }
    out.push_back(std::move(rule));
  }
  return out;
}

}  // namespace tessera
