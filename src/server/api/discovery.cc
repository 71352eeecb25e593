#include "server/api/discovery.h"

#include <algorithm>
#include <map>
#include <ranges>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "server/api/api_errors.h"
#include "server/api/media_types.h"

namespace tessera {
namespace {

using nlohmann::json;

// The Kubernetes API level Tessera speaks (what kubectl compares its own
// version with), and Tessera's own build in gitVersion.
constexpr std::string_view kMajor = "1";
constexpr std::string_view kMinor = "32";
constexpr std::string_view kGitVersion = "v1.32.0-tessera";
#if defined(__aarch64__)
constexpr std::string_view kPlatform = "linux/arm64";
#else
constexpr std::string_view kPlatform = "linux/amd64";
#endif

const std::vector<Subresource> kNone;

std::vector<std::string> Strings(const std::vector<std::string_view>& views) {
  return {views.begin(), views.end()};
}

// A group's versions, in the registry's order (the first is preferred).
struct Group {
  std::string_view name;
  std::vector<std::string_view> versions;
};

std::vector<Group> Groups() {
  std::vector<Group> groups;
  for (const KindInfo& k : AllKinds()) {
    if (k.group.empty()) continue;
    auto it = std::ranges::find(groups, k.group, &Group::name);
    if (it == groups.end()) {
      groups.push_back(Group{k.group, {k.version}});
    } else if (std::ranges::find(it->versions, k.version) == it->versions.end()) {
      it->versions.push_back(k.version);
    }
  }
  return groups;
}

std::vector<const KindInfo*> KindsIn(std::string_view group, std::string_view version) {
  std::vector<const KindInfo*> kinds;
  for (const KindInfo& k : AllKinds()) {
    if (k.group == group && k.version == version) kinds.push_back(&k);
  }
  return kinds;
}

std::string GroupVersion(std::string_view group, std::string_view version) {
  return group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
}

// metav1.APIResourceList: the kinds of one group version and their subresources.
json ResourceList(std::string_view group, std::string_view version) {
  json resources = json::array();
  for (const KindInfo* k : KindsIn(group, version)) {
    json resource{{"name", k->plural},
                  {"singularName", k->singular},
                  {"namespaced", k->namespaced},
                  {"kind", k->kind},
                  {"verbs", Strings(VerbsOf(*k))}};
    if (!k->short_names.empty()) resource["shortNames"] = Strings(k->short_names);
    if (!k->categories.empty()) resource["categories"] = Strings(k->categories);
    resources.push_back(std::move(resource));
    for (const Subresource& sub : SubresourcesOf(*k)) {
      json entry{{"name", std::string(k->plural) + "/" + std::string(sub.name)},
                 {"singularName", ""},
                 {"namespaced", k->namespaced},
                 {"kind", k->kind},
                 {"verbs", Strings(sub.verbs)}};
      if (sub.name == "scale") entry.update({{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}});
      resources.push_back(std::move(entry));
    }
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", GroupVersion(group, version)},
          {"resources", std::move(resources)}};
}

// apidiscovery.k8s.io/v2 APIVersionDiscovery: the same kinds, in the aggregated form.
json VersionDiscovery(std::string_view group, std::string_view version) {
  json resources = json::array();
  for (const KindInfo* k : KindsIn(group, version)) {
    const json response_kind{{"group", k->group}, {"version", k->version}, {"kind", k->kind}};
    json resource{{"resource", k->plural},
                  {"responseKind", response_kind},
                  {"scope", k->namespaced ? "Namespaced" : "Cluster"},
                  {"singularResource", k->singular},
                  {"verbs", Strings(VerbsOf(*k))}};
    if (!k->short_names.empty()) resource["shortNames"] = Strings(k->short_names);
    if (!k->categories.empty()) resource["categories"] = Strings(k->categories);
    json subresources = json::array();
    for (const Subresource& sub : SubresourcesOf(*k)) {
      const json kind_of = sub.name == "scale" ? json{{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}}
                                               : response_kind;
      subresources.push_back({{"subresource", sub.name}, {"responseKind", kind_of}, {"verbs", Strings(sub.verbs)}});
    }
    if (!subresources.empty()) resource["subresources"] = std::move(subresources);
    resources.push_back(std::move(resource));
  }
  return {{"version", version}, {"resources", std::move(resources)}, {"freshness", "Current"}};
}

json GroupVersionRef(std::string_view group, std::string_view version) {
  return {{"groupVersion", GroupVersion(group, version)}, {"version", version}};
}

json LegacyGroup(const Group& g) {
  json versions = json::array();
  for (std::string_view v : g.versions) versions.push_back(GroupVersionRef(g.name, v));
  return {{"name", g.name}, {"versions", std::move(versions)}, {"preferredVersion", GroupVersionRef(g.name, g.versions[0])}};
}

json AggregatedList(const std::vector<Group>& groups) {
  json items = json::array();
  for (const Group& g : groups) {
    json versions = json::array();
    for (std::string_view v : g.versions) versions.push_back(VersionDiscovery(g.name, v));
    items.push_back({{"metadata", {{"name", g.name}, {"creationTimestamp", nullptr}}}, {"versions", std::move(versions)}});
  }
  return {{"kind", "APIGroupDiscoveryList"},
          {"apiVersion", "apidiscovery.k8s.io/v2"},
          {"metadata", json::object()},
          {"items", std::move(items)}};
}

// True when one of the media types `accept` lists is the aggregated discovery
// list of apidiscovery.k8s.io/v2.
bool WantsAggregated(std::string_view accept) {
  for (const MediaType& m : AcceptedMediaTypes(accept)) {
    auto is = [&](const char* key, const char* value) {
      auto it = m.params.find(key);
      return it != m.params.end() && it->second == value;
    };
    if (is("g", "apidiscovery.k8s.io") && is("v", "v2") && is("as", "APIGroupDiscoveryList")) return true;
  }
  return false;
}

// The documents by path ("/api", "/apis/batch/v1"; "aggregated /apis"), built
// once: the registry does not change while the program runs. nullptr: none.
const std::string* Document(const std::string& key) {
  static const std::map<std::string, std::string> documents = [] {
    std::map<std::string, std::string> docs;
    const std::vector<Group> groups = Groups();
    docs["/api"] = json{{"kind", "APIVersions"}, {"versions", {"v1"}}, {"serverAddressByClientCIDRs", json::array()}}
                       .dump();
    json legacy = json::array();
    for (const Group& g : groups) legacy.push_back(LegacyGroup(g));
    docs["/apis"] = json{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", std::move(legacy)}}.dump();
    docs["aggregated /api"] = AggregatedList({Group{"", {"v1"}}}).dump();
    docs["aggregated /apis"] = AggregatedList(groups).dump();
    docs["/api/v1"] = ResourceList("", "v1").dump();
    for (const Group& g : groups) {
      json group = LegacyGroup(g);
      group["kind"] = "APIGroup";
      group["apiVersion"] = "v1";
      docs["/apis/" + std::string(g.name)] = group.dump();
      for (std::string_view v : g.versions) docs["/apis/" + GroupVersion(g.name, v)] = ResourceList(g.name, v).dump();
    }
    return docs;
  }();
  auto it = documents.find(key);
  return it == documents.end() ? nullptr : &it->second;
}

HttpResponse Raw(const std::string& body, std::string_view content_type = "application/json") {
  HttpResponse r;
  r.status = 200;
  r.content_type = std::string(content_type);
  r.body = body;
  return r;
}

}  // namespace

const std::vector<Subresource>& SubresourcesOf(const KindInfo& kind) {
  static const std::vector<Subresource> status_only{{"status", {"get", "patch", "update"}}};
  static const std::map<std::string_view, std::vector<Subresource>> more{
      {"/Pod",
       {{"status", {"get", "patch", "update"}},
        {"log", {"get"}},
        {"exec", {"create", "get"}},
        {"portforward", {"create", "get"}},
        {"proxy", {"create", "delete", "get", "patch", "update"}}}},
      {"/Service", {{"status", {"get", "patch", "update"}}, {"proxy", {"create", "delete", "get", "patch", "update"}}}},
      {"/ServiceAccount", {{"status", {"get", "patch", "update"}}, {"token", {"create"}}}},
      {"/Node", {{"status", {"get", "patch", "update"}}, {"token", {"create"}}}},
      {"tessera.dev/ApprovalRequest", {{"status", {"get", "patch", "update"}}, {"approval", {"get", "patch", "update"}}}},
      {"tessera.dev/Template", {{"status", {"get", "patch", "update"}}, {"render", {"create"}}}},
      {"batch/Job", {{"status", {"get", "patch", "update"}}, {"scale", {"get", "patch", "update"}}}},
      {"tessera.dev/InferenceService", {{"status", {"get", "patch", "update"}}, {"scale", {"get", "patch", "update"}}}},
  };
  if (!kind.stored) return kNone;
  auto it = more.find(kind.store_key);
  return it == more.end() ? status_only : it->second;
}

std::vector<std::string_view> VerbsOf(const KindInfo& kind) {
  if (!kind.stored) return {"create"};
  return {"create", "delete", "get", "list", "patch", "update", "watch"};
}

std::optional<HttpResponse> DiscoveryResponse(std::string_view method, std::string_view path,
                                              std::string_view accept) {
  if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const bool discovery_path = path == "/version" || path == "/api" || path == "/apis" || path == "/api/v1" ||
                              (path.starts_with("/apis/") && std::ranges::count(path, '/') <= 3);
  if (!discovery_path) return std::nullopt;
  if (method != "GET") {
    return StatusResponse(405, "MethodNotAllowed", fmt::format("{} is read with GET", path));
  }
  if (path == "/version") {
    return Raw(json{{"major", kMajor},
                       {"minor", kMinor},
                       {"gitVersion", kGitVersion},
                       {"gitCommit", ""},
                       {"gitTreeState", ""},
                       {"buildDate", ""},
                       {"goVersion", ""},
                       {"compiler", "tessera"},
                       {"platform", kPlatform}}
                   .dump());
  }
  if ((path == "/api" || path == "/apis") && WantsAggregated(accept)) {
    return Raw(*Document("aggregated " + std::string(path)), kAggregatedDiscoveryV2);
  }
  const std::string* document = Document(std::string(path));
  if (document == nullptr) {
    return StatusResponse(404, "NotFound",
                          fmt::format("the server could not find the requested resource: {} is not an API group "
                                      "or version this server serves (GET /apis lists them)",
                                      path));
  }
  return Raw(*document);
}

}  // namespace tessera
