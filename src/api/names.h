// Kubernetes' rules for names, label keys and values (k8s.io/apimachinery's
// validation), shared by manifest validation (api/schema.h) and by the callers
// that get a name outside a manifest (URL paths, CLI arguments).
//
// Messages are Kubernetes' own, so that users find them searchable; they carry
// no field path (the caller knows where the name came from).
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "api/kinds.h"
#include "common/status.h"

namespace tessera {

// What the names of each rule look like, as kube-apiserver says it.
inline constexpr std::string_view kDns1123LabelMessage =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name' or '123-abc'), at most 63 "
    "characters";
inline constexpr std::string_view kDns1123SubdomainMessage =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com'), at most 253 "
    "characters";
inline constexpr std::string_view kDns1035LabelMessage =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123'), at most 63 characters";

bool IsDns1123Label(std::string_view s);      // [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63
bool IsDns1123Subdomain(std::string_view s);  // DNS-1123 labels joined by '.', at most 253

// An object's name under `rule` (kinds.h). OK or InvalidArgument saying what
// is wrong.
Status ValidateName(NameRule rule, std::string_view name);

// Kubernetes' qualified name: [prefix/]name, the prefix a DNS subdomain, the
// name 1 to 63 alphanumerics, '-', '_' or '.' (label and annotation keys,
// finalizers, taint keys).
Status ValidateQualifiedName(std::string_view key);
Status ValidateLabelKey(std::string_view key);      // a qualified name
Status ValidateLabelValue(std::string_view value);  // empty or <= 63 [A-Za-z0-9._-]

}  // namespace tessera
