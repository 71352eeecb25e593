#include "server/api/template_render.h"

#include <fmt/format.h>

#include "api/manifest.h"
#include "api/names.h"
#include "api/templates.h"
#include "api/validation.h"
#include "server/api/api_errors.h"

namespace tessera {

using nlohmann::json;

HttpResponse AnswerTemplateRender(Store& store, const RequestInfo& r, const HttpRequest& http) {
  if (http.method != "POST") {
    return StatusResponse(405, "MethodNotAllowed", "a template is rendered with POST (a tessera.dev/v1 TemplateRender)");
  }
  auto parsed = ParseSingleObject(http.body);
  if (!parsed) return StatusResponse(400, "BadRequest", parsed.error().message());
  if (Status v = ValidateTemplateRender(*parsed); !v.ok()) return ErrorResponse(v);
  json body = std::move(*parsed);
  const json& spec = body["spec"];
  const std::string name = spec.value("name", ""), ns = spec.value("namespace", "");
  if (Status v = ValidateName(NameRule::kDns1123Label, ns); !v.ok()) {
    return StatusResponse(422, "Invalid", fmt::format("spec.namespace: {}", v.message()));
  }
  const KindInfo& kind = *FindKindByStoreKey("tessera.dev/Template");
  auto tmpl = store.Get(ObjectKey{"tessera.dev/Template", "", r.name});
  if (!tmpl) return ObjectErrorResponse(tmpl.error(), kind, r.name);
  TemplateRenderInput input{.name = name, .ns = ns};
  if (auto p = spec.find("parameters"); p != spec.end() && p->is_object()) {
    for (const auto& [k, v] : p->items()) input.parameters[k] = v;
  }
  auto rendered = RenderTemplate(tmpl->object, input);
  if (!rendered) return StatusResponse(422, "Invalid", rendered.error().message(), ObjectDetails(kind, r.name));
  body["apiVersion"] = "tessera.dev/v1";
  body["kind"] = "TemplateRender";
  body["status"] = {{"object", std::move(*rendered)}};
  HttpResponse out;
  out.body = body.dump();
  return out;
}

}  // namespace tessera
