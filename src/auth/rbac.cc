// RBAC as kube-apiserver decides it (see rbac.h for the semantics).
//
// The index (RbacIndex::State):
//   - every Role and ClusterRole lives in a RoleSlot keyed by (ns, name), ns ""
//     for a ClusterRole. A slot also exists, empty, while a binding names a
//     role that is not there yet; it holds the role's effective rules
//     (aggregation applied) as an immutable, precompiled RuleSet.
//   - every binding is a BindingRecord holding a shared pointer to the slot of
//     the role it names. Binding records point at slots rather than at the
//     rules themselves so that a role change replaces one pointer (the slot's)
//     instead of re-pointing each of the thousands of bindings to "edit".
//   - users_ and groups_ map a subject key (a user name, a ServiceAccount as its
//     user name "system:serviceaccount:NS:NAME", a group name) to that
//     subject's ClusterRoleBindings and, per namespace, its RoleBindings.
// So Allowed does one hash probe for the user, one per group, and one per
// subject for the namespace, then walks only those bindings' rules. The maps
// are probed with string_views (transparent hashing): a decision allocates
// nothing.
//
// Changes: a Role or a binding change touches its own slot or record and the
// index entries of its subjects. A ClusterRole change recomputes every
// aggregated ClusterRole when the changed role is (or was) selected by an
// aggregationRule, else only its own slot.
#include "auth/rbac.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <unordered_set>
#include <utility>

#include "common/json_fields.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr std::string_view kAll = "*";  // rbacv1.VerbAll, APIGroupAll, ResourceAll, NonResourceAll
constexpr std::string_view kRbacApiGroup = "rbac.authorization.k8s.io";

