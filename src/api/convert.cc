#include "api/convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "common/time_format.h"
#include "api/validation.h"
#include "common/check.h"
#include "domain/quantity.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kGenericGpuMemory = int64_t{80} << 30;  // 80Gi, a device without inventory

// ===========================================================================
// Paths and errors: "spec.podSets[0].template.spec.containers[1].resources.requests[cpu]".

std::string FieldPath(const std::string& path, std::string_view name) {
  if (path.empty()) return std::string(name);
  return fmt::format("{}.{}", path, name);
}
std::string IndexPath(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }
std::string KeyPath(const std::string& path, std::string_view key) { return fmt::format("{}[{}]", path, key); }

Status Invalid(const std::string& path, std::string_view message) {
  return Status::InvalidArgument(fmt::format("{}: {}", path, message));
}

std::string Describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "a list";
    case json::value_t::string: return fmt::format("the string \"{}\"", v.get_ref<const std::string&>());
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return fmt::format("the number {}", v.dump());
    default: return "a value of another type";
  }
}

Status WrongType(const std::string& path, std::string_view expected, const json& v) {
  return Invalid(path, fmt::format("expected {}, got {}", expected, Describe(v)));
}

// ===========================================================================
// Typed access. Absent and null are the same (as in validation); a present value
// of the wrong type is an error naming its path.

const json* Get(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<const json*> OptObject(const json& obj, std::string_view key, const std::string& path) {
  const json* v = Get(obj, key);
  if (v && !v->is_object()) return Err(WrongType(FieldPath(path, key), "an object", *v));
  return v;
}

Result<const json*> OptArray(const json& obj, std::string_view key, const std::string& path) {
  const json* v = Get(obj, key);
  if (v && !v->is_array()) return Err(WrongType(FieldPath(path, key), "a list", *v));
  return v;
}

Result<std::optional<std::string>> OptString(const json& obj, std::string_view key, const std::string& path) {
  const json* v = Get(obj, key);
  if (!v) return std::optional<std::string>();
  if (!v->is_string()) return Err(WrongType(FieldPath(path, key), "a string", *v));
  return std::optional<std::string>(v->get<std::string>());
}

Result<std::string> StringOr(const json& obj, std::string_view key, const std::string& path,
                             std::string_view fallback) {
  ASSIGN_OR_RETURN(std::optional<std::string> s, OptString(obj, key, path));
  return s ? std::move(*s) : std::string(fallback);
}

// An integer within [min, max].
Result<std::optional<int64_t>> OptInt(const json& obj, std::string_view key, const std::string& path,
                                      int64_t min = 0, int64_t max = kInt32Max) {
  const json* v = Get(obj, key);
  if (!v) return std::optional<int64_t>();
  const std::string p = FieldPath(path, key);
  if (!v->is_number_integer()) return Err(WrongType(p, "an integer", *v));
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Err(Invalid(p, fmt::format("{} is out of range", v->dump())));
  }
  const int64_t i = v->get<int64_t>();
  if (i < min || i > max) return Err(Invalid(p, fmt::format("{} is out of range [{}, {}]", i, min, max)));
  return std::optional<int64_t>(i);
}

Result<bool> BoolOr(const json& obj, std::string_view key, const std::string& path, bool fallback) {
  const json* v = Get(obj, key);
  if (!v) return fallback;
  if (!v->is_boolean()) return Err(WrongType(FieldPath(path, key), "true or false", *v));
  return v->get<bool>();
}

// One of `names` (an enum field); `values` holds the result for each.
template <typename E>
Result<std::optional<E>> OptEnum(const json& obj, std::string_view key, const std::string& path,
                                 std::initializer_list<std::pair<std::string_view, E>> values) {
  ASSIGN_OR_RETURN(std::optional<std::string> s, OptString(obj, key, path));
  if (!s) return std::optional<E>();
  std::string allowed;
  for (const auto& [name, value] : values) {
    if (name == *s) return std::optional<E>(value);
    allowed += allowed.empty() ? "" : ", ";
    allowed += name;
  }
  return Err(Invalid(FieldPath(path, key), fmt::format("unsupported value \"{}\" (use {})", *s, allowed)));
}

// ---------------------------------------------------------------------------
// Metadata.

std::string Name(const json& obj) {
  const json* meta = Get(obj, "metadata");
  const json* name = meta ? Get(*meta, "name") : nullptr;
  return name && name->is_string() ? name->get<std::string>() : std::string();
}

// A namespaced object's namespace; "default" where a manifest leaves it out
// (as kubectl does).
std::string NamespaceOf(const json& obj) {
  const json* meta = Get(obj, "metadata");
  const json* ns = meta ? Get(*meta, "namespace") : nullptr;
  if (ns && ns->is_string() && !ns->get_ref<const std::string&>().empty()) return ns->get<std::string>();
  return "default";
}

// metadata.<map>[key] (labels, annotations), when present and a string.
std::optional<std::string> MetaEntry(const json& obj, std::string_view map, std::string_view key) {
  const json* meta = Get(obj, "metadata");
  const json* m = meta ? Get(*meta, map) : nullptr;
  const json* v = m ? Get(*m, key) : nullptr;
  if (!v || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}
std::optional<std::string> Annotation(const json& obj, std::string_view key) {
  return MetaEntry(obj, "annotations", key);
}
std::optional<std::string> Label(const json& obj, std::string_view key) { return MetaEntry(obj, "labels", key); }

std::string AnnotationPath(std::string_view key) { return KeyPath("metadata.annotations", key); }

// ---------------------------------------------------------------------------
// Labels, taints, tolerations.

Result<Labels> LabelsAt(const json& obj, std::string_view key, const std::string& path) {
  Labels labels;
  ASSIGN_OR_RETURN(const json* map, OptObject(obj, key, path));
  if (!map) return labels;
  for (const auto& [k, v] : map->items()) {
    if (!v.is_string()) return Err(WrongType(KeyPath(FieldPath(path, key), k), "a string", v));
    labels.Set(k, v.get<std::string>());
  }
  return labels;
}

Result<std::optional<TaintEffect>> EffectAt(const json& obj, const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<std::string> s, OptString(obj, "effect", path));
  if (!s || s->empty()) return std::optional<TaintEffect>();
  if (*s == "NoSchedule") return std::optional<TaintEffect>(TaintEffect::kNoSchedule);
  if (*s == "PreferNoSchedule") return std::optional<TaintEffect>(TaintEffect::kPreferNoSchedule);
  if (*s == "NoExecute") return std::optional<TaintEffect>(TaintEffect::kNoExecute);
  return Err(Invalid(FieldPath(path, "effect"),
                     fmt::format("unsupported value \"{}\" (use NoSchedule, PreferNoSchedule or NoExecute)", *s)));
}

Result<std::vector<Taint>> TaintsAt(const json& obj, std::string_view key, const std::string& path) {
  std::vector<Taint> taints;
  ASSIGN_OR_RETURN(const json* list, OptArray(obj, key, path));
  if (!list) return taints;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string p = IndexPath(FieldPath(path, key), i);
    const json& t = (*list)[i];
    if (!t.is_object()) return Err(WrongType(p, "an object", t));
    Taint taint;
    ASSIGN_OR_RETURN(taint.key, StringOr(t, "key", p, ""));
    ASSIGN_OR_RETURN(taint.value, StringOr(t, "value", p, ""));
    ASSIGN_OR_RETURN(std::optional<TaintEffect> effect, EffectAt(t, p));
    if (!effect) return Err(Invalid(FieldPath(p, "effect"), "required"));
    taint.effect = *effect;
    taints.push_back(std::move(taint));
  }
  return taints;
}

