#include "domain/labels.h"

#include <algorithm>

namespace tessera {

Labels::Labels(std::initializer_list<std::pair<std::string, std::string>> kv) {
  for (const auto& [k, v] : kv) Set(k, v);
}

void Labels::Set(std::string key, std::string value) {
  auto it = std::lower_bound(kv_.begin(), kv_.end(), key,
                             [](const auto& e, const std::string& k) { return e.first < k; });
  if (it != kv_.end() && it->first == key) {
    it->second = std::move(value);
  } else {
    kv_.insert(it, {std::move(key), std::move(value)});
  }
}

const std::string* Labels::Find(const std::string& key) const {
  auto it = std::lower_bound(kv_.begin(), kv_.end(), key,
                             [](const auto& e, const std::string& k) { return e.first < k; });
  return (it != kv_.end() && it->first == key) ? &it->second : nullptr;
}

bool Labels::Matches(const Labels& selector) const {
  for (const auto& [k, v] : selector.kv_) {
    const std::string* have = Find(k);
    if (have == nullptr || *have != v) return false;
  }
  return true;
}

bool Toleration::Tolerates(const Taint& taint) const {
  if (effect.has_value() && *effect != taint.effect) return false;
  if (key.empty()) return op == Operator::kExists;
  if (key != taint.key) return false;
  return op == Operator::kExists || value == taint.value;
}

bool ToleratesAll(const std::vector<Taint>& taints, const std::vector<Toleration>& tolerations) {
  for (const Taint& t : taints) {
    if (t.effect == TaintEffect::kPreferNoSchedule) continue;
    bool ok = std::any_of(tolerations.begin(), tolerations.end(),
                          [&](const Toleration& tol) { return tol.Tolerates(t); });
    if (!ok) return false;
  }
  return true;
}

}  // namespace tessera