bool Has(const std::vector<std::string>& values, std::string_view value) {
  for (const std::string& v : values) {
    if (v == value) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Matching a request (evaluation_helpers.go).

// What a rule holds that makes matching cheap: whether each list holds "*".
struct RuleFlags {
  bool all_verbs = false;
  bool all_groups = false;
  bool all_resources = false;
  bool all_urls = false;
};

RuleFlags FlagsOf(const PolicyRule& rule) {
  return RuleFlags{.all_verbs = Has(rule.verbs, kAll),
                   .all_groups = Has(rule.api_groups, kAll),
                   .all_resources = Has(rule.resources, kAll),
                   .all_urls = Has(rule.non_resource_urls, kAll)};
}

// Whether `rule_resource` names the request's resource (sub empty) or its
// subresource: "resource/sub", "*/sub" or "resource/*". Compared in place so
// that no "resource/sub" string is built.
bool ResourceEntryMatches(std::string_view rule_resource, std::string_view resource, std::string_view sub) {
  if (sub.empty()) return rule_resource == resource;
  const size_t n = rule_resource.size();
  // "resource/sub"
  if (n == resource.size() + 1 + sub.size() && rule_resource.starts_with(resource) &&
      rule_resource[resource.size()] == '/' && rule_resource.ends_with(sub)) {
    return true;
  }
  // "*/sub" (and nothing else: a "pods/*" rule grants no subresource, as in Kubernetes)
  return n == sub.size() + 2 && rule_resource.starts_with("*/") && rule_resource.ends_with(sub);
}

bool ResourceMatches(const PolicyRule& rule, const RuleFlags& flags, std::string_view resource, std::string_view sub) {
  if (flags.all_resources) return true;
  for (const std::string& r : rule.resources) {
    if (ResourceEntryMatches(r, resource, sub)) return true;
  }
  return false;
}

// A rule URL matches the path when equal, "*", or "prefix*" with the path
// starting with the prefix (every trailing '*' trimmed, as strings.TrimRight).
bool UrlEntryMatches(std::string_view rule_url, std::string_view path) {
  if (rule_url == path) return true;
  if (!rule_url.ends_with('*')) return false;
  const size_t end = rule_url.find_last_not_of('*');
  const std::string_view prefix = end == std::string_view::npos ? std::string_view() : rule_url.substr(0, end + 1);
  return path.starts_with(prefix);
}

bool NonResourceUrlMatches(const PolicyRule& rule, const RuleFlags& flags, std::string_view path) {
  if (flags.all_urls) return true;
  for (const std::string& u : rule.non_resource_urls) {
    if (UrlEntryMatches(u, path)) return true;
  }
  return false;
}

bool Matches(const PolicyRule& rule, const RuleFlags& flags, const RbacAttributes& a) {
  if (!a.resource_request) {
    return (flags.all_verbs || Has(rule.verbs, a.verb)) && NonResourceUrlMatches(rule, flags, a.path);
  }
  // The API group first: it rejects most rules of a role with one comparison.
  return (flags.all_groups || Has(rule.api_groups, a.api_group)) && (flags.all_verbs || Has(rule.verbs, a.verb)) &&
         ResourceMatches(rule, flags, a.resource, a.subresource) &&
         (rule.resource_names.empty() || Has(rule.resource_names, a.name));
}

// A role's effective rules, precompiled; immutable once built.
struct CompiledRule {
  PolicyRule rule;
  RuleFlags flags;
};

struct RuleSet {
  std::vector<CompiledRule> rules;

  bool Allows(const RbacAttributes& a) const {
    for (const CompiledRule& r : rules) {
      if (Matches(r.rule, r.flags, a)) return true;
    }
    return false;
  }
  std::vector<PolicyRule> Plain() const {
    std::vector<PolicyRule> out;
    out.reserve(rules.size());
    for (const CompiledRule& r : rules) out.push_back(r.rule);
    return out;
  }
};

// ---------------------------------------------------------------------------
// Deduplicating rules (the aggregation controller's ruleExists, RulesFor).

struct PolicyRuleHash {
  size_t operator()(const PolicyRule& rule) const {
    size_t h = 0;
    auto mix = [&h](std::string_view s) {
      h ^= std::hash<std::string_view>{}(s) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);  // boost::hash_combine
    };
    for (const auto* list :
         {&rule.verbs, &rule.api_groups, &rule.resources, &rule.resource_names, &rule.non_resource_urls}) {
      for (const std::string& s : *list) mix(s);
      mix("\x1f");  // separates the lists, so ["a"],[] and [],["a"] differ
    }
    return h;
  }
};

// Appends rules to `out` unless an equal rule is already there.
class RuleCollector {
 public:
  void Add(const PolicyRule& rule) {
    if (seen_.insert(rule).second) out_.push_back(rule);
  }
  std::vector<PolicyRule> Take() { return std::move(out_); }

 private:
  std::unordered_set<PolicyRule, PolicyRuleHash> seen_;
  std::vector<PolicyRule> out_;
};

std::shared_ptr<const RuleSet> Compile(std::span<const PolicyRule> rules) {
  auto set = std::make_shared<RuleSet>();
  set->rules.reserve(rules.size());
  for (const PolicyRule& r : rules) set->rules.push_back(CompiledRule{r, FlagsOf(r)});
  return set;
}

// ---------------------------------------------------------------------------
// Reading JSON, every field type-checked (never operator[] on a const json).

Result<PolicyRule> PolicyRuleFromJson(const json& object, std::string_view path) {
  if (!object.is_object()) return Err(JsonTypeError(path, "an object", object));
  PolicyRule rule;
  ASSIGN_OR_RETURN(rule.verbs, ReadJsonStringList(object, "verbs", path));
  ASSIGN_OR_RETURN(rule.api_groups, ReadJsonStringList(object, "apiGroups", path));
  ASSIGN_OR_RETURN(rule.resources, ReadJsonStringList(object, "resources", path));
  ASSIGN_OR_RETURN(rule.resource_names, ReadJsonStringList(object, "resourceNames", path));
  ASSIGN_OR_RETURN(rule.non_resource_urls, ReadJsonStringList(object, "nonResourceURLs", path));
  return rule;
}

Result<std::vector<PolicyRule>> PolicyRulesAt(const json& rules, std::string_view path) {
  std::vector<PolicyRule> out;
  if (rules.is_null()) return out;
  if (!rules.is_array()) return Err(JsonTypeError(path, "a list", rules));
  out.reserve(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    ASSIGN_OR_RETURN(PolicyRule rule, PolicyRuleFromJson(rules[i], fmt::format("{}[{}]", path, i)));
    out.push_back(std::move(rule));
  }
  return out;
}

struct ObjectMeta {
  std::string ns;
  std::string name;
  std::map<std::string, std::string> labels;
};

// kind: one of `namespaced_kind` (needs metadata.namespace) and `cluster_kind`.
Result<ObjectMeta> MetaFromJson(const json& object, std::string_view namespaced_kind, std::string_view cluster_kind,
                                bool* cluster_scoped) {
  if (!object.is_object()) return Err(JsonTypeError("object", "an object", object));
  ASSIGN_OR_RETURN(std::string kind, ReadJsonString(object, "kind", "", /*required=*/true));
  if (kind != namespaced_kind && kind != cluster_kind) {
    return Err(Status::InvalidArgument(
        fmt::format("kind: must be {} or {}, not \"{}\"", namespaced_kind, cluster_kind, kind)));
  }
  *cluster_scoped = kind == cluster_kind;
  const json* metadata = JsonFind(object, "metadata");
  if (metadata == nullptr) return Err(Status::InvalidArgument("metadata: is required"));
  if (!metadata->is_object()) return Err(JsonTypeError("metadata", "an object", *metadata));
  ObjectMeta meta;
  ASSIGN_OR_RETURN(meta.name, ReadJsonString(*metadata, "name", "metadata", /*required=*/true));
  ASSIGN_OR_RETURN(meta.ns, ReadJsonString(*metadata, "namespace", "metadata", /*required=*/!*cluster_scoped));
  if (*cluster_scoped) meta.ns.clear();  // a cluster-scoped object has no namespace
  ASSIGN_OR_RETURN(meta.labels, ReadJsonStringMap(*metadata, "labels", "metadata"));
  return meta;
}

std::string ObjectName(std::string_view kind, const ObjectMeta& meta) {
  return meta.ns.empty() ? fmt::format("{} {}", kind, meta.name) : fmt::format("{} {}/{}", kind, meta.ns, meta.name);
}

Result<RbacSubject> SubjectFromJson(const json& object, std::string_view path) {
  RbacSubject s;
  ASSIGN_OR_RETURN(std::string kind, ReadJsonString(object, "kind", path, /*required=*/true));
  ASSIGN_OR_RETURN(s.name, ReadJsonString(object, "name", path, /*required=*/true));
  ASSIGN_OR_RETURN(std::string ns, ReadJsonString(object, "namespace", path, /*required=*/false));
  ASSIGN_OR_RETURN(std::string api_group, ReadJsonString(object, "apiGroup", path, /*required=*/false));
  if (kind == "User") {
    s.kind = RbacSubject::Kind::kUser;
  } else if (kind == "Group") {
    s.kind = RbacSubject::Kind::kGroup;
  } else if (kind == "ServiceAccount") {
    s.kind = RbacSubject::Kind::kServiceAccount;
    s.ns = std::move(ns);
  } else {
    return Err(
        Status::InvalidArgument(fmt::format("{}.kind: must be User, Group or ServiceAccount, not \"{}\"", path, kind)));
  }
  return s;
}

// ---------------------------------------------------------------------------
// Covers (pkg/registry/rbac/validation/policy_comparator.go).

// Each requested rule as atomic rules: one verb, group, resource and resource
// name (or none); or one verb and one URL.
std::vector<PolicyRule> Breakdown(const PolicyRule& rule) {
  std::vector<PolicyRule> out;
  for (const std::string& group : rule.api_groups) {
    for (const std::string& resource : rule.resources) {
      for (const std::string& verb : rule.verbs) {
        if (rule.resource_names.empty()) {
          out.push_back(PolicyRule{.verbs = {verb}, .api_groups = {group}, .resources = {resource}});
          continue;
        }
        for (const std::string& name : rule.resource_names) {
          out.push_back(
              PolicyRule{.verbs = {verb}, .api_groups = {group}, .resources = {resource}, .resource_names = {name}});
        }
      }
    }
  }
  for (const std::string& url : rule.non_resource_urls) {
    for (const std::string& verb : rule.verbs) out.push_back(PolicyRule{.verbs = {verb}, .non_resource_urls = {url}});
  }
  return out;
}

// Whether `owned` (a rule's resources) covers the one requested resource, as
// kube's resourceCoversAll decides: "*", the same text, or for "resource/sub"
// a held "*/sub".
bool ResourceCovered(const std::vector<std::string>& owned, std::string_view requested) {
  if (Has(owned, kAll) || Has(owned, requested)) return true;
  const size_t slash = requested.find('/');
  return slash != std::string_view::npos && Has(owned, fmt::format("*/{}", requested.substr(slash + 1)));
}

bool UrlCovered(const std::vector<std::string>& owned, std::string_view url) {
  for (const std::string& o : owned) {
    if (UrlEntryMatches(o, url)) return true;  // nonResourceURLCovers: equal, or "prefix*"
  }
  return false;
}

// `atomic` comes from Breakdown: one verb, and either one group and resource
// (and at most one name) or one URL.
bool RuleCovers(const PolicyRule& owner, const PolicyRule& atomic) {
  if (!Has(owner.verbs, kAll) && !Has(owner.verbs, atomic.verbs.front())) return false;
  // A narrower request (a resource name) is covered by a rule for all names,
  // but a request for all names only by a rule for all names.
  const bool names_covered =
      atomic.resource_names.empty()
          ? owner.resource_names.empty()
          : owner.resource_names.empty() || Has(owner.resource_names, atomic.resource_names.front());
  if (!names_covered) return false;
  if (!atomic.non_resource_urls.empty()) return UrlCovered(owner.non_resource_urls, atomic.non_resource_urls.front());
  return (Has(owner.api_groups, kAll) || Has(owner.api_groups, atomic.api_groups.front())) &&
         ResourceCovered(owner.resources, atomic.resources.front());
}

// ---------------------------------------------------------------------------
// Go's %q of a string (strconv.Quote), for PolicyRuleString.

// unicode.IsPrint outside ASCII, approximated without Unicode's tables: the
// C1 controls and the non-ASCII spaces and format characters are not
// printable; every other valid code point is (Go also escapes unassigned ones).
bool GoPrintable(uint32_t cp) {
  if (cp <= 0xa0 || cp == 0xad || cp == 0x1680 || cp == 0x180e || cp == 0x3000 || cp == 0xfeff) return false;
  if ((cp >= 0x2000 && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202f) || (cp >= 0x205f && cp <= 0x206f)) return false;
  return !(cp >= 0xfff9 && cp <= 0xfffb);
}

void AppendGoQuoted(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '\a':
          out->append("\\a");
          break;
        case '\b':
          out->append("\\b");
          break;
        case '\f':
          out->append("\\f");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\t':
          out->append("\\t");
          break;
        case '\v':
          out->append("\\v");
          break;
        case '"':
          out->append("\\\"");
          break;
        case '\\':
          out->append("\\\\");
          break;
        default:
          if (c < 0x20 || c == 0x7f) {
            out->append("\\x").push_back(kHex[c >> 4]);
            out->push_back(kHex[c & 0xf]);
          } else {
            out->push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: kept when valid and printable, else escaped as Go
    // does: an invalid byte as \xHH, a non-printable code point as \uXXXX.
    const size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    uint32_t cp = len == 4 ? c & 0x07u : len == 3 ? c & 0x0fu : c & 0x1fu;
    bool valid = len != 0 && i + len <= s.size();
    for (size_t k = 1; valid && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) valid = false;
      cp = (cp << 6) | (cc & 0x3fu);
    }
    if (valid && len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) valid = false;  // overlong, surrogate
    if (valid && len == 4 && (cp < 0x10000 || cp > 0x10ffff)) valid = false;
    if (!valid) {
      out->append("\\x").push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 0xf]);
      ++i;
      continue;
    }
    if (!GoPrintable(cp)) {
      out->append(fmt::format("\\u{:04x}", cp));
    } else {
      out->append(s.substr(i, len));
    }
    i += len;
  }
  out->push_back('"');
}

