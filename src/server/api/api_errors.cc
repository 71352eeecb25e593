#include "server/api/api_errors.h"

#include <fmt/format.h>

namespace tessera {

HttpResponse StatusResponse(int http_code, std::string_view reason, std::string_view message,
                            const nlohmann::json& details) {
  nlohmann::json status{{"kind", "Status"},
                        {"apiVersion", "v1"},
                        {"metadata", nlohmann::json::object()},
                        {"status", "Failure"},
                        {"message", message},
                        {"reason", reason},
                        {"code", http_code}};
  if (details.is_object() && !details.empty()) status["details"] = details;
  HttpResponse r;
  r.status = http_code;
  r.body = status.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

namespace {

// Kubernetes' CauseType for a field error, from the start of its message
// (field.ErrorType's words: "Required value", "Unsupported value: ...", and
// the schemas' own "required").
std::string_view CauseReason(std::string_view message) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {"Required value", "FieldValueRequired"},  {"Unsupported value", "FieldValueNotSupported"},
      {"Duplicate value", "FieldValueDuplicate"}, {"Forbidden", "FieldValueForbidden"},
      {"Too long", "FieldValueTooLong"},          {"Too many", "FieldValueTooMany"},
      {"Not found", "FieldValueNotFound"},       {"required", "FieldValueRequired"},
  };
  for (const auto& [words, type] : kTypes) {
    if (message.starts_with(words)) return type;
  }
  return "FieldValueInvalid";
}

}  // namespace

nlohmann::json CausesJson(const Status& s) {
  nlohmann::json causes = nlohmann::json::array();
  for (const FieldCause& c : s.causes()) {
    causes.push_back({{"reason", CauseReason(c.message)}, {"message", c.message}, {"field", c.field}});
  }
  return causes;
}

HttpResponse ReviewAnswer(nlohmann::json review, std::string_view now, nlohmann::json status) {
  review["metadata"] = {{"creationTimestamp", now}};
  review["status"] = std::move(status);
  HttpResponse r;
  r.status = 201;
  r.body = review.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

HttpResponse ErrorResponse(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      if (!s.causes().empty()) return StatusResponse(422, "Invalid", s.message(), {{"causes", CausesJson(s)}});
      return StatusResponse(422, "Invalid", s.message());
    case StatusCode::kNotFound: return StatusResponse(404, "NotFound", s.message());
    case StatusCode::kAlreadyExists: return StatusResponse(409, "AlreadyExists", s.message());
    case StatusCode::kConflict: return StatusResponse(409, "Conflict", s.message());
    case StatusCode::kGone: return StatusResponse(410, "Expired", s.message());
    case StatusCode::kUnauthenticated: return StatusResponse(401, "Unauthorized", s.message());
    case StatusCode::kPermissionDenied: return StatusResponse(403, "Forbidden", s.message());
    case StatusCode::kUnavailable: return StatusResponse(503, "ServiceUnavailable", s.message());
    default: return StatusResponse(500, "InternalError", s.message());
  }
}

HttpResponse InvalidObjectResponse(const KindInfo& kind, std::string_view name, const Status& status) {
  if (status.code() != StatusCode::kInvalidArgument) return ErrorResponse(status);
  const std::string qualified_kind =
      kind.group.empty() ? std::string(kind.kind) : fmt::format("{}.{}", kind.kind, kind.group);
  nlohmann::json details{{"name", name}, {"kind", kind.kind}};
  if (!kind.group.empty()) details["group"] = kind.group;
  if (!status.causes().empty()) details["causes"] = CausesJson(status);
  return StatusResponse(422, "Invalid", fmt::format("{} \"{}\" is invalid: {}", qualified_kind, name, status.message()),
                        details);
}

std::string QualifiedResource(const KindInfo& kind) {
  return kind.group.empty() ? std::string(kind.plural) : fmt::format("{}.{}", kind.plural, kind.group);
}

nlohmann::json ObjectDetails(const KindInfo& kind, std::string_view name) {
  nlohmann::json details{{"name", name}, {"kind", kind.plural}};
  if (!kind.group.empty()) details["group"] = kind.group;
  return details;
}

// Kubernetes' words for the errors about one object (apimachinery's
// NewNotFound, NewAlreadyExists, NewConflict), so that scripts and users see
// what kubectl shows: `pods "foo" not found`.
HttpResponse ObjectNotFound(const KindInfo& kind, std::string_view name) {
  return StatusResponse(404, "NotFound", fmt::format("{} \"{}\" not found", QualifiedResource(kind), name),
                        ObjectDetails(kind, name));
}

HttpResponse ObjectAlreadyExists(const KindInfo& kind, std::string_view name) {
  return StatusResponse(409, "AlreadyExists", fmt::format("{} \"{}\" already exists", QualifiedResource(kind), name),
                        ObjectDetails(kind, name));
}

HttpResponse ObjectConflict(const KindInfo& kind, std::string_view name, std::string_view why) {
  return StatusResponse(409, "Conflict",
                        fmt::format("Operation cannot be fulfilled on {} \"{}\": {}", QualifiedResource(kind), name,
                                    why),
                        ObjectDetails(kind, name));
}

// A store error about one object: NotFound, AlreadyExists and Conflict in
// Kubernetes' words; anything else as it is.
HttpResponse ObjectErrorResponse(const Status& s, const KindInfo& kind, std::string_view name) {
  switch (s.code()) {
    case StatusCode::kNotFound: return ObjectNotFound(kind, name);
    case StatusCode::kAlreadyExists: return ObjectAlreadyExists(kind, name);
    case StatusCode::kConflict: return ObjectConflict(kind, name);
    default: return ErrorResponse(s);
  }
}

}  // namespace tessera
