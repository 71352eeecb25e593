#include "server/controllers/endpointslice_controller.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>
#include <optional>

#include "domain/ipv4_cidr.h"
#include "server/object_json.h"

namespace tessera {

using nlohmann::json;

namespace {

// FNV-1a, 64 bits: a slice's name suffix must not change between builds.
uint64_t Fnv1a(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// S-xxxxx: at most 63 characters, as a generated name is (the base cut to 58),
// the suffix in the alphabet of Kubernetes' generated names.
std::string SliceName(const ServiceView& s, size_t index) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = Fnv1a(fmt::format("{}/{}", s.uid, index));
  std::string name = (s.name + "-").substr(0, 58);
  for (int i = 0; i < 5; ++i) {
    name += kAlphabet[h % kAlphabet.size()];
    h /= kAlphabet.size();
  }
  return name;
}

// The pod's IPv4 address: status.podIP, else the first IPv4 one of status.podIPs.
std::string PodIpv4(const json& pod) {
  const std::string ip = StringAt(pod, {"status", "podIP"});
  if (ParseIpv4Address(ip)) return ip;
  for (const json& entry : ArrayAt(pod, {"status", "podIPs"})) {
    const std::string one = StringAt(entry, {"ip"});
    if (ParseIpv4Address(one)) return one;
  }
  return "";
}

bool Selected(const std::map<std::string, std::string>& selector, const json& pod) {
  const json& labels = ObjectAt(pod, {"metadata", "labels"});
  for (const auto& [key, value] : selector) {
    auto it = labels.find(key);
    if (it == labels.end() || !it->is_string() || it->get_ref<const std::string&>() != value) return false;
  }
  return true;
}

// Kubernetes' ShouldPodBeInEndpoints (terminating pods included).
bool MayServe(const json& pod) {
  if (PodIpv4(pod).empty()) return false;
  const std::string policy = StringAt(pod, {"spec", "restartPolicy"});
  const std::string phase = StringAt(pod, {"status", "phase"});
  if (policy == "Never") return phase != "Failed" && phase != "Succeeded";
  if (policy == "OnFailure") return phase != "Succeeded";
  return true;
}

// Kubernetes' FindPort: a container's port of that name and protocol (sidecars too).
std::optional<int64_t> NamedPort(const json& pod, const std::string& name, const std::string& protocol) {
  auto search = [&](const json& containers, bool sidecars_only) -> std::optional<int64_t> {
    for (const json& c : containers) {
      if (sidecars_only && StringAt(c, {"restartPolicy"}) != "Always") continue;
      for (const json& p : ArrayAt(c, {"ports"})) {
        std::string proto = StringAt(p, {"protocol"});
        if (proto.empty()) proto = "TCP";
        const auto number = p.is_object() ? p.find("containerPort") : p.end();
        if (StringAt(p, {"name"}) == name && proto == protocol && number != p.end() && number->is_number_integer()) {
          return number->get<int64_t>();
        }
      }
    }
    return std::nullopt;
  };
  if (auto port = search(ArrayAt(pod, {"spec", "containers"}), false)) return port;
  return search(ArrayAt(pod, {"spec", "initContainers"}), true);
}

// The ports `pod` serves `s` on: one per Service port it resolves.
json EndpointPorts(const ServiceView& s, const json& pod) {
  json ports = json::array();
  for (const ServicePortSpec& sp : s.ports) {
    std::optional<int64_t> target;
    if (sp.target_name.empty()) {
      target = sp.target_number;
    } else {
      target = NamedPort(pod, sp.target_name, sp.protocol);
    }
    if (!target) continue;
    json port{{"name", sp.name}, {"protocol", sp.protocol}, {"port", *target}};
    if (!sp.app_protocol.empty()) port["appProtocol"] = sp.app_protocol;
    ports.push_back(std::move(port));
  }
  return ports;
}

json Endpoint(const ServiceView& s, const json& pod) {
  const bool terminating = !StringAt(pod, {"metadata", "deletionTimestamp"}).empty();
  const bool serving = s.publish_not_ready_addresses || ConditionTrue(pod, "Ready");
  const bool ready = s.publish_not_ready_addresses || (serving && !terminating);
  json e{{"addresses", json::array({PodIpv4(pod)})},
         {"conditions", {{"ready", ready}, {"serving", serving}, {"terminating", terminating}}}};
  const std::string hostname = StringAt(pod, {"spec", "hostname"});
  if (!hostname.empty() && StringAt(pod, {"spec", "subdomain"}) == s.name) e["hostname"] = hostname;
  const std::string node = StringAt(pod, {"spec", "nodeName"});
  if (!node.empty()) e["nodeName"] = node;
  e["targetRef"] = {{"kind", "Pod"},
                    {"namespace", StringAt(pod, {"metadata", "namespace"})},
                    {"name", StringAt(pod, {"metadata", "name"})},
                    {"uid", StringAt(pod, {"metadata", "uid"})}};
  return e;
}

// What a slice says, for telling whether the stored one needs writing.
bool SameContent(const json& stored, const json& desired) {
  for (const char* field : {"addressType", "endpoints", "ports"}) {
    if (stored.value(field, json()) != desired.value(field, json())) return false;
  }
  const json& meta = ObjectAt(stored, {"metadata"});
  const json& want = ObjectAt(desired, {"metadata"});
  for (const char* label : {kServiceNameLabel, kManagedByLabel}) {
    if (StringAt(meta, {"labels", label}) != StringAt(want, {"labels", label})) return false;
  }
  return meta.value("ownerReferences", json()) == want.value("ownerReferences", json());
}

// The cached objects of `kind` in namespace `ns`, in name order.
template <typename Fn>
void ForEachIn(const ObjectCache& cache, const std::string& kind, const std::string& ns, Fn fn) {
  const ObjectCache::Objects& all = cache.Of(kind);
  for (auto it = all.lower_bound({ns, ""}); it != all.end() && it->first.first == ns; ++it) fn(it->second);
}

}  // namespace

std::vector<json> DesiredEndpointSlices(const ServiceView& s, std::span<const json* const> pods) {
  // Endpoints by their set of ports (the set's JSON text: the key of the group).
  std::map<std::string, std::vector<json>> groups;
  std::map<std::string, json> ports_of;
  for (const json* pod : pods) {
    if (!Selected(s.selector, *pod) || !MayServe(*pod)) continue;
    json ports = EndpointPorts(s, *pod);
    if (ports.empty() && !s.ports.empty()) continue;  // it serves none of the Service's ports
    std::string key = ports.dump();
    groups[key].push_back(Endpoint(s, *pod));
    ports_of.emplace(std::move(key), std::move(ports));
  }
  std::vector<json> slices;
  for (auto& [key, endpoints] : groups) {
    for (size_t first = 0; first < endpoints.size(); first += kMaxEndpointsPerSlice) {
      const size_t index = slices.size();
      const size_t last = std::min(endpoints.size(), first + kMaxEndpointsPerSlice);
      json chunk = json::array();
      for (size_t i = first; i < last; ++i) chunk.push_back(std::move(endpoints[i]));
      slices.push_back(json{
          {"apiVersion", "discovery.k8s.io/v1"},
          {"kind", "EndpointSlice"},
          {"metadata",
           {{"name", SliceName(s, index)},
            {"namespace", s.ns},
            {"labels", {{kServiceNameLabel, s.name}, {kManagedByLabel, kEndpointSliceManager}}},
            {"ownerReferences",
             json::array({{{"apiVersion", "v1"},
                           {"kind", "Service"},
                           {"name", s.name},
                           {"uid", s.uid},
                           {"controller", true},
                           {"blockOwnerDeletion", true}}})}}},
          {"addressType", "IPv4"},
          {"endpoints", std::move(chunk)},
          {"ports", ports_of[key]}});
    }
  }
  return slices;
}

EndpointSliceController::EndpointSliceController(ObjectCache& cache) {
  auto mark = [this](const std::pair<std::string, std::string>& key, const StoredObject*) { dirty_.insert(key.first); };
  cache.Observe("/Pod", mark);
  cache.Observe(std::string(kServiceKind), mark);
  cache.Observe(std::string(kEndpointSliceKind), mark);
}

void EndpointSliceController::Reconcile(const ObjectCache& cache, const std::string& now, BatchedWriter& writer) {
  std::set<std::string> changed = std::move(dirty_);
  dirty_.clear();
  for (const std::string& ns : changed) {
    if (ReconcileNamespace(cache, ns, now, writer)) dirty_.insert(ns);  // to see it landed, or retry
  }
}

bool EndpointSliceController::ReconcileNamespace(const ObjectCache& cache, const std::string& ns,
                                                 const std::string& now, BatchedWriter& writer) {
  // The slices this controller manages here, by Service name, then slice name.
  std::map<std::string, std::map<std::string, const StoredObject*>> managed;
  ForEachIn(cache, std::string(kEndpointSliceKind), ns, [&](const StoredObject& slice) {
    if (StringAt(slice.object, {"metadata", "labels", kManagedByLabel}) != kEndpointSliceManager) return;
    managed[StringAt(slice.object, {"metadata", "labels", kServiceNameLabel})][slice.key.name] = &slice;
  });
  std::vector<ServiceView> views;
  ForEachIn(cache, std::string(kServiceKind), ns, [&](const StoredObject& service) {
    auto view = ServiceViewFromJson(service.object);
    if (!view) {
      spdlog::warn("service {}/{}: {}", ns, service.key.name, view.error().message());
      return;
    }
    if (!view->selector.empty()) views.push_back(std::move(*view));
  });
  if (views.empty() && managed.empty()) return false;
  std::vector<const json*> pods;
  ForEachIn(cache, "/Pod", ns, [&](const StoredObject& pod) { pods.push_back(&pod.object); });

  bool wrote = false;
  for (const ServiceView& service : views) {
    std::map<std::string, const StoredObject*> existing;
    if (auto it = managed.find(service.name); it != managed.end()) {
      existing = std::move(it->second);
      managed.erase(it);
    }
    for (json& slice : DesiredEndpointSlices(service, pods)) {
      const std::string name = StringAt(slice, {"metadata", "name"});
      const ObjectKey key{std::string(kEndpointSliceKind), ns, name};
      auto stored = existing.find(name);
      if (stored == existing.end()) {
        slice["metadata"]["creationTimestamp"] = now;
        writer.Add(WriteOp{.op = WriteOp::Kind::kCreate, .key = key, .object = std::move(slice)},
                   fmt::format("create EndpointSlice {}/{} of Service {}", ns, name, service.name));
        wrote = true;
        continue;
      }
      const StoredObject& old = *stored->second;
      existing.erase(stored);
      if (SameContent(old.object, slice)) continue;
      json next = old.object;
      for (const char* field : {"addressType", "endpoints", "ports"}) next[field] = std::move(slice[field]);
      next["metadata"]["labels"][kServiceNameLabel] = service.name;
      next["metadata"]["labels"][kManagedByLabel] = kEndpointSliceManager;
      next["metadata"]["ownerReferences"] = slice["metadata"]["ownerReferences"];
      writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = key, .object = std::move(next),
                         .expected_revision = old.revision},
                 fmt::format("update EndpointSlice {}/{} of Service {}", ns, name, service.name));
      wrote = true;
    }
    for (const auto& [name, old] : existing) {  // no longer wanted (a port set or a place that went)
      writer.Add(WriteOp{.op = WriteOp::Kind::kDelete, .key = old->key, .expected_revision = old->revision},
                 fmt::format("delete EndpointSlice {}/{} of Service {}", ns, name, service.name));
      wrote = true;
    }
  }
  // What is left belongs to no Service with a selector: gone with its Service.
  for (const auto& [service, slices] : managed) {
    for (const auto& [name, old] : slices) {
      writer.Add(WriteOp{.op = WriteOp::Kind::kDelete, .key = old->key, .expected_revision = old->revision},
                 fmt::format("delete EndpointSlice {}/{} of Service {}, which is gone", ns, name, service));
      wrote = true;
    }
  }
  return wrote;
}

}  // namespace tessera