void AppendGoQuotedList(std::string_view label, const std::vector<std::string>& values,
                        std::vector<std::string>* parts) {
  if (values.empty()) return;
  std::string part(label);
  part.append(":[");
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) part.push_back(' ');
    AppendGoQuoted(values[i], &part);
  }
  part.push_back(']');
  parts->push_back(std::move(part));
}

// ---------------------------------------------------------------------------
// The index's keys.

using KeyView = std::pair<std::string_view, std::string_view>;
using Key = std::pair<std::string, std::string>;  // (namespace, name); "" for a cluster-scoped object

struct KeyLess {
  using is_transparent = void;
  static KeyView View(const Key& k) { return {k.first, k.second}; }
  static KeyView View(const KeyView& k) { return k; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return View(a) < View(b);
  }
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

}  // namespace

// ---------------------------------------------------------------------------
// Free functions of rbac.h.

Result<std::vector<PolicyRule>> PolicyRulesFromJson(const nlohmann::json& rules) {
  return PolicyRulesAt(rules, "rules");
}

Result<RbacRole> RbacRoleFromJson(const nlohmann::json& object) {
  bool cluster = false;
  ASSIGN_OR_RETURN(ObjectMeta meta, MetaFromJson(object, "Role", "ClusterRole", &cluster));
  const std::string context = ObjectName(cluster ? "ClusterRole" : "Role", meta);
  RbacRole role;
  if (const json* rules = JsonFind(object, "rules"); rules != nullptr) {
    auto parsed = PolicyRulesAt(*rules, "rules");
    if (!parsed) return Err(parsed.error().WithContext(context));
    role.rules = std::move(*parsed);
  }
  if (const json* aggregation = JsonFind(object, "aggregationRule"); aggregation != nullptr) {
    if (!cluster) {
      return Err(Status::InvalidArgument("aggregationRule: only a ClusterRole aggregates").WithContext(context));
    }
    if (!aggregation->is_object()) {
      return Err(JsonTypeError("aggregationRule", "an object", *aggregation).WithContext(context));
    }
    auto selectors = ReadJsonObjectList(*aggregation, "clusterRoleSelectors", "aggregationRule");
    if (!selectors) return Err(selectors.error().WithContext(context));
    role.aggregation.emplace();
    if (*selectors != nullptr) {
      for (size_t i = 0; i < (*selectors)->size(); ++i) {
        auto s = LabelSelectorTermsFromJson((**selectors)[i], fmt::format("aggregationRule.clusterRoleSelectors[{}]", i));
        if (!s) return Err(s.error().WithContext(context));
        role.aggregation->push_back(std::move(*s));
      }
    }
  }
  role.ns = std::move(meta.ns);
  role.name = std::move(meta.name);
  role.labels = std::move(meta.labels);
  return role;
}

