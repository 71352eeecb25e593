// kubectl sends a few requests in Kubernetes' protobuf encoding, with no JSON
// fallback (`kubectl auth can-i` and `auth whoami`). This decodes those kinds'
// bodies into the JSON objects the handlers read: the envelope (the magic
// "k8s\0", then runtime.Unknown: typeMeta and raw bytes) and, in the raw bytes,
// authorization.k8s.io/v1 SelfSubjectAccessReview and SelfSubjectRulesReview,
// and authentication.k8s.io/v1 SelfSubjectReview, by their field numbers in
// k8s.io/api's generated.proto. Any other kind is InvalidArgument (the handler
// answers 415: send JSON).
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tessera {

inline constexpr std::string_view kProtobufMediaType = "application/vnd.kubernetes.protobuf";

Result<nlohmann::json> ProtobufBodyToJson(std::string_view body);

}  // namespace tessera
