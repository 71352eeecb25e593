// Templates (tessera.dev/v1 Template, api/kinds/tessera_template.cc): a
// catalogue entry that makes one object (a Notebook, an InferenceService, a
// TrainingJob, a Job...) from its spec.object and the knobs, spec.parameters,
// that a user may set. The server renders them (POST
// /apis/tessera.dev/v1/templates/NAME/render, a TemplateRender answered, never
// stored); the user then creates the rendered object with their own rights, so
// a template grants nothing RBAC would not. `tessera run TEMPLATE NAME --set
// k=v` and the portal both go that way.
//
// A parameter: {name, path, type, default, enum, minimum, maximum, required,
// description}. `path` is where its value goes in the object, dotted with list
// indices ("spec.gpu", "spec.template.spec.containers[0].image",
// "metadata.labels.team"; a dot in a key is escaped, as kubectl's JSONPath
// does: "spec.resources.limits.nvidia\\.com/gpu"); `type` is string (the default), quantity ("0.25",
// "16Gi"), integer, boolean or command (a list of strings: the program and its
// arguments). The value is the user's, else the default, else the object's own
// value at the path stays.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tessera {

inline constexpr const char* kTemplateLabel = "tessera.dev/template";

struct TemplateRenderInput {
  std::string name;       // the object's metadata.name
  std::string ns;         // its metadata.namespace
  std::map<std::string, nlohmann::json> parameters;  // parameter name -> value (strings are converted by type)
};

// The object `tmpl` (a Template) makes for `input`, validated as its kind
// validates a create; InvalidArgument naming the parameter, or the object's
// field, to fix.
Result<nlohmann::json> RenderTemplate(const nlohmann::json& tmpl, const TemplateRenderInput& input);

// Sets `value` at `path` ("spec.a.b[0].c") in `object`, making the objects and
// lists on the way; InvalidArgument when the path is malformed or crosses a
// value of another type.
Status SetAtPath(nlohmann::json& object, const std::string& path, nlohmann::json value);

}  // namespace tessera