Result<RbacBinding> RbacBindingFromJson(const nlohmann::json& object) {
  bool cluster = false;
  ASSIGN_OR_RETURN(ObjectMeta meta, MetaFromJson(object, "RoleBinding", "ClusterRoleBinding", &cluster));
  const std::string context = ObjectName(cluster ? "ClusterRoleBinding" : "RoleBinding", meta);
  auto parse = [&]() -> Result<RbacBinding> {
    RbacBinding b;
    const json* ref = JsonFind(object, "roleRef");
    if (ref == nullptr) return Err(Status::InvalidArgument("roleRef: is required"));
    if (!ref->is_object()) return Err(JsonTypeError("roleRef", "an object", *ref));
    ASSIGN_OR_RETURN(std::string kind, ReadJsonString(*ref, "kind", "roleRef", /*required=*/true));
    ASSIGN_OR_RETURN(b.role_name, ReadJsonString(*ref, "name", "roleRef", /*required=*/true));
    ASSIGN_OR_RETURN(std::string api_group, ReadJsonString(*ref, "apiGroup", "roleRef", /*required=*/false));
    if (!api_group.empty() && api_group != kRbacApiGroup) {
      return Err(Status::InvalidArgument(
          fmt::format("roleRef.apiGroup: must be \"{}\", not \"{}\"", kRbacApiGroup, api_group)));
    }
    if (kind == "ClusterRole") {
      b.role_is_cluster_role = true;
    } else if (kind == "Role" && !cluster) {
      b.role_is_cluster_role = false;
    } else {
      return Err(Status::InvalidArgument(
          fmt::format("roleRef.kind: must be {}, not \"{}\"", cluster ? "ClusterRole" : "Role or ClusterRole", kind)));
    }
    ASSIGN_OR_RETURN(const json* subjects, ReadJsonObjectList(object, "subjects", ""));
    if (subjects != nullptr) {
      for (size_t i = 0; i < subjects->size(); ++i) {
        ASSIGN_OR_RETURN(RbacSubject s, SubjectFromJson((*subjects)[i], fmt::format("subjects[{}]", i)));
        b.subjects.push_back(std::move(s));
      }
    }
    return b;
  };
  auto b = parse();
  if (!b) return Err(b.error().WithContext(context));
  b->ns = std::move(meta.ns);
  b->name = std::move(meta.name);
  return b;
}

