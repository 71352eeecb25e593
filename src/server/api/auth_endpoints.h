// The API's answers about identities and permissions, as kube-apiserver's:
//
//   POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews   may I do X? (kubectl auth can-i)
//   POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews    what may I do in NS? (can-i --list)
//   POST /apis/authentication.k8s.io/v1/selfsubjectreviews        who am I? (kubectl auth whoami)
//   POST /api/v1/namespaces/NS/serviceaccounts/NAME/token         TokenRequest: a signed, expiring JWT
//   POST /api/v1/nodes/NAME/token                                 a node's agent credential (Tessera's)
//   GET  /.well-known/openid-configuration, /openid/v1/jwks       the service account issuer's discovery
//
// Each takes what it needs and answers an HttpResponse (201 with the review or
// the TokenRequest, or a Status); none writes to the store.
//
// Thread-safety: pure functions of their arguments (the store is read).
#pragma once

#include <string_view>

#include "auth/service_account_tokens.h"
#include "auth/user_info.h"
#include "common/time.h"
#include "http/http_server.h"
#include "server/api/authorization.h"
#include "server/api/request_info.h"
#include "store/store.h"

namespace tessera {

// For a node's request allowed only for what is bound to it (NodeDecision::
// kAllowIfBound): whether `r` names a pod bound to `node`, the ServiceAccount
// of such a pod (a token), or a Secret, ConfigMap or PersistentVolumeClaim
// such a pod names (PodSpecNames).
bool BoundToNode(Store& store, const RequestInfo& r, std::string_view node);

// Whether a pod's spec names the object `name` of `resource`: secrets in
// imagePullSecrets, env valueFrom secretKeyRef, envFrom secretRef or a secret
// volume; configmaps in configMapKeyRef, configMapRef or a configMap volume;
// persistentvolumeclaims in a persistentVolumeClaim volume.
bool PodSpecNames(const nlohmann::json& spec, std::string_view resource, std::string_view name);

HttpResponse SelfSubjectAccessReview(const RequestAuthorizer& authorizer, Store& store, const UserInfo& user,
                                     const HttpRequest& request, std::string_view now);
HttpResponse SelfSubjectRulesReview(const RequestAuthorizer& authorizer, const UserInfo& user,
                                    const HttpRequest& request, std::string_view now);
HttpResponse SelfSubjectReview(const UserInfo& user, const HttpRequest& request, std::string_view now);

// `node`: when a node's agent asks (it may only for a pod bound to it, bound to
// that pod and for that pod's ServiceAccount); empty otherwise.
HttpResponse AnswerServiceAccountToken(Store& store, const TokenIssuer& issuer, const RequestInfo& request,
                                        const HttpRequest& http, std::string_view node, Timestamp now);
// A credential for node request.name's agent; one year unless the
// TokenRequest's spec.expirationSeconds says otherwise.
HttpResponse AnswerNodeToken(const TokenIssuer& issuer, const RequestInfo& request, const HttpRequest& http,
                              Timestamp now);

HttpResponse OpenIdConfiguration(const TokenIssuer& issuer, std::string_view server_url);
HttpResponse OpenIdKeys(const TokenIssuer& issuer);

}  // namespace tessera
