// The media types an Accept header lists, with their parameters, as kubectl
// sends them to ask for a Table (`application/json;as=Table;v=v1;g=meta.k8s.io`)
// or aggregated discovery (`...;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`).
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct MediaType {
  std::string type;                           // "application/json"
  std::map<std::string, std::string> params;  // {"as": "Table", "v": "v1", "g": "meta.k8s.io"}
};

// Each comma-separated entry of `accept`, spaces dropped, in order.
std::vector<MediaType> AcceptedMediaTypes(std::string_view accept);

}  // namespace tessera
