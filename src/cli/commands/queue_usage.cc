#include "cli/commands/queue_usage.h"

#include <algorithm>

#include "api/object_fields.h"

namespace tessera {
namespace {

using nlohmann::json;

int ResourceRank(const std::string& name) {
  if (name == "nvidia.com/gpu") return 0;
  if (name == "cpu") return 1;
  if (name == "memory") return 2;
  return 3;
}

// The usage entry for (flavor, resource) in status.flavorsUsage (or flavorsReservation).
const json* UsageOf(const json& cq, const std::string& flavor, const std::string& resource) {
  for (const char* field : {"status.flavorsUsage", "status.flavorsReservation"}) {
    const json* flavors = Find(cq, field);
    if (!flavors || !flavors->is_array()) continue;
    for (const json& f : *flavors) {
      if (TextAt(f, "name") != flavor) continue;
      const json* resources = Child(&f, "resources");
      if (!resources || !resources->is_array()) return nullptr;
      for (const json& r : *resources) {
        if (TextAt(r, "name") == resource) return &r;
      }
      return nullptr;
    }
  }
  return nullptr;
}

std::string Amount(const std::string& resource, const json* v, const char* fallback) {
  return v ? DisplayQuantity(resource, *v) : fallback;
}

}  // namespace

std::vector<QueueUsageRow> QueueUsage(const json& cq) {
  std::vector<QueueUsageRow> rows;
  const json* groups = Find(cq, "spec.resourceGroups");
  if (!groups || !groups->is_array()) return rows;
  for (const json& group : *groups) {
    const json* flavors = Child(&group, "flavors");
    if (!flavors || !flavors->is_array()) continue;
    for (const json& flavor : *flavors) {
      const std::string flavor_name = TextAt(flavor, "name");
      const json* resources = Child(&flavor, "resources");
      if (!resources || !resources->is_array()) continue;
      std::vector<const json*> ordered;
      for (const json& r : *resources) ordered.push_back(&r);
      std::stable_sort(ordered.begin(), ordered.end(), [](const json* a, const json* b) {
        return ResourceRank(TextAt(*a, "name")) < ResourceRank(TextAt(*b, "name"));
      });
      for (const json* r : ordered) {
        const std::string resource = TextAt(*r, "name");
        const json* usage = UsageOf(cq, flavor_name, resource);
        std::string reserved = "0";
        if (const json* lending = Child(r, "lendingLimit")) {
          const json* nominal = Child(r, "nominalQuota");
          const int64_t n = nominal ? QuantityValue(resource, *nominal) : 0;
          reserved = FormatQuantityValue(resource, std::max<int64_t>(0, n - std::min(n, QuantityValue(resource, *lending))));
        }
        rows.push_back(QueueUsageRow{
            .flavor = flavor_name,
            .resource = resource,
            .nominal = Amount(resource, Child(r, "nominalQuota"), "0"),
            .borrowing_limit = Amount(resource, Child(r, "borrowingLimit"), ""),
            .reserved = std::move(reserved),
            .used = Amount(resource, Child(usage, "total"), "0"),
            .borrowed = Amount(resource, Child(usage, "borrowed"), "0"),
        });
      }
    }
  }
  return rows;
}

}  // namespace tessera
