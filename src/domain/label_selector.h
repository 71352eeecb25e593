// LabelSelectorTerms: a metav1.LabelSelector (matchLabels and
// matchExpressions), matched against an object's labels as Kubernetes
// matches it. One type for every selector Tessera reads: RBAC's
// aggregationRule, approval policies' namespaceSelector, NetworkPolicy's
// podSelector and namespaceSelector.
//
// Semantics (k8s.io/apimachinery/pkg/apis/meta/v1 LabelSelectorAsSelector):
//   - every matchLabels pair and every expression must hold;
//   - In: the key is present with one of the values; NotIn: the key is absent
//     or its value is none of them; Exists / DoesNotExist: presence only;
//   - an empty selector ({}) matches every object. (A *missing* selector means
//     something else in each API, e.g. "no peer of this kind"; callers hold it
//     as std::optional.)
//
// Thread-safety: value types and pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"

namespace tessera {

// One requirement of a metav1.LabelSelector's matchExpressions.
struct LabelRequirement {
  enum class Op { kIn, kNotIn, kExists, kDoesNotExist };
  std::string key;
  Op op = Op::kIn;
  std::vector<std::string> values;
  friend bool operator==(const LabelRequirement&, const LabelRequirement&) = default;
};

// metav1.LabelSelector: every matchLabels pair and every expression must hold;
// an empty selector matches every object.
struct LabelSelectorTerms {
  std::map<std::string, std::string> match_labels;
  std::vector<LabelRequirement> match_expressions;
  bool Matches(const std::map<std::string, std::string>& labels) const;
  bool empty() const { return match_labels.empty() && match_expressions.empty(); }
  friend bool operator==(const LabelSelectorTerms&, const LabelSelectorTerms&) = default;
};

// A metav1.LabelSelector as JSON; InvalidArgument naming the field under `path`
// ("spec.podSelector.matchExpressions[0].operator: must be In, NotIn, ...").
// In and NotIn need values, Exists and DoesNotExist must have none.
Result<LabelSelectorTerms> LabelSelectorTermsFromJson(const nlohmann::json& object, std::string_view path);

}  // namespace tessera
