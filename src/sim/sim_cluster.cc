#include "sim/sim_cluster.h"

#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/convert.h"
#include "api/kinds.h"
#include "api/manifest.h"
#include "api/validation.h"
#include "sched/snapshot_builder.h"
#include "common/csv_rows.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr int32_t kNodesPerRack = 32;
constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMiB = int64_t{1} << 20;

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Err(Status::NotFound(fmt::format("cannot open {}: no such file, or not readable", path)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Node MakeNode(std::string name, int32_t gpus, const std::string& model, int64_t cpu_milli, int64_t memory_bytes,
              int32_t position) {
  Node n;
  n.name = std::move(name);
  n.rack = fmt::format("rack-{}", position / kNodesPerRack);
  n.cpu_milli = cpu_milli;
  n.memory_bytes = memory_bytes;
  if (!model.empty()) n.labels.Set(std::string(kGpuProductLabel), model);
  n.labels.Set("topology.kubernetes.io/rack", n.rack);
  for (int32_t i = 0; i < gpus; ++i) {
    n.gpus.push_back(GpuDevice{.index = i,
                               .uuid = fmt::format("GPU-{}-{}", n.name, i),
                               .model = model,
                               .memory_bytes = 80 * kGiB,
                               .nvlink_domain = 0});
  }
  return n;
}

template <typename T>
bool ParseInt(std::string_view text, T* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// "125x8xA100-80GB,16x4xV100"; `files`: the error also names the file forms --cluster takes.
Result<std::vector<Node>> NodesFromShorthand(std::string_view spec, std::string_view name_prefix, bool files) {
  std::vector<Node> nodes;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string_view group = spec.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t x1 = group.find('x');
    size_t x2 = x1 == std::string_view::npos ? x1 : group.find('x', x1 + 1);
    int32_t count = 0, gpus = 0;
    if (x2 == std::string_view::npos || !ParseInt(group.substr(0, x1), &count) ||
        !ParseInt(group.substr(x1 + 1, x2 - x1 - 1), &gpus) || count <= 0 || gpus < 0 || x2 + 1 >= group.size()) {
      if (!files) {
        return Err(Status::InvalidArgument(
            fmt::format("\"{}\" is not NODESxGPUSxMODEL (like 4x8xH100-80GB; groups joined by ',')", group)));
      }
      return Err(Status::InvalidArgument(fmt::format(
          "--cluster: \"{}\" is not NODESxGPUSxMODEL (like 125x8xA100-80GB), a node-list .csv, or a .yaml/.json "
          "file of Node manifests",
          group)));
    }
    const std::string model(group.substr(x2 + 1));
    for (int32_t i = 0; i < count; ++i) {
      const auto position = static_cast<int32_t>(nodes.size());
      nodes.push_back(MakeNode(fmt::format("{}{}", name_prefix, position), gpus, model, int64_t{16000} * std::max(gpus, 1),
                               int64_t{128} * kGiB * std::max(gpus, 1), position));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return nodes;
}

// openb: sn,cpu_milli,memory_mib,gpu,model.
Result<std::vector<Node>> NodesFromCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(Status::NotFound(fmt::format("cannot open {}: no such file, or not readable", path)));
  std::vector<Node> nodes;
  size_t col[5] = {};
  static constexpr const char* kColumns[5] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
  Status s = ForEachCsvRow(
      in,
      [&](CsvFields header) -> Status {
        for (int i = 0; i < 5; ++i) {
          auto c = FindCsvColumn(header, kColumns[i]);
          if (!c) {
            return Status::InvalidArgument(
                fmt::format("{}: missing column \"{}\" (a node list has sn,cpu_milli,memory_mib,gpu,model)", path,
                            kColumns[i]));
          }
          col[i] = *c;
        }
        return Status::Ok();
      },
      [&](int64_t line, CsvFields f) -> Status {
        int64_t cpu = 0, memory_mib = 0;
        int32_t gpus = 0;
        for (size_t c : col) {
          if (c >= f.size()) return Status::InvalidArgument(fmt::format("{}: line {}: too few columns", path, line));
        }
        if (!ParseInt(f[col[1]], &cpu) || !ParseInt(f[col[2]], &memory_mib) || !ParseInt(f[col[3]], &gpus) ||
            cpu < 0 || memory_mib < 0 || gpus < 0) {
          return Status::InvalidArgument(
              fmt::format("{}: line {}: cpu_milli, memory_mib and gpu must be whole numbers >= 0", path, line));
        }
        const auto position = static_cast<int32_t>(nodes.size());
        nodes.push_back(MakeNode(std::string(f[col[0]]), gpus, std::string(f[col[4]]), cpu, memory_mib * kMiB, position));
        return Status::Ok();
      });
  if (!s.ok()) return Err(s);
  return nodes;
}

Result<std::vector<Node>> NodesFromManifests(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  ASSIGN_OR_RETURN(auto docs, ParseManifests(text));
  std::vector<Node> nodes;
  for (const ManifestDocument& d : docs) {
    if (d.object.value("kind", "") != "Node") continue;
    ASSIGN_OR_RETURN(const KindInfo* kind, ValidateManifest(d.object));
    (void)kind;
    auto node = NodeFromJson(d.object);
    if (!node) return Err(node.error().WithContext(fmt::format("{}: {}", path, d.Where())));
    node->ready = true;
    nodes.push_back(std::move(*node));
  }
  if (nodes.empty()) return Err(Status::InvalidArgument(fmt::format("{}: no Node manifests in it", path)));
  return nodes;
}

json Quantity(int64_t v) { return std::to_string(v); }

}  // namespace

std::string QueueNameForTeam(std::string_view team) {
  if (team.empty()) return "default";
  std::string out;
  for (char c : team) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-');
  }
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.front() == '-') out.erase(out.begin());
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "default" : out;
}