nlohmann::json PolicyRulesToJson(std::span<const PolicyRule> rules) {
  json out = json::array();
  for (const PolicyRule& r : rules) {
    json rule = json::object();
    rule["verbs"] = r.verbs;  // required in rbac/v1 (no omitempty); the others are omitted when empty
    if (!r.api_groups.empty()) rule["apiGroups"] = r.api_groups;
    if (!r.resources.empty()) rule["resources"] = r.resources;
    if (!r.resource_names.empty()) rule["resourceNames"] = r.resource_names;
    if (!r.non_resource_urls.empty()) rule["nonResourceURLs"] = r.non_resource_urls;
    out.push_back(std::move(rule));
  }
  return out;
}

bool RuleAllows(const PolicyRule& rule, const RbacAttributes& attributes) {
  return Matches(rule, FlagsOf(rule), attributes);
}

std::vector<PolicyRule> UncoveredRules(std::span<const PolicyRule> owned, std::span<const PolicyRule> requested) {
  std::vector<PolicyRule> uncovered;
  for (const PolicyRule& rule : requested) {
    for (PolicyRule& atomic : Breakdown(rule)) {
      const bool covered =
          std::any_of(owned.begin(), owned.end(), [&](const PolicyRule& o) { return RuleCovers(o, atomic); });
      if (!covered) uncovered.push_back(std::move(atomic));
    }
  }
  return uncovered;
}

std::string PolicyRuleString(const PolicyRule& rule) {
  std::vector<std::string> parts;
  AppendGoQuotedList("APIGroups", rule.api_groups, &parts);
  AppendGoQuotedList("Resources", rule.resources, &parts);
  AppendGoQuotedList("NonResourceURLs", rule.non_resource_urls, &parts);
  AppendGoQuotedList("ResourceNames", rule.resource_names, &parts);
  AppendGoQuotedList("Verbs", rule.verbs, &parts);
  std::string out = "{";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.append(", ");
    out.append(parts[i]);
  }
  out.push_back('}');
  return out;
}

// ---------------------------------------------------------------------------
// The index.

namespace {

// A Role or ClusterRole, or the place for one that a binding names.
struct RoleSlot {
  std::optional<RbacRole> role;          // nullopt: no such role (yet)
  std::shared_ptr<const RuleSet> rules;  // effective rules; null when no role
};

struct BindingRecord {
  RbacBinding binding;
  std::shared_ptr<RoleSlot> slot;  // the role it names; State::no_role for a ClusterRoleBinding to a Role
  // Subject keys it is indexed under: (is_group, key), each once.
  std::vector<std::pair<bool, std::string>> keys;

  bool Allows(const RbacAttributes& a) const {
    const RuleSet* rules = slot->rules.get();
    return rules != nullptr && rules->Allows(a);
  }
};

// One subject's bindings: its ClusterRoleBindings, and its RoleBindings by namespace.
struct SubjectBindings {
  std::vector<const BindingRecord*> cluster;
  StringMap<std::vector<const BindingRecord*>> by_ns;
};

}  // namespace

