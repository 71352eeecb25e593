#include "api/defaults.h"

namespace tessera {

void DefaultObject(const KindInfo& kind, nlohmann::json& object) {
  if (kind.store_key != "batch/Job" || !object.is_object()) return;
  auto spec = object.find("spec");
  if (spec == object.end() || !spec->is_object()) return;
  const bool parallelism = spec->contains("parallelism") && !(*spec)["parallelism"].is_null();
  const bool completions = spec->contains("completions") && !(*spec)["completions"].is_null();
  if (!parallelism) (*spec)["parallelism"] = 1;
  if (!parallelism && !completions) (*spec)["completions"] = 1;
}

}  // namespace tessera
