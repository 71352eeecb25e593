#include "server/controllers/node_ipam_controller.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <vector>

#include "server/object_json.h"

namespace tessera {

using nlohmann::json;

namespace {

const json* SpecOf(const json& node) {
  auto it = node.find("spec");
  return it != node.end() && it->is_object() ? &*it : nullptr;
}

// The ranges a Node holds: spec.podCIDRs, or spec.podCIDR when that is all it
// has; text that does not parse (validation refuses it now) holds nothing.
void AddHeld(const json& node, std::vector<Ipv4Cidr>& held) {
  std::vector<std::string> texts;
  if (const json* spec = SpecOf(node)) {
    if (auto it = spec->find("podCIDRs"); it != spec->end() && it->is_array()) {
      for (const json& c : *it) {
        if (c.is_string()) texts.push_back(c.get<std::string>());
      }
    }
  }
  if (texts.empty()) texts.push_back(StringAt(node, {"spec", "podCIDR"}));
  for (const std::string& text : texts) {
    if (auto cidr = ParseIpv4Cidr(text)) held.push_back(*cidr);
  }
}

bool HasPodCidr(const json& node) {
  if (!StringAt(node, {"spec", "podCIDR"}).empty()) return true;
  const json* spec = SpecOf(node);
  if (spec == nullptr) return false;
  auto it = spec->find("podCIDRs");
  return it != spec->end() && it->is_array() && !it->empty();
}

}  // namespace

void NodeIpamController::Reconcile(const ObjectCache& cache, Timestamp now, BatchedWriter& writer,
                                   EventRecorder& events) {
  // 1. The Nodes without a range (most passes: none, and that is all).
  const ObjectCache::Objects& nodes = cache.Of("/Node");
  std::vector<const StoredObject*> without;
  for (const auto& [unused, node] : nodes) {
    if (!HasPodCidr(node.object) && StringAt(node.object, {"metadata", "deletionTimestamp"}).empty()) {
      without.push_back(&node);
    }
  }
  std::set<std::string> still_waiting;
  if (without.empty()) {
    warned_.clear();
    return;
  }
  // 2. What every Node holds is taken; the lowest free ranges go to the
  //    Nodes without one, in the cache's order (by name).
  std::vector<Ipv4Cidr> held;
  for (const auto& [unused, node] : nodes) AddHeld(node.object, held);
  const std::vector<Ipv4Cidr> free = FreeNodeCidrs(ranges_, held, without.size());
  for (size_t i = 0; i < without.size(); ++i) {
    const StoredObject& node = *without[i];
    if (i < free.size()) {
      const std::string cidr = free[i].ToString();
      json updated = node.object;
      updated["spec"]["podCIDR"] = cidr;
      updated["spec"]["podCIDRs"] = json::array({cidr});
      writer.Add(WriteOp{.op = WriteOp::Kind::kUpdate, .key = node.key, .object = std::move(updated),
                         .expected_revision = node.revision},
                 fmt::format("give node {} the pod range {}", node.key.name, cidr));
      continue;
    }
    // 3. None left: tell the Node (once while it waits), as Kubernetes does.
    const std::string uid = StringAt(node.object, {"metadata", "uid"});
    still_waiting.insert(uid);
    if (warned_.count(uid)) continue;
    const std::string message = fmt::format(
        "Node {} status is now: CIDRNotAvailable: all {} /{} pod ranges of the cluster range {} are held by other "
        "nodes; widen --cluster-cidr, raise --node-cidr-mask-size (smaller ranges, more of them) or delete a node",
        node.key.name, ranges_.count(), ranges_.node_prefix, ranges_.cluster.ToString());
    spdlog::warn("{}", message);
    events.Record(writer, node, EventRecorder::Type::kWarning, "CIDRNotAvailable", message, now);
  }
  warned_ = std::move(still_waiting);
}

}  // namespace tessera