Result<std::vector<Toleration>> TolerationsAt(const json& obj, std::string_view key, const std::string& path) {
  std::vector<Toleration> tolerations;
  ASSIGN_OR_RETURN(const json* list, OptArray(obj, key, path));
  if (!list) return tolerations;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string p = IndexPath(FieldPath(path, key), i);
    const json& t = (*list)[i];
    if (!t.is_object()) return Err(WrongType(p, "an object", t));
    Toleration tol;
    ASSIGN_OR_RETURN(tol.key, StringOr(t, "key", p, ""));
    ASSIGN_OR_RETURN(tol.value, StringOr(t, "value", p, ""));
    ASSIGN_OR_RETURN(auto op, (OptEnum<Toleration::Operator>(
                                  t, "operator", p,
                                  {{"Equal", Toleration::Operator::kEqual}, {"Exists", Toleration::Operator::kExists}})));
    tol.op = op.value_or(Toleration::Operator::kEqual);
    ASSIGN_OR_RETURN(tol.effect, EffectAt(t, p));
    tolerations.push_back(std::move(tol));
  }
  return tolerations;
}

// ---------------------------------------------------------------------------
// Quantities, in the unit of the resource they measure (domain/resources.h).

Result<int64_t> ParseAmount(ResourceKind kind, std::string_view text) {
  switch (kind) {
    case ResourceKind::kCpu: return ParseMilli(text);
    case ResourceKind::kGpu: return ParseGpuMilli(text);
    case ResourceKind::kMemory:
    case ResourceKind::kGpuMemory:
    case ResourceKind::kPods: return ParseUnits(text);
  }
  return ParseUnits(text);
}

Result<int64_t> AmountOf(ResourceKind kind, const json& value, const std::string& path) {
  auto text = QuantityText(value);
  if (!text) return Err(text.error().WithContext(path));
  auto amount = ParseAmount(kind, *text);
  if (!amount) return Err(amount.error().WithContext(path));
  return *amount;
}

// A time annotation or field: RFC 3339, errors naming `path`.
Result<Timestamp> TimeAt(std::string_view text, const std::string& path) {
  auto t = ParseRfc3339(text);
  if (!t) return Err(t.error().WithContext(path));
  return *t;
}

// The annotation tessera.dev/max-run-seconds: a positive whole number of seconds.
Result<std::optional<int64_t>> MaxRunSecondsAnnotation(const json& obj) {
  std::optional<std::string> text = Annotation(obj, kMaxRunSecondsAnnotation);
  if (!text) return std::optional<int64_t>();
  const std::string path = AnnotationPath(kMaxRunSecondsAnnotation);
  int64_t seconds = 0;
  bool ok = !text->empty() && text->size() <= 12;  // up to ~31,700 years
  for (char c : *text) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) seconds = seconds * 10 + (c - '0');
  }
  if (!ok || seconds == 0) {
    return Err(Invalid(path, fmt::format("\"{}\" is not a positive whole number of seconds", *text)));
  }
  return std::optional<int64_t>(seconds);
}

// ===========================================================================
// Pod resources: what Kubernetes charges a pod (k8s.io/component-helpers
// resource.PodRequests), for the resources the scheduler tracks.

struct Charge {
  Resources requests;
  Resources limits;
};

Resources Max(const Resources& a, const Resources& b) {
  Resources r;
  for (ResourceKind k : kAllResourceKinds) r.set(k, std::max(a.get(k), b.get(k)));
  return r;
}

// One container (or the pod-level `resources`, or `overhead` as `requests`): a
// missing request is the limit (Kubernetes' defaulting), a missing limit the request.
Result<Charge> ResourcesCharge(const json* requests, const json* limits, const std::string& path) {
  Charge c;
  for (ResourceKind k : kAllResourceKinds) {
    if (k == ResourceKind::kPods) continue;
    const std::string_view name = ResourceName(k);
    const json* req = requests ? Get(*requests, name) : nullptr;
    const json* lim = limits ? Get(*limits, name) : nullptr;
    if (req) {
      ASSIGN_OR_RETURN(int64_t r, AmountOf(k, *req, KeyPath(FieldPath(path, "requests"), name)));
      c.requests.set(k, r);
    }
    if (lim) {
      ASSIGN_OR_RETURN(int64_t l, AmountOf(k, *lim, KeyPath(FieldPath(path, "limits"), name)));
      c.limits.set(k, l);
      if (!req) c.requests.set(k, l);
    } else {
      c.limits.set(k, c.requests.get(k));
    }
  }
  return c;
}

Result<Charge> ContainerCharge(const json& container, const std::string& path) {
  if (!container.is_object()) return Err(WrongType(path, "an object", container));
  ASSIGN_OR_RETURN(const json* resources, OptObject(container, "resources", path));
  if (!resources) return Charge{};
  const std::string rpath = FieldPath(path, "resources");
  ASSIGN_OR_RETURN(const json* requests, OptObject(*resources, "requests", rpath));
  ASSIGN_OR_RETURN(const json* limits, OptObject(*resources, "limits", rpath));
  return ResourcesCharge(requests, limits, rpath);
}

// The pod's charge, in Kubernetes' order:
//   1. containers: the sum of their charges;
//   2. sidecars (init containers with restartPolicy Always) run beside them:
//      added to the sum;
//   3. each other init container runs alone beside the sidecars started before
//      it: the pod needs max(1 + 2, max over init containers of (its charge +
//      the sidecars before it));
//   4. pod-level resources, where set (cpu, memory), replace the above;
//   5. overhead is added.
// A GPU request must stay a fraction below one or whole GPUs once summed.
Result<Charge> PodCharge(const json& spec, const std::string& path) {
  Charge containers;
  ASSIGN_OR_RETURN(const json* list, OptArray(spec, "containers", path));
  for (size_t i = 0; list && i < list->size(); ++i) {
    ASSIGN_OR_RETURN(Charge c, ContainerCharge((*list)[i], IndexPath(FieldPath(path, "containers"), i)));
    containers.requests += c.requests;
    containers.limits += c.limits;
  }
  Charge sidecars, init;
  ASSIGN_OR_RETURN(const json* init_list, OptArray(spec, "initContainers", path));
  for (size_t i = 0; init_list && i < init_list->size(); ++i) {
    const std::string p = IndexPath(FieldPath(path, "initContainers"), i);
    ASSIGN_OR_RETURN(Charge c, ContainerCharge((*init_list)[i], p));
    ASSIGN_OR_RETURN(std::string restart, StringOr((*init_list)[i], "restartPolicy", p, ""));
    if (restart == "Always") {
      sidecars.requests += c.requests;
      sidecars.limits += c.limits;
      init.requests = Max(init.requests, sidecars.requests);
      init.limits = Max(init.limits, sidecars.limits);
    } else {
      init.requests = Max(init.requests, c.requests + sidecars.requests);
      init.limits = Max(init.limits, c.limits + sidecars.limits);
    }
  }
  Charge pod{Max(containers.requests + sidecars.requests, init.requests),
             Max(containers.limits + sidecars.limits, init.limits)};

  ASSIGN_OR_RETURN(const json* pod_level, OptObject(spec, "resources", path));
  if (pod_level) {
    const std::string p = FieldPath(path, "resources");
    ASSIGN_OR_RETURN(const json* requests, OptObject(*pod_level, "requests", p));
    ASSIGN_OR_RETURN(const json* limits, OptObject(*pod_level, "limits", p));
    ASSIGN_OR_RETURN(Charge c, ResourcesCharge(requests, limits, p));
    for (ResourceKind k : {ResourceKind::kCpu, ResourceKind::kMemory}) {
      const std::string_view name = ResourceName(k);
      if ((requests && Get(*requests, name)) || (limits && Get(*limits, name))) {
        pod.requests.set(k, c.requests.get(k));
        pod.limits.set(k, c.limits.get(k));
      }
    }
  }
  ASSIGN_OR_RETURN(const json* overhead, OptObject(spec, "overhead", path));
  if (overhead) {
    // "overhead" holds amounts directly; read it as requests (limits default to them).
    ASSIGN_OR_RETURN(Charge c, ResourcesCharge(overhead, nullptr, FieldPath(path, "overhead")));
    pod.requests += c.requests;
    pod.limits += c.limits;
  }

  const int64_t gpu = pod.requests.gpu();
  if (gpu > 1000 && gpu % 1000 != 0) {
    return Err(Invalid(path, fmt::format("the containers together ask for {} GPUs; a pod asks for a fraction "
                                         "below one (0.25) or a whole number of GPUs (1, 2, 8)",
                                         FormatMilliDecimal(gpu))));
  }
  pod.requests.set(ResourceKind::kPods, 1);
  pod.limits.set(ResourceKind::kPods, 1);
  return pod;
}

