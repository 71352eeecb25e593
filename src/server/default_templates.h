// The catalogue the server ships (tessera.dev/v1 Template, api/templates.h):
// created at start when missing, as the default PriorityClasses and queues are,
// labelled tessera.dev/default=true. An admin edits them or adds others
// (`tessera apply -f template.yaml`); one that is deleted comes back at the
// next start.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

std::vector<nlohmann::json> DefaultTemplates();

}  // namespace tessera