struct RbacIndex::State {
  std::map<Key, std::shared_ptr<RoleSlot>, KeyLess> slots;
  size_t role_count = 0;
  std::set<std::string, std::less<>> aggregating;  // ClusterRoles with an aggregationRule
  std::map<Key, std::unique_ptr<BindingRecord>, KeyLess> bindings;
  StringMap<SubjectBindings> users;   // user names, ServiceAccounts as their user names
  StringMap<SubjectBindings> groups;  // group names
  // What a ClusterRoleBinding naming a Role (which cannot exist at the cluster
  // scope) points at: never filled.
  std::shared_ptr<RoleSlot> no_role = std::make_shared<RoleSlot>();

  // --- roles

  std::shared_ptr<RoleSlot>& SlotFor(std::string_view ns, std::string_view name) {
    auto it = slots.find(KeyView(ns, name));
    if (it == slots.end()) it = slots.emplace(Key(ns, name), std::make_shared<RoleSlot>()).first;
    return it->second;
  }

  // Drops the slot when neither a role nor a binding holds it.
  void ReleaseSlot(std::string_view ns, std::string_view name) {
    auto it = slots.find(KeyView(ns, name));
    if (it != slots.end() && !it->second->role.has_value() && it->second.use_count() == 1) slots.erase(it);
  }

  // Whether some aggregationRule selects a ClusterRole with these labels.
  bool Selected(const std::map<std::string, std::string>& labels) const {
    for (const std::string& name : aggregating) {
      const RoleSlot& s = *slots.find(KeyView("", name))->second;
      for (const LabelSelectorTerms& selector : *s.role->aggregation) {
        if (selector.Matches(labels)) return true;
      }
    }
    return false;
  }

  // The effective rules of the aggregating ClusterRole `root`: for each
  // selector in order and each selected ClusterRole by name (never itself),
  // that role's effective rules, each rule once. An aggregating role's own
  // rules are not among them: in Kubernetes they are what the aggregation
  // controller last wrote there, replaced by the aggregation. A
  // depth-first walk visiting each role once, so a cycle ends and a role
  // reached twice adds nothing new.
  std::shared_ptr<const RuleSet> Aggregate(const RbacRole& root) const {
    RuleCollector collected;
    std::set<std::string_view> visited;
    std::function<void(const RbacRole&)> visit = [&](const RbacRole& role) {
      visited.insert(role.name);
      if (!role.aggregation.has_value()) {
        for (const PolicyRule& r : role.rules) collected.Add(r);
        return;
      }
      for (const LabelSelectorTerms& selector : *role.aggregation) {
        // ClusterRoles are the slots of namespace "", in name order.
        for (auto it = slots.lower_bound(KeyView("", "")); it != slots.end() && it->first.first.empty(); ++it) {
          const std::optional<RbacRole>& other = it->second->role;
          if (!other.has_value() || other->name == role.name || visited.contains(other->name)) continue;
          if (selector.Matches(other->labels)) visit(*other);
        }
      }
    };
    visit(root);
    const std::vector<PolicyRule> rules = collected.Take();
    return Compile(rules);
  }

  void Recompute(RoleSlot& slot) {
    const RbacRole& role = *slot.role;
    slot.rules = role.ns.empty() && role.aggregation.has_value() ? Aggregate(role) : Compile(role.rules);
  }

  void RecomputeAggregated() {
    for (const std::string& name : aggregating) Recompute(*slots.find(KeyView("", name))->second);
  }

  void PutRole(RbacRole role) {
    std::shared_ptr<RoleSlot> slot = SlotFor(role.ns, role.name);
    if (!role.ns.empty()) role.aggregation.reset();  // only a ClusterRole aggregates
    // Whether other aggregated roles can change: only when this ClusterRole
    // was or is selected by some aggregationRule (aggregating itself or not).
    // Asked before the role is replaced, while `aggregating` matches the slots.
    const bool was_selected = role.ns.empty() && slot->role.has_value() && Selected(slot->role->labels);
    std::optional<RbacRole> old = std::exchange(slot->role, std::move(role));
    if (!old.has_value()) ++role_count;
    const RbacRole& now = *slot->role;
    if (!now.ns.empty()) {
      Recompute(*slot);
      return;
    }
    if (now.aggregation.has_value()) {
      aggregating.insert(now.name);
    } else {
      aggregating.erase(now.name);
    }
    if (was_selected || Selected(now.labels)) {
      if (!now.aggregation.has_value()) Recompute(*slot);
      RecomputeAggregated();
    } else {
      Recompute(*slot);
    }
  }

  void RemoveRole(std::string_view ns, std::string_view name) {
    auto it = slots.find(KeyView(ns, name));
    if (it == slots.end() || !it->second->role.has_value()) return;
    std::shared_ptr<RoleSlot> slot = it->second;
    std::optional<RbacRole> old = std::exchange(slot->role, std::nullopt);
    slot->rules.reset();
    --role_count;
    if (ns.empty()) {
      aggregating.erase(std::string(name));
      if (Selected(old->labels)) RecomputeAggregated();
    }
    slot.reset();
    ReleaseSlot(ns, name);
  }

  // --- bindings

