#include "server/api/scheduling_review.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "api/kinds.h"
#include "api/manifest.h"
#include "api/validation.h"
#include "server/api/api_errors.h"

namespace tessera {

using nlohmann::json;

namespace {

// `s` about spec.object's own fields, as the review's: "spec.object." before
// each field, "spec.object: " before the message.
Status UnderObject(const Status& s) {
  std::vector<FieldCause> causes;
  for (const FieldCause& c : s.causes()) {
    causes.push_back(FieldCause{.field = c.field.empty() ? "spec.object" : "spec.object." + c.field,
                                .message = c.message});
  }
  return Status::Invalid(fmt::format("spec.object: {}", s.message()), std::move(causes));
}

HttpResponse Invalid(std::string field, std::string message) {
  return ErrorResponse(Status::Invalid(fmt::format("{}: {}", field, message),
                                       {FieldCause{.field = std::move(field), .message = std::move(message)}}));
}

}  // namespace

HttpResponse AnswerSchedulingReview(const Forecaster& forecaster, const RequestInfo& request, const HttpRequest& http,
                                    std::string_view now) {
  auto parsed = ParseSingleObject(http.body);
  if (!parsed) return StatusResponse(400, "BadRequest", parsed.error().message());
  json review = std::move(*parsed);
  if (Status v = ValidateObject(*request.kind, review); !v.ok()) return ErrorResponse(v);
  json object = review["spec"]["object"];
  const std::string api_version = object.value("apiVersion", "");
  const std::string kind = object.value("kind", "");
  const KindInfo* object_kind = FindKindByApiVersion(api_version, kind);
  if (object_kind == nullptr) {
    return Invalid("spec.object.kind",
                   fmt::format("Unsupported value: \"{}\" in \"{}\": name a workload kind the server serves (a Job, "
                               "Notebook, TrainingJob, InferenceService or Workload)",
                               kind, api_version));
  }
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = json::object();
  json& meta = object["metadata"];
  const std::string ns = meta.value("namespace", "");
  if (!ns.empty() && ns != request.ns) {
    return Invalid("spec.object.metadata.namespace",
                   fmt::format("Invalid value: \"{}\": the review is for namespace {}; leave it out or make them match",
                               ns, request.ns));
  }
  meta["namespace"] = request.ns;
  // Not yet named (a form being filled, generateName): a name for the forecast only.
  if (meta.value("name", "").empty()) meta["name"] = meta.value("generateName", "") + "forecast";
  if (Status v = ValidateObject(*object_kind, object); !v.ok()) return ErrorResponse(UnderObject(v));
  if (!forecaster) {
    return StatusResponse(503, "ServiceUnavailable", "this server runs no scheduler: ask the one that does");
  }
  auto status = forecaster(std::move(object));
  if (!status) {
    return ErrorResponse(status.error().code() == StatusCode::kInvalidArgument ? UnderObject(status.error())
                                                                              : status.error());
  }
  return ReviewAnswer(std::move(review), now, std::move(*status));
}

}  // namespace tessera
