#include "server/api/pod_security_admission.h"

#include <fmt/format.h>

#include "auth/pod_security.h"
#include "server/api/api_errors.h"
#include "server/api/authorization.h"
#include "server/object_json.h"

namespace tessera {

using nlohmann::json;

std::optional<HttpResponse> PodSecurityAdmission(Store& store, const KindInfo& kind, const json& object,
                                                 const json* stored) {
  if (kind.store_key == "/Namespace") {
    // Its level must be one Kubernetes knows (who may set it is RBAC's: update on namespaces).
    if (Status s = ValidatePodSecurityLabels(object); !s.ok()) return ErrorResponse(s);
    return std::nullopt;
  }
  if (!kind.namespaced) return std::nullopt;
  const auto specs = PodSpecsOf(object);
  if (specs.empty()) return std::nullopt;
  if (stored != nullptr && PodSpecsOf(*stored).size() == specs.size()) {
    bool changed = false;
    const auto before = PodSpecsOf(*stored);
    for (size_t i = 0; i < specs.size(); ++i) changed = changed || *before[i].second != *specs[i].second;
    if (!changed) return std::nullopt;
  }
  const std::string ns(StringAt(object, {"metadata", "namespace"}));
  auto namespace_object = store.Get(ObjectKey{"/Namespace", "", ns});
  // A missing namespace is refused later, where it is written.
  const std::map<std::string, std::string> labels =
      namespace_object ? LabelsOf(namespace_object->object) : std::map<std::string, std::string>{};
  const std::string name(StringAt(object, {"metadata", "name"}));
  for (const auto& [path, spec] : specs) {
    Status s = CheckPodSecurity(*spec, labels);
    if (s.ok()) continue;
    const std::string message = kind.store_key == "/Pod" ? s.message() : fmt::format("{} {}", path, s.message());
    return ForbiddenObjectResponse(kind, name, message);
  }
  return std::nullopt;
}

}  // namespace tessera
