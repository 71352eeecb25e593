// Errors as the API answers them: Kubernetes Status objects, worded as
// kube-apiserver words them (apimachinery's NewNotFound, NewAlreadyExists,
// NewConflict, NewForbidden), with Status.details (name, group, kind: the
// resource), so that the CLI and kubectl print what they print for Kubernetes:
// `Error from server (NotFound): pods "foo" not found`.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/kinds.h"
#include "common/status.h"
#include "http/http_server.h"

namespace tessera {

// An error as an HTTP response carrying a Kubernetes Status object; `details`
// (Status.details: name, group, kind) only when it is a non-empty object.
HttpResponse StatusResponse(int http_code, std::string_view reason, std::string_view message,
                            const nlohmann::json& details = nlohmann::json());
// The one mapping from a Status code to an HTTP code and a Status reason; an
// Invalid one's fields go into details.causes, as kube-apiserver's 422s.
HttpResponse ErrorResponse(const Status& status);
// details.causes for `status`'s fields: [{reason, message, field}].
nlohmann::json CausesJson(const Status& status);

// A review answered, never stored (SchedulingReview, SimulationReview): 201 with
// the review as sent, metadata.creationTimestamp `now` and `status`.
HttpResponse ReviewAnswer(nlohmann::json review, std::string_view now, nlohmann::json status);

// How Kubernetes names a resource in messages: plural, then group when there is
// one ("pods", "jobs.batch", "clusterqueues.kueue.x-k8s.io").
std::string QualifiedResource(const KindInfo& kind);
// Status.details for an error about one object: the name, the group (omitted
// for the core API) and, in `kind`, the resource.
nlohmann::json ObjectDetails(const KindInfo& kind, std::string_view name);

// A refused object (validation), as kube-apiserver's NewInvalid words it:
// 422, `ConfigMap "c" is invalid: data[a]: ...`, details {name, group, kind: the
// Kind, causes}, so that kubectl prints `The ConfigMap "c" is invalid: ...`.
// A status that is not InvalidArgument goes through ErrorResponse.
HttpResponse InvalidObjectResponse(const KindInfo& kind, std::string_view name, const Status& status);

HttpResponse ObjectNotFound(const KindInfo& kind, std::string_view name);
HttpResponse ObjectAlreadyExists(const KindInfo& kind, std::string_view name);
inline constexpr std::string_view kObjectModified =
    "the object has been modified; please apply your changes to the latest version and try again";
HttpResponse ObjectConflict(const KindInfo& kind, std::string_view name, std::string_view why = kObjectModified);
// A store error about one object: NotFound, AlreadyExists and Conflict in
// Kubernetes' words; anything else through ErrorResponse.
HttpResponse ObjectErrorResponse(const Status& status, const KindInfo& kind, std::string_view name);

}  // namespace tessera