Result<TopologyPreference> TopologyAt(const json& pod_template, const std::string& path) {
  const json* meta = Get(pod_template, "metadata");
  const json* annotations = meta ? Get(*meta, "annotations") : nullptr;
  const json* v = annotations ? Get(*annotations, kTopologyAnnotation) : nullptr;
  if (!v) return TopologyPreference::kNone;
  const std::string p = KeyPath(FieldPath(path, "metadata.annotations"), kTopologyAnnotation);
  if (!v->is_string()) return Err(WrongType(p, "a string", *v));
  const std::string& s = v->get_ref<const std::string&>();
  if (s == "spread") return TopologyPreference::kSpread;
  if (s == "node") return TopologyPreference::kSameNode;
  if (s == "rack") return TopologyPreference::kSameRack;
  if (s == "nvlink") return TopologyPreference::kSameNvlink;
  return Err(Invalid(p, fmt::format("unsupported value \"{}\" (use spread, node, rack or nvlink)", s)));
}

Result<PodSet> PodSetFromJson(const json& ps_json, const std::string& path) {
  if (!ps_json.is_object()) return Err(WrongType(path, "an object", ps_json));
  PodSet ps;
  ASSIGN_OR_RETURN(ps.name, StringOr(ps_json, "name", path, "main"));
  ASSIGN_OR_RETURN(std::optional<int64_t> count, OptInt(ps_json, "count", path));
  ASSIGN_OR_RETURN(std::optional<int64_t> min_count, OptInt(ps_json, "minCount", path));
  ps.count = static_cast<int32_t>(count.value_or(1));
  ps.min_count = static_cast<int32_t>(min_count.value_or(0));
  if (ps.min_count > ps.count) {
    return Err(Invalid(FieldPath(path, "minCount"), fmt::format("{} is more than count {}", ps.min_count, ps.count)));
  }
  const json* tmpl = Get(ps_json, "template");
  if (!tmpl || !tmpl->is_object()) return Err(Invalid(FieldPath(path, "template"), "required"));
  const std::string tpath = FieldPath(path, "template");
  const json* spec = Get(*tmpl, "spec");
  if (!spec || !spec->is_object()) return Err(Invalid(FieldPath(tpath, "spec"), "required"));
  const std::string spath = FieldPath(tpath, "spec");
  ASSIGN_OR_RETURN(Charge charge, PodCharge(*spec, spath));
  ps.requests = charge.requests;
  ps.limits = charge.limits;
  ASSIGN_OR_RETURN(ps.node_selector, LabelsAt(*spec, "nodeSelector", spath));
  ASSIGN_OR_RETURN(ps.tolerations, TolerationsAt(*spec, "tolerations", spath));
  ASSIGN_OR_RETURN(ps.topology, TopologyAt(*tmpl, tpath));
  const json* meta = Get(*tmpl, "metadata");
  const json* annotations = meta ? Get(*meta, "annotations") : nullptr;
  const json* from = annotations ? Get(*annotations, kSpreadFromNodesAnnotation) : nullptr;
  if (from != nullptr && ps.topology == TopologyPreference::kSpread && from->is_string()) {
    const std::string& list = from->get_ref<const std::string&>();
    for (size_t start = 0; start < list.size();) {
      const size_t comma = std::min(list.find(',', start), list.size());
      if (comma > start) ps.spread_from_nodes.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return ps;
}

// ===========================================================================
// Admission.

// Every resource a pod set asks for is admitted in the pod set's one flavor.
std::vector<std::string_view> FlavoredResources(const PodSet& ps) {
  std::vector<std::string_view> names;
  for (ResourceKind k : kAllResourceKinds) {
    if (k != ResourceKind::kPods && ps.requests.get(k) > 0) names.push_back(ResourceName(k));
  }
  if (names.empty()) names.push_back(ResourceName(ResourceKind::kGpu));
  return names;
}

Result<PodPlacement> PlacementFromJson(const json& p, const std::string& path,
                                       const std::function<NodeId(std::string_view)>& node_id) {
  if (!p.is_object()) return Err(WrongType(path, "an object", p));
  PodPlacement pod;
  ASSIGN_OR_RETURN(std::optional<std::string> node, OptString(p, "node", path));
  if (!node) return Err(Invalid(FieldPath(path, "node"), "required"));
  pod.node = node_id(*node);
  if (!pod.node.valid()) {
    return Err(Invalid(FieldPath(path, "node"), fmt::format("node \"{}\" does not exist", *node)));
  }
  ASSIGN_OR_RETURN(const json* devices, OptArray(p, "devices", path));
  for (size_t i = 0; devices && i < devices->size(); ++i) {
    const std::string dpath = IndexPath(FieldPath(path, "devices"), i);
    const json& d = (*devices)[i];
    if (!d.is_object()) return Err(WrongType(dpath, "an object", d));
    ASSIGN_OR_RETURN(std::optional<int64_t> index, OptInt(d, "index", dpath));
    ASSIGN_OR_RETURN(std::optional<int64_t> milli, OptInt(d, "milli", dpath, 1, 1000));
    if (!index) return Err(Invalid(FieldPath(dpath, "index"), "required"));
    if (!milli) return Err(Invalid(FieldPath(dpath, "milli"), "required"));
    pod.gpus.push_back(DeviceShare{.device = static_cast<int32_t>(*index), .milli = *milli});
  }
  return pod;
}

Result<PodSetAssignment> AssignmentFromJson(const json& a, const std::string& path, const PodSet& ps,
                                            const std::function<FlavorId(std::string_view)>& flavor_id,
                                            const std::function<NodeId(std::string_view)>& node_id) {
  PodSetAssignment out;
  // flavors: resource -> flavor; the domain admits a pod set in one flavor.
  ASSIGN_OR_RETURN(const json* flavors, OptObject(a, "flavors", path));
  std::optional<std::string> flavor;
  static const json kNoFlavors = json::object();
  for (const auto& [resource, name] : (flavors ? *flavors : kNoFlavors).items()) {
    const std::string p = KeyPath(FieldPath(path, "flavors"), resource);
    if (!name.is_string()) return Err(WrongType(p, "a flavor name", name));
    if (flavor && *flavor != name.get_ref<const std::string&>()) {
      return Err(Invalid(p, fmt::format("flavor \"{}\" differs from \"{}\"; a pod set is admitted in one flavor",
                                        name.get_ref<const std::string&>(), *flavor)));
    }
    flavor = name.get<std::string>();
  }
  if (!flavor) return Err(Invalid(FieldPath(path, "flavors"), "required: the flavor the pod set is admitted in"));
  out.flavor = flavor_id(*flavor);
  if (!out.flavor.valid()) {
    return Err(Invalid(FieldPath(path, "flavors"), fmt::format("flavor \"{}\" does not exist", *flavor)));
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> count, OptInt(a, "count", path));
  out.count = static_cast<int32_t>(count.value_or(ps.count));
  if (out.count > ps.count) {
    return Err(Invalid(FieldPath(path, "count"),
                       fmt::format("{} is more than the pod set's count {}", out.count, ps.count)));
  }
  ASSIGN_OR_RETURN(const json* placements, OptArray(a, "placements", path));
  if (placements) {
    if (placements->size() != static_cast<size_t>(out.count)) {
      return Err(Invalid(FieldPath(path, "placements"),
                         fmt::format("{} placements for count {}", placements->size(), out.count)));
    }
    for (size_t i = 0; i < placements->size(); ++i) {
      ASSIGN_OR_RETURN(PodPlacement pod,
                       PlacementFromJson((*placements)[i], IndexPath(FieldPath(path, "placements"), i), node_id));
      out.pods.push_back(std::move(pod));
    }
  }
  return out;
}

// status.admission, one assignment per pod set (matched by name).
Result<Admission> AdmissionFromJson(const json& admission, const std::string& path, const Workload& w,
                                    const std::function<ClusterQueueId(std::string_view)>& cluster_queue_id,
                                    const std::function<FlavorId(std::string_view)>& flavor_id,
                                    const std::function<NodeId(std::string_view)>& node_id) {
  Admission out;
  ASSIGN_OR_RETURN(std::optional<std::string> cq, OptString(admission, "clusterQueue", path));
  if (!cq) return Err(Invalid(FieldPath(path, "clusterQueue"), "required"));
  // A ClusterQueue deleted under admitted work stays an invalid id: the work still
  // holds its nodes' resources (the snapshot allows it).
  out.cluster_queue = cluster_queue_id(*cq);

  ASSIGN_OR_RETURN(const json* list, OptArray(admission, "podSetAssignments", path));
  if (!list) return Err(Invalid(FieldPath(path, "podSetAssignments"), "required"));
  const std::string lpath = FieldPath(path, "podSetAssignments");
  std::vector<std::optional<PodSetAssignment>> by_pod_set(w.pod_sets.size());
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string p = IndexPath(lpath, i);
    const json& a = (*list)[i];
    if (!a.is_object()) return Err(WrongType(p, "an object", a));
    ASSIGN_OR_RETURN(std::string name, StringOr(a, "name", p, "main"));
    auto it = std::find_if(w.pod_sets.begin(), w.pod_sets.end(), [&](const PodSet& ps) { return ps.name == name; });
    if (it == w.pod_sets.end()) {
      return Err(Invalid(FieldPath(p, "name"), fmt::format("the workload has no pod set \"{}\"", name)));
    }
    const size_t index = static_cast<size_t>(it - w.pod_sets.begin());
    if (by_pod_set[index]) {
      return Err(Invalid(FieldPath(p, "name"), fmt::format("pod set \"{}\" is assigned twice", name)));
    }
    ASSIGN_OR_RETURN(by_pod_set[index], AssignmentFromJson(a, p, *it, flavor_id, node_id));
  }
  for (size_t i = 0; i < by_pod_set.size(); ++i) {
    if (!by_pod_set[i]) {
      return Err(Invalid(lpath, fmt::format("no assignment for pod set \"{}\"", w.pod_sets[i].name)));
    }
    out.pod_sets.push_back(std::move(*by_pod_set[i]));
  }
  return out;
}

// True when status.conditions holds `type` with status "True".
Result<bool> ConditionTrue(const json& status, std::string_view type, const std::string& path) {
  ASSIGN_OR_RETURN(const json* conditions, OptArray(status, "conditions", path));
  for (size_t i = 0; conditions && i < conditions->size(); ++i) {
    const std::string p = IndexPath(FieldPath(path, "conditions"), i);
    const json& c = (*conditions)[i];
    if (!c.is_object()) return Err(WrongType(p, "an object", c));
    ASSIGN_OR_RETURN(std::string t, StringOr(c, "type", p, ""));
    if (t != type) continue;
    ASSIGN_OR_RETURN(std::string s, StringOr(c, "status", p, ""));
    return s == "True";
  }
  return false;
}

// ===========================================================================
// Jobs.

// The smaller of two optional limits.
std::optional<int64_t> MinOf(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

json PodSetJson(std::string name, int64_t count, int64_t min_count, const json& pod_template) {
  json ps{{"name", std::move(name)}, {"count", count}};
  if (count > 0) ps["minCount"] = min_count;
  ps["template"] = pod_template;
  return ps;
}

struct JobParts {
  json pod_sets = json::array();
  std::string queue;
  std::string priority_class;
  std::optional<int64_t> max_run_seconds;
};

Result<JobParts> BatchJobParts(const json& job, const json& spec) {
  JobParts parts;
  const json* tmpl = Get(spec, "template");
  if (!tmpl || !tmpl->is_object()) return Err(Invalid("spec.template", "required"));
  ASSIGN_OR_RETURN(std::optional<int64_t> parallelism, OptInt(spec, "parallelism", "spec"));
  ASSIGN_OR_RETURN(std::optional<int64_t> completions, OptInt(spec, "completions", "spec"));
  // Kueue's count: parallelism (default 1), but no more pods than completions.
  int64_t count = parallelism.value_or(1);
  if (completions) count = std::min(count, *completions);
  parts.pod_sets.push_back(PodSetJson("main", count, count, *tmpl));
  parts.queue = Label(job, kQueueNameLabel).value_or("default");
  if (const json* pod_spec = Get(*tmpl, "spec")) {
    ASSIGN_OR_RETURN(parts.priority_class, StringOr(*pod_spec, "priorityClassName", "spec.template.spec", ""));
  }
  ASSIGN_OR_RETURN(parts.max_run_seconds,
                   OptInt(spec, "activeDeadlineSeconds", "spec", 1, std::numeric_limits<int64_t>::max()));
  return parts;
}

// Volcano: one pod set per task; the gang (minAvailable, default every replica)
// goes to the first tasks' minCount. A task past the gang gets minCount 1: the
// domain cannot say "zero pods of this pod set" (minCount 0 means all).
Result<JobParts> VolcanoJobParts(const json& job, const json& spec) {
  JobParts parts;
  ASSIGN_OR_RETURN(const json* tasks, OptArray(spec, "tasks", "spec"));
  if (!tasks || tasks->empty()) return Err(Invalid("spec.tasks", "required: at least one task"));
  int64_t total = 0;
  for (size_t i = 0; i < tasks->size(); ++i) {
    ASSIGN_OR_RETURN(std::optional<int64_t> replicas, OptInt((*tasks)[i], "replicas", IndexPath("spec.tasks", i)));
    total += replicas.value_or(0);
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> min_available, OptInt(spec, "minAvailable", "spec"));
  int64_t gang_left = std::min(min_available.value_or(total), total);
  ASSIGN_OR_RETURN(std::optional<std::string> job_class, OptString(spec, "priorityClassName", "spec"));
  std::optional<std::string> task_class;
  for (size_t i = 0; i < tasks->size(); ++i) {
    const std::string p = IndexPath("spec.tasks", i);
    const json& task = (*tasks)[i];
    if (!task.is_object()) return Err(WrongType(p, "an object", task));
    ASSIGN_OR_RETURN(std::string name, StringOr(task, "name", p, fmt::format("default{}", i)));  // Volcano's default
    ASSIGN_OR_RETURN(std::optional<int64_t> replicas, OptInt(task, "replicas", p));
    const json* tmpl = Get(task, "template");
    if (!tmpl || !tmpl->is_object()) return Err(Invalid(FieldPath(p, "template"), "required"));
    const int64_t count = replicas.value_or(0);
    const int64_t in_gang = std::min(count, gang_left);
    gang_left -= in_gang;
    parts.pod_sets.push_back(PodSetJson(name, count, std::max<int64_t>(in_gang, 1), *tmpl));
    if (const json* pod_spec = Get(*tmpl, "spec"); pod_spec && !task_class) {
      ASSIGN_OR_RETURN(std::optional<std::string> c,
                       OptString(*pod_spec, "priorityClassName", FieldPath(p, "template.spec")));
      if (c && !c->empty()) task_class = c;
    }
  }
  ASSIGN_OR_RETURN(std::optional<std::string> queue, OptString(spec, "queue", "spec"));
  parts.queue = queue && !queue->empty() ? *queue : Label(job, kQueueNameLabel).value_or("default");
  parts.priority_class = job_class && !job_class->empty() ? *job_class : task_class.value_or("");
  return parts;
}

}  // namespace

// ===========================================================================

Result<ResourceFlavor> ResourceFlavorFromJson(const json& obj) {
  ResourceFlavor flavor;
  flavor.name = Name(obj);
  flavor.price_micro_per_gpu_hour = FlavorPriceMicro(obj);
  ASSIGN_OR_RETURN(const json* spec, OptObject(obj, "spec", ""));
  if (!spec) return flavor;
  ASSIGN_OR_RETURN(flavor.node_labels, LabelsAt(*spec, "nodeLabels", "spec"));
  ASSIGN_OR_RETURN(flavor.tolerations, TolerationsAt(*spec, "tolerations", "spec"));
  return flavor;
}

int64_t FlavorPriceMicro(const json& obj) {
  const std::optional<std::string> text = Annotation(obj, kPricePerGpuHourAnnotation);
  if (!text) return 0;
  auto milli = ParseMilli(*text);  // validation refuses anything else
  return milli && *milli > 0 ? *milli * 1000 : 0;
}

Result<ClusterQueue> ClusterQueueFromJson(const json& obj, const std::function<FlavorId(std::string_view)>& flavor_id,
                                          const std::function<CohortId(std::string_view)>& cohort_id) {
  ClusterQueue cq;
  cq.name = Name(obj);
  ASSIGN_OR_RETURN(const json* spec, OptObject(obj, "spec", ""));
  if (!spec) return cq;

  ASSIGN_OR_RETURN(std::string cohort, StringOr(*spec, "cohort", "spec", ""));
  if (!cohort.empty()) cq.cohort = cohort_id(cohort);

  ASSIGN_OR_RETURN(const json* groups, OptArray(*spec, "resourceGroups", "spec"));
  for (size_t g = 0; groups && g < groups->size(); ++g) {
    const std::string gpath = IndexPath("spec.resourceGroups", g);
    const json& group_json = (*groups)[g];
    if (!group_json.is_object()) return Err(WrongType(gpath, "an object", group_json));
    ResourceGroup group;
    ASSIGN_OR_RETURN(const json* covered, OptArray(group_json, "coveredResources", gpath));
    for (size_t i = 0; covered && i < covered->size(); ++i) {
      const json& r = (*covered)[i];
      if (!r.is_string()) return Err(WrongType(IndexPath(FieldPath(gpath, "coveredResources"), i), "a string", r));
      std::optional<ResourceKind> kind = ParseResourceName(r.get_ref<const std::string&>());
      if (kind && !group.Covers(*kind)) group.covered_resources.push_back(*kind);
    }
    ASSIGN_OR_RETURN(const json* flavors, OptArray(group_json, "flavors", gpath));
    for (size_t f = 0; flavors && f < flavors->size(); ++f) {
      const std::string fpath = IndexPath(FieldPath(gpath, "flavors"), f);
      const json& flavor_json = (*flavors)[f];
      if (!flavor_json.is_object()) return Err(WrongType(fpath, "an object", flavor_json));
      ASSIGN_OR_RETURN(std::string name, StringOr(flavor_json, "name", fpath, ""));
      FlavorQuotas fq;
      fq.flavor = flavor_id(name);
      if (!fq.flavor.valid() && cq.inactive_reason.empty()) {
        cq.inactive_reason = fmt::format("flavor {} does not exist; create the ResourceFlavor", name);
      }
      ASSIGN_OR_RETURN(const json* resources, OptArray(flavor_json, "resources", fpath));
      for (size_t r = 0; resources && r < resources->size(); ++r) {
        const std::string rpath = IndexPath(FieldPath(fpath, "resources"), r);
        const json& res = (*resources)[r];
        if (!res.is_object()) return Err(WrongType(rpath, "an object", res));
        ASSIGN_OR_RETURN(std::string resource, StringOr(res, "name", rpath, ""));
        std::optional<ResourceKind> kind = ParseResourceName(resource);
        if (!kind) continue;  // a resource the scheduler does not track
        ResourceQuotaSpec q{.resource = *kind};
        const json* nominal = Get(res, "nominalQuota");
        if (!nominal) return Err(Invalid(FieldPath(rpath, "nominalQuota"), "required"));
        ASSIGN_OR_RETURN(q.nominal, AmountOf(*kind, *nominal, FieldPath(rpath, "nominalQuota")));
        if (const json* b = Get(res, "borrowingLimit")) {
          ASSIGN_OR_RETURN(int64_t v, AmountOf(*kind, *b, FieldPath(rpath, "borrowingLimit")));
          q.borrowing_limit = Limit::Of(v);
        }
        if (const json* l = Get(res, "lendingLimit")) {
          ASSIGN_OR_RETURN(int64_t v, AmountOf(*kind, *l, FieldPath(rpath, "lendingLimit")));
          q.lending_limit = Limit::Of(v);
        }
        fq.resources.push_back(q);
      }
      group.flavors.push_back(std::move(fq));
    }
    cq.resource_groups.push_back(std::move(group));
  }

  ASSIGN_OR_RETURN(const json* preemption, OptObject(*spec, "preemption", "spec"));
  if (preemption) {
    const std::string p = "spec.preemption";
    ASSIGN_OR_RETURN(auto within, (OptEnum<WithinClusterQueuePolicy>(
                                      *preemption, "withinClusterQueue", p,
                                      {{"Never", WithinClusterQueuePolicy::kNever},
                                       {"LowerPriority", WithinClusterQueuePolicy::kLowerPriority},
                                       {"LowerOrNewerEqualPriority",
                                        WithinClusterQueuePolicy::kLowerOrNewerEqualPriority}})));
    ASSIGN_OR_RETURN(auto reclaim, (OptEnum<ReclaimWithinCohortPolicy>(
                                       *preemption, "reclaimWithinCohort", p,
                                       {{"Never", ReclaimWithinCohortPolicy::kNever},
                                        {"LowerPriority", ReclaimWithinCohortPolicy::kLowerPriority},
                                        {"Any", ReclaimWithinCohortPolicy::kAny}})));
    cq.preemption.within_cluster_queue = within.value_or(WithinClusterQueuePolicy::kNever);
    cq.preemption.reclaim_within_cohort = reclaim.value_or(ReclaimWithinCohortPolicy::kNever);
    ASSIGN_OR_RETURN(const json* borrow, OptObject(*preemption, "borrowWithinCohort", p));
    if (borrow) {
      const std::string bp = FieldPath(p, "borrowWithinCohort");
      ASSIGN_OR_RETURN(auto policy, (OptEnum<BorrowWithinCohortPolicy>(
                                        *borrow, "policy", bp,
                                        {{"Never", BorrowWithinCohortPolicy::kNever},
                                         {"LowerPriority", BorrowWithinCohortPolicy::kLowerPriority}})));
      cq.preemption.borrow_within_cohort = policy.value_or(BorrowWithinCohortPolicy::kNever);
      ASSIGN_OR_RETURN(std::optional<int64_t> threshold,
                       OptInt(*borrow, "maxPriorityThreshold", bp, kInt32Min, kInt32Max));
      if (threshold) cq.preemption.borrow_max_priority_threshold = static_cast<int32_t>(*threshold);
    }
  }

  ASSIGN_OR_RETURN(auto strategy, (OptEnum<QueueingStrategy>(*spec, "queueingStrategy", "spec",
                                                             {{"BestEffortFIFO", QueueingStrategy::kBestEffortFIFO},
                                                              {"StrictFIFO", QueueingStrategy::kStrictFIFO}})));
  cq.queueing_strategy = strategy.value_or(QueueingStrategy::kBestEffortFIFO);

  ASSIGN_OR_RETURN(const json* fair, OptObject(*spec, "fairSharing", "spec"));
  if (const json* weight = fair ? Get(*fair, "weight") : nullptr) {
    ASSIGN_OR_RETURN(cq.fair_weight_milli, AmountOf(ResourceKind::kCpu, *weight, "spec.fairSharing.weight"));
  }

  ASSIGN_OR_RETURN(auto stop, (OptEnum<bool>(*spec, "stopPolicy", "spec",
                                             {{"None", false}, {"Hold", true}, {"HoldAndDrain", true}})));
  cq.stopped = stop.value_or(false);

  // namespaceSelector: matchLabels, and `In` with one value (the same thing);
  // other expressions cannot be represented, so the queue waits with a reason
  // rather than admitting namespaces it should not.
  ASSIGN_OR_RETURN(const json* selector, OptObject(*spec, "namespaceSelector", "spec"));
  if (selector) {
    const std::string sp = "spec.namespaceSelector";
    ASSIGN_OR_RETURN(Labels labels, LabelsAt(*selector, "matchLabels", sp));
    ASSIGN_OR_RETURN(const json* exprs, OptArray(*selector, "matchExpressions", sp));
    for (size_t i = 0; exprs && i < exprs->size(); ++i) {
      const std::string ep = IndexPath(FieldPath(sp, "matchExpressions"), i);
      const json& e = (*exprs)[i];
      if (!e.is_object()) return Err(WrongType(ep, "an object", e));
      ASSIGN_OR_RETURN(std::string key, StringOr(e, "key", ep, ""));
      ASSIGN_OR_RETURN(std::string op, StringOr(e, "operator", ep, ""));
      ASSIGN_OR_RETURN(const json* values, OptArray(e, "values", ep));
      if (op == "In" && values && values->size() == 1 && (*values)[0].is_string()) {
        labels.Set(key, (*values)[0].get<std::string>());
      } else if (cq.inactive_reason.empty()) {
        cq.inactive_reason = fmt::format(
            "{}: operator {} is not supported; select namespaces with matchLabels (or In with one value)", ep,
            op.empty() ? std::string("(none)") : op);
      }
    }
    cq.namespace_selector = std::move(labels);
  }
  return cq;
}

Result<LocalQueue> LocalQueueFromJson(const json& obj) {
  LocalQueue lq;
  lq.namespace_name = NamespaceOf(obj);
  lq.name = Name(obj);
  ASSIGN_OR_RETURN(const json* spec, OptObject(obj, "spec", ""));
  if (spec) {
    ASSIGN_OR_RETURN(lq.cluster_queue_name, StringOr(*spec, "clusterQueue", "spec", ""));
  }
  return lq;
}

Result<PriorityClass> PriorityClassFromJson(const json& obj) {
  PriorityClass pc;
  pc.name = Name(obj);
  ASSIGN_OR_RETURN(std::optional<int64_t> value, OptInt(obj, "value", "", kInt32Min, kInt32Max));
  if (!value) return Err(Invalid("value", "required"));
  pc.value = static_cast<int32_t>(*value);
  ASSIGN_OR_RETURN(pc.global_default, BoolOr(obj, "globalDefault", "", false));
  ASSIGN_OR_RETURN(auto policy, (OptEnum<PreemptionPolicy>(obj, "preemptionPolicy", "",
                                                           {{"PreemptLowerPriority",
                                                             PreemptionPolicy::kPreemptLowerPriority},
                                                            {"Never", PreemptionPolicy::kNever}})));
  pc.preemption_policy = policy.value_or(PreemptionPolicy::kPreemptLowerPriority);
  pc.non_preemptible =
      Annotation(obj, kPreemptibleAnnotation) == "false" || Annotation(obj, kNonPreemptibleAnnotation) == "true";
  return pc;
}

Result<ResourceQuota> ResourceQuotaFromJson(const json& obj) {
  ResourceQuota quota;
  quota.name = Name(obj);
  ASSIGN_OR_RETURN(const json* spec, OptObject(obj, "spec", ""));
  const json* hard = nullptr;
  if (spec) {
    ASSIGN_OR_RETURN(hard, OptObject(*spec, "hard", "spec"));
  }
  if (!hard) return quota;
  for (const auto& [key, value] : hard->items()) {
    if (value.is_null()) continue;
    const std::string path = KeyPath("spec.hard", key);
    std::string_view k = key;
    bool limits = false;
    if (k.starts_with("requests.")) {
      k.remove_prefix(9);
    } else if (k.starts_with("limits.")) {
      k.remove_prefix(7);
      limits = true;
    } else if (k != "cpu" && k != "memory" && k != "pods") {
      continue;  // bare extended resources are not quota keys in Kubernetes; others are object counts
    }
    std::optional<ResourceKind> kind = ParseResourceName(k);
    if (!kind || (*kind == ResourceKind::kPods && k != key)) continue;  // "requests.pods" is not a key
    ASSIGN_OR_RETURN(int64_t amount, AmountOf(*kind, value, path));
    if (limits) {
      quota.SetLimit(*kind, amount);
    } else {
      quota.SetRequest(*kind, amount);
    }
  }
  return quota;
}

Result<Node> NodeFromJson(const json& obj) {
  Node node;
  node.name = Name(obj);
  if (const json* meta = Get(obj, "metadata")) {
    ASSIGN_OR_RETURN(node.labels, LabelsAt(*meta, "labels", "metadata"));
  }
  if (const std::string* rack = node.labels.Find(std::string(kRackLabel))) node.rack = *rack;

  ASSIGN_OR_RETURN(const json* spec, OptObject(obj, "spec", ""));
  if (spec) {
    ASSIGN_OR_RETURN(node.taints, TaintsAt(*spec, "taints", "spec"));
    ASSIGN_OR_RETURN(node.unschedulable, BoolOr(*spec, "unschedulable", "spec", false));
  }

  // Status is the agent's, never validated: read with care.
  ASSIGN_OR_RETURN(const json* status, OptObject(obj, "status", ""));
  const json empty = json::object();
  const json& st = status ? *status : empty;
  // Ready only on a current "True" (a node that never reported is not ready).
  ASSIGN_OR_RETURN(node.ready, ConditionTrue(st, "Ready", "status"));
  ASSIGN_OR_RETURN(const json* allocatable, OptObject(st, "allocatable", "status"));
  ASSIGN_OR_RETURN(const json* capacity, OptObject(st, "capacity", "status"));
  // An allocatable amount, else the capacity (Kubernetes defaults one to the other).
  auto amount = [&](ResourceKind kind) -> Result<std::optional<int64_t>> {
    const std::string_view name = ResourceName(kind);
    for (auto [list, field] : {std::pair{allocatable, "allocatable"}, std::pair{capacity, "capacity"}}) {
      const json* v = list ? Get(*list, name) : nullptr;
      if (!v) continue;
      ASSIGN_OR_RETURN(int64_t a, AmountOf(kind, *v, KeyPath(FieldPath("status", field), name)));
      return std::optional<int64_t>(a);
    }
    return std::optional<int64_t>();
  };
  ASSIGN_OR_RETURN(std::optional<int64_t> cpu, amount(ResourceKind::kCpu));
  ASSIGN_OR_RETURN(std::optional<int64_t> memory, amount(ResourceKind::kMemory));
  node.cpu_milli = cpu.value_or(0);
  node.memory_bytes = memory.value_or(0);

  if (std::optional<std::string> inventory = Annotation(obj, kGpusAnnotation)) {
    const std::string path = AnnotationPath(kGpusAnnotation);
    json devices = json::parse(*inventory, nullptr, /*allow_exceptions=*/false);
    if (devices.is_discarded()) return Err(Invalid(path, "not valid JSON (expected a list of devices)"));
    if (!devices.is_array()) return Err(WrongType(path, "a list of devices", devices));
    for (size_t i = 0; i < devices.size(); ++i) {
      const std::string p = IndexPath(path, i);
      const json& d = devices[i];
      if (!d.is_object()) return Err(WrongType(p, "an object", d));
      GpuDevice gpu;
      ASSIGN_OR_RETURN(std::optional<int64_t> index, OptInt(d, "index", p));
      ASSIGN_OR_RETURN(std::optional<int64_t> memory_bytes,
                       OptInt(d, "memoryBytes", p, 1, std::numeric_limits<int64_t>::max()));
      ASSIGN_OR_RETURN(std::optional<int64_t> nvlink, OptInt(d, "nvlinkDomain", p, kInt32Min, kInt32Max));
      if (!index) return Err(Invalid(FieldPath(p, "index"), "required"));
      if (!memory_bytes) return Err(Invalid(FieldPath(p, "memoryBytes"), "required"));
      gpu.index = static_cast<int32_t>(*index);
      gpu.memory_bytes = *memory_bytes;
      gpu.nvlink_domain = static_cast<int32_t>(nvlink.value_or(0));
      ASSIGN_OR_RETURN(gpu.uuid, StringOr(d, "uuid", p, ""));
      ASSIGN_OR_RETURN(gpu.model, StringOr(d, "model", p, ""));
      node.gpus.push_back(std::move(gpu));
    }
    // Positions are what admissions name (DeviceShare::device): order them by
    // CUDA index so that they do not depend on how the agent listed them.
    std::stable_sort(node.gpus.begin(), node.gpus.end(),
                     [](const GpuDevice& a, const GpuDevice& b) { return a.index < b.index; });
    for (size_t i = 1; i < node.gpus.size(); ++i) {
      if (node.gpus[i].index == node.gpus[i - 1].index) {
        return Err(Invalid(path, fmt::format("device index {} appears twice", node.gpus[i].index)));
      }
    }
  } else if (const json* gpus = allocatable ? Get(*allocatable, ResourceName(ResourceKind::kGpu)) : nullptr) {
    // No inventory: whole generic devices, as many as the node offers.
    const std::string path = KeyPath("status.allocatable", ResourceName(ResourceKind::kGpu));
    ASSIGN_OR_RETURN(int64_t milli, AmountOf(ResourceKind::kGpu, *gpus, path));
    if (milli % 1000 != 0) return Err(Invalid(path, "a node offers whole GPUs"));
    const std::string* product = node.labels.Find("nvidia.com/gpu.product");
    for (int64_t i = 0; i < milli / 1000; ++i) {
      node.gpus.push_back(GpuDevice{.index = static_cast<int32_t>(i),
                                    .model = product ? *product : std::string(),
                                    .memory_bytes = kGenericGpuMemory,
                                    .nvlink_domain = 0});
    }
  }
  return node;
}

Result<Workload> WorkloadFromJson(const json& obj,
                                  const std::function<const PriorityClass*(std::string_view)>& priority_class,
                                  const PriorityClass* default_class,
                                  const std::function<ClusterQueueId(std::string_view)>& cluster_queue_id,
                                  const std::function<FlavorId(std::string_view)>& flavor_id,
                                  const std::function<NodeId(std::string_view)>& node_id) {
  Workload w;
  w.namespace_name = NamespaceOf(obj);
  w.name = Name(obj);
  ASSIGN_OR_RETURN(const json* spec, OptObject(obj, "spec", ""));
  if (!spec) return Err(Invalid("spec.podSets", "required"));
  ASSIGN_OR_RETURN(w.local_queue_name, StringOr(*spec, "queueName", "spec", ""));

  // Priority: spec.priority, else the class's value; the class named, else the
  // global default.
  ASSIGN_OR_RETURN(std::string class_name, StringOr(*spec, "priorityClassName", "spec", ""));
  const PriorityClass* pc = class_name.empty() ? nullptr : priority_class(class_name);
  if (pc == nullptr) pc = default_class;
  ASSIGN_OR_RETURN(std::optional<int64_t> priority, OptInt(*spec, "priority", "spec", kInt32Min, kInt32Max));
  w.priority = priority ? static_cast<int32_t>(*priority) : (pc ? pc->value : 0);
  w.priority_class = pc ? pc->name : class_name;
  if (pc) {
    w.preemption_policy = pc->preemption_policy;
    w.non_preemptible = pc->non_preemptible;
  }

  const json* meta = Get(obj, "metadata");
  if (meta) {
    ASSIGN_OR_RETURN(std::optional<std::string> created, OptString(*meta, "creationTimestamp", "metadata"));
    if (created) {
      ASSIGN_OR_RETURN(w.creation_time, TimeAt(*created, "metadata.creationTimestamp"));
    }
    ASSIGN_OR_RETURN(std::optional<std::string> deleted, OptString(*meta, "deletionTimestamp", "metadata"));
    if (deleted) w.evicting = true;
  }

  ASSIGN_OR_RETURN(std::optional<int64_t> annotated_max_run, MaxRunSecondsAnnotation(obj));
  ASSIGN_OR_RETURN(std::optional<int64_t> spec_max_run,
                   OptInt(*spec, "maximumExecutionTimeSeconds", "spec", 1, kInt32Max));
  if (std::optional<int64_t> max_run = MinOf(annotated_max_run, spec_max_run)) {
    w.max_run = Duration::Seconds(*max_run);
  }
  if (Annotation(obj, kPlaceholderAnnotation) == "true") w.preemption_policy = PreemptionPolicy::kNever;
  if (std::optional<std::string> checkpoint = Annotation(obj, kLastCheckpointAnnotation)) {
    ASSIGN_OR_RETURN(w.last_checkpoint, TimeAt(*checkpoint, AnnotationPath(kLastCheckpointAnnotation)));
  }

  ASSIGN_OR_RETURN(const json* pod_sets, OptArray(*spec, "podSets", "spec"));
  if (!pod_sets || pod_sets->empty()) return Err(Invalid("spec.podSets", "required: at least one pod set"));
  std::set<std::string> names;
  for (size_t i = 0; i < pod_sets->size(); ++i) {
    const std::string p = IndexPath("spec.podSets", i);
    ASSIGN_OR_RETURN(PodSet ps, PodSetFromJson((*pod_sets)[i], p));
    if (!names.insert(ps.name).second) {
      return Err(Invalid(FieldPath(p, "name"), fmt::format("duplicate pod set name \"{}\"", ps.name)));
    }
    w.pod_sets.push_back(std::move(ps));
  }

  ASSIGN_OR_RETURN(const json* status, OptObject(obj, "status", ""));
  if (status) {
    ASSIGN_OR_RETURN(bool evicted, ConditionTrue(*status, "Evicted", "status"));
    w.evicting = w.evicting || evicted;
    ASSIGN_OR_RETURN(const json* admission, OptObject(*status, "admission", "status"));
    if (admission) {
      const std::string p = "status.admission";
      ASSIGN_OR_RETURN(w.admission, AdmissionFromJson(*admission, p, w, cluster_queue_id, flavor_id, node_id));
      ASSIGN_OR_RETURN(std::optional<std::string> admitted_at, OptString(*admission, "admittedAt", p));
      w.start_time = w.creation_time;
      if (admitted_at) {
        ASSIGN_OR_RETURN(w.start_time, TimeAt(*admitted_at, FieldPath(p, "admittedAt")));
      }
    }
  }
  return w;
}

std::string WorkloadNameForJob(bool volcano, std::string_view job_name) {
  return fmt::format("{}-{}", volcano ? "vcjob" : "job", job_name);
}

json AdmissionToJson(const Admission& admission, const Workload& w,
                     const std::function<std::string(ClusterQueueId)>& cluster_queue_name,
                     const std::function<std::string(FlavorId)>& flavor_name,
                     const std::function<std::string(NodeId)>& node_name, const std::string& admitted_at) {
  TESSERA_CHECK(admission.pod_sets.size() == w.pod_sets.size(), "workload {}: {} assignments for {} pod sets",
                w.Key(), admission.pod_sets.size(), w.pod_sets.size());
  json assignments = json::array();
  for (size_t i = 0; i < admission.pod_sets.size(); ++i) {
    const PodSetAssignment& a = admission.pod_sets[i];
    const std::string flavor = flavor_name(a.flavor);
    json flavors = json::object();
    for (std::string_view resource : FlavoredResources(w.pod_sets[i])) flavors[std::string(resource)] = flavor;
    json placements = json::array();
    for (const PodPlacement& pod : a.pods) {
      json devices = json::array();
      for (const DeviceShare& d : pod.gpus) devices.push_back({{"index", d.device}, {"milli", d.milli}});
      placements.push_back({{"node", node_name(pod.node)}, {"devices", std::move(devices)}});
    }
    assignments.push_back({{"name", w.pod_sets[i].name},
                           {"flavors", std::move(flavors)},
                           {"count", a.count},
                           {"placements", std::move(placements)}});
  }
  return {{"clusterQueue", cluster_queue_name(admission.cluster_queue)},
          {"admittedAt", admitted_at},
          {"podSetAssignments", std::move(assignments)}};
}

Result<json> WorkloadForJob(const json& job) {
  ASSIGN_OR_RETURN(std::string api_version, StringOr(job, "apiVersion", "", ""));
  ASSIGN_OR_RETURN(std::string kind, StringOr(job, "kind", "", ""));
  const bool batch = api_version == "batch/v1" && kind == "Job";
  const bool volcano = api_version == "batch.volcano.sh/v1alpha1" && kind == "Job";
  if (!batch && !volcano) {
    return Err(Status::InvalidArgument(fmt::format(
        "kind: expected a batch/v1 Job or a batch.volcano.sh/v1alpha1 Job, got {} {}", api_version, kind)));
  }
  const std::string name = Name(job);
  if (name.empty()) return Err(Invalid("metadata.name", "required"));
  // The label tessera.dev/job-name carries the name, so it must be a label value
  // (Kubernetes limits Job names to 63 characters for the same reason).
  if (name.size() > 63) {
    return Err(Invalid("metadata.name", fmt::format("\"{}\" is longer than 63 characters; a Job's name becomes "
                                                    "the label {} of its Workload",
                                                    name, kJobNameLabel)));
  }
  std::optional<std::string> uid;
  if (const json* meta = Get(job, "metadata")) {
    ASSIGN_OR_RETURN(uid, OptString(*meta, "uid", "metadata"));
  }
  if (!uid || uid->empty()) {
    return Err(Invalid("metadata.uid", "required: the Workload's owner reference names the Job by uid "
                                       "(a Job read from the store has one)"));
  }
  ASSIGN_OR_RETURN(const json* spec, OptObject(job, "spec", ""));
  if (!spec) return Err(Invalid("spec", "required"));

  JobParts parts;
  if (batch) {
    ASSIGN_OR_RETURN(parts, BatchJobParts(job, *spec));
  } else {
    ASSIGN_OR_RETURN(parts, VolcanoJobParts(job, *spec));
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> annotated, MaxRunSecondsAnnotation(job));
  parts.max_run_seconds = MinOf(parts.max_run_seconds, annotated);

  json metadata{{"name", WorkloadNameForJob(!batch, name)},
                {"namespace", NamespaceOf(job)},
                {"labels", {{std::string(kJobNameLabel), name}}},
                {"ownerReferences",
                 json::array({{{"apiVersion", api_version},
                               {"kind", kind},
                               {"name", name},
                               {"uid", *uid},
                               {"controller", true}}})}};
  if (parts.max_run_seconds) {
    metadata["annotations"] = {{std::string(kMaxRunSecondsAnnotation), std::to_string(*parts.max_run_seconds)}};
  }
  // The kind of work and its idle timeout (notebooks are suspended when idle),
  // and who made the Job (the server stamped it; usage reports count by it).
  const json job_annotations = job.value("metadata", json::object()).value("annotations", json::object());
  for (std::string_view key : {std::string_view("tessera.dev/type"), std::string_view("tessera.dev/idle-timeout"),
                               kCreatedByAnnotation}) {
    if (auto a = job_annotations.find(key); a != job_annotations.end() && a->is_string()) {
      metadata["annotations"][std::string(key)] = *a;
    }
  }
  json wl_spec{{"queueName", parts.queue}};
  if (!parts.priority_class.empty()) wl_spec["priorityClassName"] = parts.priority_class;
  wl_spec["podSets"] = std::move(parts.pod_sets);
  return json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
              {"kind", "Workload"},
              {"metadata", std::move(metadata)},
              {"spec", std::move(wl_spec)}};
}

}  // namespace tessera