Result<std::vector<Node>> LoadSimNodes(const std::string& spec) {
  if (spec.empty()) return Err(Status::InvalidArgument("--cluster: required (like 125x8xA100-80GB)"));
  if (EndsWith(spec, ".csv")) return NodesFromCsv(spec);
  if (EndsWith(spec, ".yaml") || EndsWith(spec, ".yml") || EndsWith(spec, ".json")) return NodesFromManifests(spec);
  return NodesFromShorthand(spec, "node-", /*files=*/true);
}

Result<std::vector<Node>> SimNodesFromShorthand(std::string_view spec, std::string_view name_prefix) {
  return NodesFromShorthand(spec, name_prefix, /*files=*/false);
}

int64_t SimCluster::TotalGpuMilli() const {
  int64_t total = 0;
  for (const Node& n : base.nodes) total += n.GpuMilli();
  return total;
}

const PriorityClass* SimCluster::FindPriorityClass(std::string_view name) const {
  for (const PriorityClass& pc : priority_classes) {
    if (pc.name == name) return &pc;
  }
  return nullptr;
}

const PriorityClass* SimCluster::DefaultPriorityClass() const {
  for (const PriorityClass& pc : priority_classes) {
    if (pc.global_default) return &pc;
  }
  return nullptr;
}

Result<SimCluster> SimClusterFromManifests(std::vector<Node> nodes, std::string_view manifests) {
  ASSIGN_OR_RETURN(auto docs, ParseManifests(manifests));
  SimCluster out;
  std::map<std::string, std::vector<const json*>> by_kind;
  for (const ManifestDocument& d : docs) {
    auto kind = ValidateManifest(d.object);
    if (!kind) return Err(kind.error().WithContext(d.Where()));
    by_kind[std::string((*kind)->kind)].push_back(&d.object);
  }
  for (const auto& [kind, objects] : by_kind) {
    static constexpr std::string_view kUsed[] = {"ResourceFlavor", "ClusterQueue", "LocalQueue", "PriorityClass",
                                                 "Namespace",      "ResourceQuota"};
    if (std::find(std::begin(kUsed), std::end(kUsed), kind) == std::end(kUsed)) {
      out.warnings.push_back(fmt::format("{} {} ignored: the simulator reads ResourceFlavor, ClusterQueue, "
                                         "LocalQueue, PriorityClass, Namespace and ResourceQuota",
                                         objects.size(), kind));
    }
  }
  auto each = [&](const std::string& kind, auto&& fn) -> Status {
    for (const json* obj : by_kind[kind]) {
      Status s = fn(*obj);
      if (!s.ok()) {
        return s.WithContext(fmt::format("{} {}", kind, obj->value("metadata", json::object()).value("name", "")));
      }
    }
    return Status::Ok();
  };
  SnapshotBuilder b;
  RETURN_IF_ERROR(each("ResourceFlavor", [&](const json& o) -> Status {
    ASSIGN_OR_RETURN(auto rf, ResourceFlavorFromJson(o));
    b.AddFlavor(std::move(rf));
    return Status::Ok();
  }));
  for (Node& n : nodes) b.AddNode(std::move(n));
  RETURN_IF_ERROR(each("ClusterQueue", [&](const json& o) -> Status {
    ASSIGN_OR_RETURN(auto cq, ClusterQueueFromJson(
                                  o, [&](std::string_view name) { return b.FlavorIdOf(std::string(name)); },
                                  [&](std::string_view name) { return b.Cohort(std::string(name)); }));
    if (!cq.inactive_reason.empty()) {
      return Status::InvalidArgument(cq.inactive_reason);
    }
    b.AddClusterQueue(std::move(cq));
    return Status::Ok();
  }));
  RETURN_IF_ERROR(each("LocalQueue", [&](const json& o) -> Status {
    ASSIGN_OR_RETURN(auto lq, LocalQueueFromJson(o));
    if (!b.ClusterQueueIdOf(lq.cluster_queue_name).valid()) {
      return Status::InvalidArgument(fmt::format("spec.clusterQueue: ClusterQueue \"{}\" is not in the policy",
                                                 lq.cluster_queue_name));
    }
    b.AddLocalQueue(lq.namespace_name, lq.name, lq.cluster_queue_name);
    return Status::Ok();
  }));
  RETURN_IF_ERROR(each("Namespace", [&](const json& o) -> Status {
    const std::string name = o["metadata"].value("name", "");
    b.Namespace(name);
    // Its labels, which ClusterQueues' namespaceSelectors match (with Kubernetes' own name label).
    Labels labels;
    labels.Set("kubernetes.io/metadata.name", name);
    const json given = o["metadata"].value("labels", json::object());
    for (const auto& [k, v] : given.items()) {
      if (v.is_string()) labels.Set(k, v.get<std::string>());
    }
    b.SetNamespaceLabels(name, std::move(labels));
    return Status::Ok();
  }));
  RETURN_IF_ERROR(each("ResourceQuota", [&](const json& o) -> Status {
    ASSIGN_OR_RETURN(auto rq, ResourceQuotaFromJson(o));
    b.AddResourceQuota(o["metadata"].value("namespace", "default"), std::move(rq));
    return Status::Ok();
  }));
  RETURN_IF_ERROR(each("PriorityClass", [&](const json& o) -> Status {
    ASSIGN_OR_RETURN(auto pc, PriorityClassFromJson(o));
    out.priority_classes.push_back(std::move(pc));
    return Status::Ok();
  }));
  if (out.priority_classes.empty()) out.priority_classes = DefaultPriorityClasses();
  if (by_kind["ClusterQueue"].empty()) {
    return Err(Status::InvalidArgument("the policy has no ClusterQueue: add one per team (kueue.x-k8s.io/v1beta1)"));
  }
  out.base = b.Build();
  return out;
}