  static std::vector<std::pair<bool, std::string>> SubjectKeys(const RbacBinding& b) {
    std::vector<std::pair<bool, std::string>> keys;
    for (const RbacSubject& s : b.subjects) {
      std::pair<bool, std::string> key;
      switch (s.kind) {
        case RbacSubject::Kind::kUser:
          key = {false, s.name};
          break;
        case RbacSubject::Kind::kGroup:
          key = {true, s.name};
          break;
        case RbacSubject::Kind::kServiceAccount: {
          // appliesToUser: the subject's namespace, else the RoleBinding's; a
          // ClusterRoleBinding's ServiceAccount without one matches nobody.
          const std::string& ns = s.ns.empty() ? b.ns : s.ns;
          if (ns.empty()) continue;
          key = {false, ServiceAccountUserName(ns, s.name)};
          break;
        }
      }
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
    }
    return keys;
  }

  void Index(const BindingRecord* record) {
    for (const auto& [is_group, key] : record->keys) {
      StringMap<SubjectBindings>& map = is_group ? groups : users;
      auto it = map.find(std::string_view(key));
      if (it == map.end()) it = map.emplace(key, SubjectBindings{}).first;
      const std::string& ns = record->binding.ns;
      if (ns.empty()) {
        it->second.cluster.push_back(record);
      } else {
        auto nit = it->second.by_ns.find(std::string_view(ns));
        if (nit == it->second.by_ns.end())
          nit = it->second.by_ns.emplace(ns, std::vector<const BindingRecord*>{}).first;
        nit->second.push_back(record);
      }
    }
  }

  void Unindex(const BindingRecord* record) {
    for (const auto& [is_group, key] : record->keys) {
      StringMap<SubjectBindings>& map = is_group ? groups : users;
      auto it = map.find(std::string_view(key));
      if (it == map.end()) continue;
      SubjectBindings& sb = it->second;
      const std::string& ns = record->binding.ns;
      if (ns.empty()) {
        std::erase(sb.cluster, record);
      } else if (auto nit = sb.by_ns.find(std::string_view(ns)); nit != sb.by_ns.end()) {
        std::erase(nit->second, record);
        if (nit->second.empty()) sb.by_ns.erase(nit);
      }
      if (sb.cluster.empty() && sb.by_ns.empty()) map.erase(it);
    }
  }

  static Key RoleKeyOf(const RbacBinding& b) {
    return b.role_is_cluster_role ? Key("", b.role_name) : Key(b.ns, b.role_name);
  }

  void PutBinding(RbacBinding binding) {
    RemoveBinding(binding.ns, binding.name);
    auto record = std::make_unique<BindingRecord>();
    if (!binding.role_is_cluster_role && binding.ns.empty()) {
      record->slot = no_role;
    } else {
      const Key role = RoleKeyOf(binding);
      record->slot = SlotFor(role.first, role.second);
    }
    record->keys = SubjectKeys(binding);
    record->binding = std::move(binding);
    Index(record.get());
    Key key(record->binding.ns, record->binding.name);
    bindings.emplace(std::move(key), std::move(record));
  }

  void RemoveBinding(std::string_view ns, std::string_view name) {
    auto it = bindings.find(KeyView(ns, name));
    if (it == bindings.end()) return;
    std::unique_ptr<BindingRecord> record = std::move(it->second);
    bindings.erase(it);
    Unindex(record.get());
    const Key role = RoleKeyOf(record->binding);
    record.reset();
    ReleaseSlot(role.first, role.second);
  }

  // --- decisions

  // Calls `f(record)` for each binding of `user` that applies to a request in
  // `ns` (its ClusterRoleBindings; its RoleBindings of ns when ns is not
  // empty); stops when f returns true. A record may come more than once (the
  // user and a group both bound).
  template <typename F>
  bool ForEachBinding(const UserInfo& user, std::string_view ns, F&& f) const {
    auto walk = [&](const SubjectBindings& sb) {
      for (const BindingRecord* r : sb.cluster) {
        if (f(r)) return true;
      }
      if (ns.empty()) return false;
      auto it = sb.by_ns.find(ns);
      if (it == sb.by_ns.end()) return false;
      for (const BindingRecord* r : it->second) {
        if (f(r)) return true;
      }
      return false;
    };
    if (auto it = users.find(std::string_view(user.name)); it != users.end() && walk(it->second)) return true;
    for (const std::string& group : user.groups) {
      if (auto it = groups.find(std::string_view(group)); it != groups.end() && walk(it->second)) return true;
    }
    return false;
  }

  // RoleBindings grant only resource requests in their namespace.
  static std::string_view ScopeOf(const RbacAttributes& a) { return a.resource_request ? a.ns : std::string_view(); }

  bool Allowed(const UserInfo& user, const RbacAttributes& a) const {
    return ForEachBinding(user, ScopeOf(a), [&a](const BindingRecord* r) { return r->Allows(a); });
  }

