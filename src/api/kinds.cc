#include "api/kinds.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "api/kind_definition.h"
#include "api/kinds/groups.h"

namespace tessera {
namespace {

// The registry: the groups' definitions in lookup-priority order (built-in
// groups first: "jobs" is batch/v1's before Volcano's), and a copy of their
// KindInfos side by side, contiguous for AllKinds(). kinds[i] is definitions[i].info.
struct KindTable {
  std::vector<KindDefinition> definitions;
  std::vector<KindInfo> kinds;
};

const KindTable& TheRegistry() {
  static const KindTable registry = [] {
    KindTable r;
    for (auto group : {CoreKinds, BatchKinds, SchedulingKinds, RbacKinds, AuthorizationKinds, NetworkingKinds,
                       DiscoveryKinds, CoordinationKinds, KueueKinds, VolcanoKinds, TesseraKinds,
                       TesseraTrainingKinds, TesseraPipelineKinds, TesseraSweepKinds, TesseraNotebookKinds,
                       TesseraTemplateKinds, TesseraInferenceKinds}) {
      for (KindDefinition& d : group()) r.definitions.push_back(std::move(d));
    }
    r.kinds.reserve(r.definitions.size());
    for (const KindDefinition& d : r.definitions) r.kinds.push_back(d.info);
    return r;
  }();
  return registry;
}

const std::vector<KindInfo>& Registry() { return TheRegistry().kinds; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool AnswersTo(const KindInfo& k, std::string_view name) {
  if (EqualsIgnoreCase(name, k.plural) || EqualsIgnoreCase(name, k.singular) ||
      EqualsIgnoreCase(name, k.kind)) {
    return true;
  }
  return std::any_of(k.short_names.begin(), k.short_names.end(),
                     [&](std::string_view s) { return EqualsIgnoreCase(name, s); });
}

}  // namespace

std::span<const KindInfo> AllKinds() { return Registry(); }

std::span<const KindDefinition> AllDefinitions() { return TheRegistry().definitions; }

const KindDefinition* FindDefinition(const KindInfo& kind) {
  const KindTable& r = TheRegistry();
  const KindInfo* first = r.kinds.data();
  if (&kind >= first && &kind < first + r.kinds.size()) return &r.definitions[&kind - first];
  for (const KindDefinition& d : r.definitions) {
    if (d.info.store_key == kind.store_key) return &d;
  }
  return nullptr;
}

const KindInfo* FindKindByApiVersion(std::string_view api_version, std::string_view kind) {
  for (const KindInfo& k : Registry()) {
    if (k.api_version == api_version && k.kind == kind) return &k;
  }
  return nullptr;
}

const KindInfo* FindKindByResource(std::string_view group, std::string_view version,
                                   std::string_view plural) {
  for (const KindInfo& k : Registry()) {
    if (k.group == group && k.version == version && k.plural == plural) return &k;
  }
  return nullptr;
}

const KindInfo* FindKindByGroupResource(std::string_view group, std::string_view plural) {
  for (const KindInfo& k : Registry()) {
    if (k.group == group && k.plural == plural) return &k;
  }
  return nullptr;
}

const KindInfo* FindKindByCliName(std::string_view name) {
  // Steps: 1. an unqualified name matches the first kind (priority order) that
  // answers to it; 2. "name.rest" matches a kind answering to `name` whose group
  // is `rest`, or whose "version.group" is `rest`. A dot never occurs in a
  // resource name itself, so the first dot separates name and group.
  if (name.empty()) return nullptr;
  size_t dot = name.find('.');
  if (dot == std::string_view::npos) {
    for (const KindInfo& k : Registry()) {
      if (AnswersTo(k, name)) return &k;
    }
    return nullptr;
  }
  std::string_view resource = name.substr(0, dot);
  std::string_view rest = name.substr(dot + 1);
  for (const KindInfo& k : Registry()) {
    if (!AnswersTo(k, resource)) continue;
    if (EqualsIgnoreCase(rest, k.group)) return &k;
    size_t vdot = rest.find('.');
    if (vdot != std::string_view::npos && EqualsIgnoreCase(rest.substr(0, vdot), k.version) &&
        EqualsIgnoreCase(rest.substr(vdot + 1), k.group)) {
      return &k;
    }
  }
  return nullptr;
}

const KindInfo* FindKindByStoreKey(std::string_view store_key) {
  for (const KindInfo& k : Registry()) {
    if (k.store_key == store_key) return &k;
  }
  return nullptr;
}

std::vector<std::string_view> ApiVersionsServingKind(std::string_view kind) {
  std::vector<std::string_view> out;
  for (const KindInfo& k : Registry()) {
    if (k.kind == kind) out.push_back(k.api_version);
  }
  return out;
}

}  // namespace tessera
