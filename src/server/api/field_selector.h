// FieldSelector: Kubernetes' fieldSelector on lists and watches
// ("spec.nodeName=node-1,status.phase!=Succeeded"), as kubelets use it to watch
// only the Pods bound to their node.
//
// Supported fields, as for Kubernetes' Pods: metadata.name, metadata.namespace,
// spec.nodeName, status.phase; and as for its Events: involvedObject.{apiVersion,
// kind,name,namespace,uid}, reason, reportingComponent, source, type. Operators
// =, == and !=. Any other field is an error that lists the supported ones.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tessera {

class FieldSelector {
 public:
  static Result<FieldSelector> Parse(std::string_view text);
  bool Matches(const nlohmann::json& object) const;
  bool empty() const { return terms_.empty(); }

 private:
  struct Term {
    std::string field;  // JSON pointer, e.g. "/spec/nodeName"
    std::string value;
    bool equals = true;
  };
  std::vector<Term> terms_;
};

}  // namespace tessera
