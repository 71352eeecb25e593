// Kubernetes label selectors as `?labelSelector=` and `-l` take them:
//   env=prod, tier!=cache, zone in (a,b), team notin (x), gpu, !legacy
// (`==` is the same as `=`). An empty selector matches everything.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tessera {

class LabelSelector {
 public:
  static Result<LabelSelector> Parse(std::string_view text);

  bool Matches(const std::map<std::string, std::string>& labels) const;
  // Matches the metadata.labels of an API object (missing or malformed: no labels).
  bool MatchesObject(const nlohmann::json& object) const;
  bool empty() const { return requirements_.empty(); }

 private:
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kNotExists };
  struct Requirement {
    std::string key;
    Op op;
    std::vector<std::string> values;
  };
  std::vector<Requirement> requirements_;
};

}  // namespace tessera