  std::vector<PolicyRule> RulesFor(const UserInfo& user, std::string_view ns) const {
    // The bindings in a stable order (ClusterRoleBindings first, then by
    // name), each once.
    auto by_key = [](const BindingRecord* a, const BindingRecord* b) {
      return KeyView(a->binding.ns, a->binding.name) < KeyView(b->binding.ns, b->binding.name);
    };
    std::set<const BindingRecord*, decltype(by_key)> records(by_key);
    ForEachBinding(user, ns, [&records](const BindingRecord* r) {
      records.insert(r);
      return false;
    });
    RuleCollector collected;
    for (const BindingRecord* r : records) {
      if (r->slot->rules == nullptr) continue;
      for (const CompiledRule& rule : r->slot->rules->rules) collected.Add(rule.rule);
    }
    return collected.Take();
  }

  std::vector<RbacSubject> SubjectsAllowed(const RbacAttributes& a) const {
    std::vector<RbacSubject> out;
    auto add = [&](const BindingRecord& r) {
      if (!r.Allows(a)) return;
      for (RbacSubject s : r.binding.subjects) {
        if (s.kind == RbacSubject::Kind::kServiceAccount && s.ns.empty()) {
          if (r.binding.ns.empty()) continue;  // matches nobody
          s.ns = r.binding.ns;
        }
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
      }
    };
    // bindings is ordered by (namespace, name): the ClusterRoleBindings (namespace "") come first.
    const std::string_view ns = ScopeOf(a);
    for (auto it = bindings.lower_bound(KeyView("", "")); it != bindings.end() && it->first.first.empty(); ++it) {
      add(*it->second);
    }
    if (!ns.empty()) {
      for (auto it = bindings.lower_bound(KeyView(ns, "")); it != bindings.end() && it->first.first == ns; ++it) {
        add(*it->second);
      }
    }
    return out;
  }
};

RbacIndex::RbacIndex() : state_(std::make_unique<State>()) {}
RbacIndex::~RbacIndex() = default;

void RbacIndex::PutRole(RbacRole role) {
  std::unique_lock lock(mu_);
  state_->PutRole(std::move(role));
}

void RbacIndex::RemoveRole(std::string_view ns, std::string_view name) {
  std::unique_lock lock(mu_);
  state_->RemoveRole(ns, name);
}

void RbacIndex::PutBinding(RbacBinding binding) {
  std::unique_lock lock(mu_);
  state_->PutBinding(std::move(binding));
}

void RbacIndex::RemoveBinding(std::string_view ns, std::string_view name) {
  std::unique_lock lock(mu_);
  state_->RemoveBinding(ns, name);
}

void RbacIndex::Reset(std::vector<RbacRole> roles, std::vector<RbacBinding> bindings) {
  // Built aside, then swapped in: readers see the old index or the new one.
  auto fresh = std::make_unique<State>();
  for (RbacRole& role : roles) {
    if (!role.ns.empty()) role.aggregation.reset();
    std::shared_ptr<RoleSlot>& slot = fresh->SlotFor(role.ns, role.name);
    if (!slot->role.has_value()) ++fresh->role_count;
    if (role.ns.empty()) {
      if (role.aggregation.has_value()) {
        fresh->aggregating.insert(role.name);
      } else {
        fresh->aggregating.erase(role.name);
      }
    }
    slot->role = std::move(role);
  }
  // Every role's own rules first, then the aggregated ones (which read the
  // roles, not their slots' rules, so the order among them does not matter).
  for (auto& [key, slot] : fresh->slots) {
    if (slot->role.has_value() && !fresh->aggregating.contains(key.second)) fresh->Recompute(*slot);
  }
  fresh->RecomputeAggregated();
  for (RbacBinding& binding : bindings) fresh->PutBinding(std::move(binding));
  std::unique_ptr<State> old;
  {
    std::unique_lock lock(mu_);
    old = std::exchange(state_, std::move(fresh));
  }
  // `old` is destroyed here, outside the lock.
}

bool RbacIndex::Allowed(const UserInfo& user, const RbacAttributes& attributes) const {
  std::shared_lock lock(mu_);
  return state_->Allowed(user, attributes);
}

std::vector<PolicyRule> RbacIndex::RulesFor(const UserInfo& user, std::string_view ns) const {
  std::shared_lock lock(mu_);
  return state_->RulesFor(user, ns);
}

std::optional<std::vector<PolicyRule>> RbacIndex::RoleRules(std::string_view ns, std::string_view name) const {
  std::shared_lock lock(mu_);
  auto it = state_->slots.find(KeyView(ns, name));
  if (it == state_->slots.end() || it->second->rules == nullptr) return std::nullopt;
  return it->second->rules->Plain();
}

std::vector<RbacSubject> RbacIndex::SubjectsAllowed(const RbacAttributes& attributes) const {
  std::shared_lock lock(mu_);
  return state_->SubjectsAllowed(attributes);
}

size_t RbacIndex::roles() const {
  std::shared_lock lock(mu_);
  return state_->role_count;
}

size_t RbacIndex::bindings() const {
  std::shared_lock lock(mu_);
  return state_->bindings.size();
}

}  // namespace tessera
