// Labels, node selectors, taints and tolerations, with Kubernetes' matching rules.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessera {

// A label map kept sorted by key (few entries; a sorted vector beats a map).
class Labels {
 public:
  Labels() = default;
  Labels(std::initializer_list<std::pair<std::string, std::string>> kv);

  void Set(std::string key, std::string value);
  const std::string* Find(const std::string& key) const;
  bool empty() const { return kv_.empty(); }
  const std::vector<std::pair<std::string, std::string>>& items() const { return kv_; }

  // True when every key of `selector` is present here with the same value.
  bool Matches(const Labels& selector) const;

  friend bool operator==(const Labels&, const Labels&) = default;

 private:
  std::vector<std::pair<std::string, std::string>> kv_;
};

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Toleration {
  enum class Operator { kEqual, kExists };
  std::string key;  // empty with kExists tolerates every taint
  Operator op = Operator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // nullopt: every effect
  friend bool operator==(const Toleration&, const Toleration&) = default;

  bool Tolerates(const Taint& taint) const;
};

// True when every NoSchedule/NoExecute taint is tolerated by one of `tolerations`
// (PreferNoSchedule never blocks).
bool ToleratesAll(const std::vector<Taint>& taints, const std::vector<Toleration>& tolerations);

}  // namespace tessera
