// RequestInfo: what an HTTP request asks, in the terms authorization, auditing
// and the handlers share (kube-apiserver's RequestInfoFactory):
//
//   /api/v1/{plural}[/{name}[/{subresource}]]
//   /api/v1/namespaces/{ns}/{plural}[/{name}[/{subresource}]]
//   /apis/{group}/{version}/... the same shapes
//   .../{plural}/{name}/proxy/{path...}: the proxy subresource, whose path
//     after "proxy" is the backend's (name is as written: NAME:PORT)
//   anything else: a non-resource request (/metrics, /version, /openid/v1/jwks)
//
// The verb is Kubernetes': GET of an object "get", of a collection "list", or
// "watch" with ?watch=true; POST "create"; PUT "update"; PATCH "patch"; DELETE
// of an object "delete", of a collection "deletecollection". A non-resource
// request's verb is the lower-case method. As in Kubernetes, a request about a
// Namespace object itself (/api/v1/namespaces/team-a) carries that namespace as
// its namespace, so that a RoleBinding in team-a can grant reading it.
//
// Thread-safety: a value type.
#pragma once

#include <string>

#include "api/kinds.h"
#include "auth/rbac.h"
#include "common/result.h"
#include "http/http_server.h"
#include "store/store.h"

namespace tessera {

struct RequestInfo {
  bool resource_request = false;
  std::string verb;
  std::string path;
  // Resource requests only:
  const KindInfo* kind = nullptr;  // nullptr: the path names a resource this server does not serve
  std::string api_group;
  std::string api_version;
  std::string resource;  // the plural, as written in the path
  std::string ns;
  std::string name;
  std::string subresource;
  bool namespace_in_path = false;  // the path had /namespaces/NS/ before the resource

  // The store key of the object named (its namespace only for a namespaced kind).
  // REQUIRES: kind != nullptr.
  ObjectKey Key() const { return ObjectKey{std::string(kind->store_key), kind->namespaced ? ns : "", name}; }

  // The view authorization takes (RbacAttributes points into this object).
  RbacAttributes Attributes() const;
  bool mutating() const {
    return verb == "create" || verb == "update" || verb == "patch" || verb == "delete" || verb == "deletecollection";
  }
};

// Parses the method, path and query. A path under /api or /apis that does not
// have one of the shapes above (too short, or too long) is a resource request
// whose `resource` is empty, which the handler answers with 404.
RequestInfo ParseRequestInfo(const HttpRequest& request);

}  // namespace tessera