Result<SimCluster> SimClusterFromPolicyFile(std::vector<Node> nodes, const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  auto cluster = SimClusterFromManifests(std::move(nodes), text);
  if (!cluster) return Err(cluster.error().WithContext(path));
  return cluster;
}

std::string DefaultPolicyManifests(const std::vector<Node>& nodes, const std::vector<std::string>& teams) {
  int64_t gpus = 0, cpu = 0, memory = 0;
  for (const Node& n : nodes) {
    gpus += static_cast<int64_t>(n.gpus.size());
    cpu += n.cpu_milli;
    memory += n.memory_bytes;
  }
  std::vector<std::string> names;
  for (const std::string& t : teams) {
    std::string q = QueueNameForTeam(t);
    if (std::find(names.begin(), names.end(), q) == names.end()) names.push_back(std::move(q));
  }
  if (names.empty()) names.push_back("default");
  json items = json::array();
  items.push_back({{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                   {"kind", "ResourceFlavor"},
                   {"metadata", {{"name", "default"}}},
                   {"spec", json::object()}});
  const auto n = static_cast<int64_t>(names.size());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t share = gpus / n + (i < gpus % n ? 1 : 0);
    items.push_back(
        {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
         {"kind", "ClusterQueue"},
         {"metadata", {{"name", names[i]}}},
         {"spec",
          {{"cohort", "all"},
           {"namespaceSelector", json::object()},
           {"resourceGroups",
            {{{"coveredResources", {"cpu", "memory", "nvidia.com/gpu"}},
              {"flavors",
               {{{"name", "default"},
                 {"resources",
                  {{{"name", "cpu"}, {"nominalQuota", fmt::format("{}m", cpu)}},
                   {{"name", "memory"}, {"nominalQuota", Quantity(memory)}},
                   {{"name", "nvidia.com/gpu"}, {"nominalQuota", Quantity(share)}}}}}}}}}},
           {"preemption", {{"reclaimWithinCohort", "Any"}, {"withinClusterQueue", "LowerPriority"}}}}}});
    items.push_back({{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                     {"kind", "LocalQueue"},
                     {"metadata", {{"name", names[i]}, {"namespace", names[i]}}},
                     {"spec", {{"clusterQueue", names[i]}}}});
  }
  return json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump(2);
}

}  // namespace tessera
