#include "api/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/suggest.h"
#include "common/time_format.h"
#include "domain/ipv4_cidr.h"
#include "domain/quantity.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr size_t kMaxErrors = 20;
constexpr size_t kMaxAnnotationBytes = 256 * 1024;  // Kubernetes' TotalAnnotationSizeLimitB
constexpr int64_t kHighestUserPriority = 1'000'000'000;

constexpr std::string_view kGpu = "nvidia.com/gpu";
constexpr std::string_view kGpuMemory = "tessera.dev/gpu-memory";

// ===========================================================================
// Paths and errors.

std::string FieldPath(const std::string& path, std::string_view name) {
  if (path.empty()) return std::string(name);
  return fmt::format("{}.{}", path, name);
}
std::string IndexPath(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }
std::string KeyPath(const std::string& path, std::string_view key) {
  return fmt::format("{}[{}]", path, key);
}

// Collects "<path>: <message>" lines; the first kMaxErrors are kept.
class Errors {
 public:
  void Add(const std::string& path, std::string_view message) {
    if (list_.size() < kMaxErrors) list_.push_back(fmt::format("{}: {}", path, message));
    ++count_;
  }
  size_t count() const { return count_; }
  Status ToStatus() const {
    if (count_ == 0) return Status::Ok();
    std::string msg;
    for (const auto& e : list_) {
      if (!msg.empty()) msg += "; ";
      msg += e;
    }
    if (count_ > list_.size()) msg += fmt::format("; and {} more", count_ - list_.size());
    return Status::InvalidArgument(std::move(msg));
  }

 private:
  std::vector<std::string> list_;
  size_t count_ = 0;
};

// JSON text of a scalar; never throws (invalid UTF-8 from a caller's own JSON is
// replaced rather than thrown about).
std::string Dump(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

// "string \"4\"", "integer 8", "a list", for "expected X, got Y".
std::string Describe(const json& v) {
  switch (v.type()) {
    case json::value_t::string: return fmt::format("string {}", Dump(v));
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return fmt::format("integer {}", Dump(v));
    case json::value_t::number_float: return fmt::format("number {}", Dump(v));
    case json::value_t::boolean: return fmt::format("boolean {}", Dump(v));
    case json::value_t::array: return "a list";
    case json::value_t::object: return "an object";
    case json::value_t::null: return "null";
    default: return "a value of another type";
  }
}

// ===========================================================================
// Did-you-mean.

std::string JoinNames(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) {
    if (!out.empty()) out += ", ";
    out += n.empty() ? "\"\"" : std::string(n);
  }
  return out;
}

// ===========================================================================
// Names, labels, quantities.

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == s.npos ? s.npos : dot - start);
    if (!IsDns1123Label(part)) return false;
    if (dot == s.npos) return true;
    start = dot + 1;
  }
}

constexpr std::string_view kLabelMessage =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name' or '123-abc'), at most 63 "
    "characters";
constexpr std::string_view kSubdomainMessage =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com'), at most 253 "
    "characters";

constexpr std::string_view kDns1035Message =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123'), at most 63 characters";

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? of at most 63 characters.
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// Kubernetes' qualified name check (label and annotation keys, finalizers).
Status CheckQualifiedName(std::string_view key) {
  std::string_view name = key;
  size_t slash = key.find('/');
  if (slash != key.npos) {
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (!IsDns1123Subdomain(prefix)) {
      return Status::InvalidArgument(fmt::format(
          "\"{}\" is not a valid key: the prefix before '/' must be a DNS subdomain such as "
          "example.com ({})",
          key, kSubdomainMessage));
    }
  }
  if (!IsQualifiedNamePart(name)) {
    return Status::InvalidArgument(fmt::format(
        "\"{}\" is not a valid key: the name part must be 1 to 63 characters, alphanumerics, "
        "'-', '_' or '.', starting and ending with an alphanumeric character (e.g. 'app' or "
        "'example.com/team')",
        key));
  }
  return Status::Ok();
}

// A quantity's numeric form: "128", "0.5" (json::dump prints the shortest
// round-tripping form of a double).
std::optional<std::string> QuantityTextOf(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return Dump(v);
  return std::nullopt;
}

// How amounts of a resource are measured (domain/resources.h).
enum class Unit { kMilli, kUnits, kGpu, kGeneric };

Unit UnitOf(std::string_view resource) {
  if (resource == kGpu) return Unit::kGpu;
  if (resource == "cpu") return Unit::kMilli;
  if (resource == "memory" || resource == "ephemeral-storage" || resource == "storage" ||
      resource == kGpuMemory || resource == "pods" || resource.starts_with("hugepages-") ||
      resource.starts_with("count/") || resource.find('/') == resource.npos) {
    return Unit::kUnits;  // bytes, or a count of objects ("services", "count/jobs.batch")
  }
  return Unit::kGeneric;  // an extended resource Tessera does not schedule itself
}

// Parses a quantity the way its resource is measured. A generic quantity is
// exact in milli-units or, beyond their range, in whole units.
Result<int64_t> ParseAmount(Unit unit, std::string_view text) {
  switch (unit) {
    case Unit::kGpu: return ParseGpuMilli(text);
    case Unit::kMilli: return ParseMilli(text);
    case Unit::kUnits: return ParseUnits(text);
    case Unit::kGeneric: break;
  }
  auto milli = ParseMilli(text);
  if (milli) return milli;
  if (auto units = ParseUnits(text)) return units;
  return milli;
}

// "requests.nvidia.com/gpu" -> "nvidia.com/gpu" (ResourceQuota keys).
std::string_view QuotaBaseName(std::string_view key) {
  for (std::string_view prefix : {std::string_view("requests."), std::string_view("limits.")}) {
    if (key.starts_with(prefix)) return key.substr(prefix.size());
  }
  return key;
}

const std::vector<std::string_view>& KnownResourceNames() {
  static const std::vector<std::string_view> names = {"cpu", "memory", "ephemeral-storage",
                                                      kGpu, kGpuMemory};
  return names;
}

// Container resource names: a standard name, or a domain-qualified extended
// resource. Near misses of the names Tessera schedules are refused with a hint,
// since a pod asking for "nvidia.com/gpus" would wait forever.
void CheckContainerResourceName(std::string_view name, const std::string& path, Errors& errors) {
  const auto& known = KnownResourceNames();
  if (std::find(known.begin(), known.end(), name) != known.end() ||
      name.starts_with("hugepages-")) {
    return;
  }
  std::optional<std::string_view> hint = Suggest(name, known);
  if (!hint) {
    for (std::string_view k : known) {
      size_t slash = k.find('/');
      if (slash != k.npos && k.substr(slash + 1) == name) hint = k;
    }
  }
  if (name.find('/') == name.npos) {
    errors.Add(path, fmt::format(
        "unknown resource \"{}\"{}: use cpu, memory, ephemeral-storage, hugepages-<size> or a "
        "domain-qualified name such as nvidia.com/gpu",
        name, hint ? fmt::format("; did you mean \"{}\"?", *hint) : ""));
    return;
  }
  if (hint) {
    errors.Add(path, fmt::format("unknown resource \"{}\"; did you mean \"{}\"?", name, *hint));
    return;
  }
  if (Status s = CheckQualifiedName(name); !s.ok()) errors.Add(path, s.message());
}

void CheckQuotaResourceName(std::string_view key, const std::string& path, Errors& errors) {
  std::string_view base = QuotaBaseName(key);
  bool ok = !base.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return IsAlnum(c) || c == '-' || c == '_' || c == '.' || c == '/';
  });
  if (!ok) {
    errors.Add(path, fmt::format("\"{}\" is not a valid resource name", key));
    return;
  }
  const auto& known = KnownResourceNames();
  if (std::find(known.begin(), known.end(), base) != known.end()) return;
  if (auto hint = Suggest(base, known); hint && base.find('/') != base.npos) {
    errors.Add(path, fmt::format("unknown resource \"{}\"; did you mean \"{}\"?", key,
                                 std::string(key.substr(0, key.size() - base.size())) +
                                     std::string(*hint)));
  }
}

// Checks one amount of `resource`; returns it when valid (for comparisons).
std::optional<int64_t> CheckAmount(std::string_view resource, const json& value,
                                   const std::string& path, Errors& errors) {
  std::optional<std::string> text = QuantityTextOf(value);
  if (!text) {
    errors.Add(path, fmt::format("expected a quantity such as \"2\", \"500m\" or \"64Gi\", got {}",
                                 Describe(value)));
    return std::nullopt;
  }
  auto amount = ParseAmount(UnitOf(resource), *text);
  if (!amount) {
    errors.Add(path, amount.error().message());
    return std::nullopt;
  }
  return *amount;
}

// ===========================================================================
// The schema.

enum class Type {
  kString,
  kInt,
  kBool,
  kQuantity,      // string or number, a valid Kubernetes quantity
  kIntOrString,   // ports: 8080 or "http"
  kObject,
  kArray,
  kMap,           // string -> element
  kResourceList,  // resource name -> quantity, with the resource's unit rules
  kAny,           // anything (status; places Kubernetes leaves open)
};

enum class StringRule {
  kNone,
  kDns1123Label,
  kDns1123Subdomain,
  kNamespace,  // a DNS-1123 label, or empty (the request's namespace applies)
  kLabelValue,
  kQualifiedName,
};
enum class KeyRule { kNone, kLabelKey };

struct Schema;
using SchemaRef = std::shared_ptr<const Schema>;

// A rule over a whole value, run once its structure is valid.
using Check = std::function<void(const json& value, const std::string& path, Errors& errors)>;

struct FieldSpec {
  std::string_view name;
  SchemaRef schema;
  bool required = false;
};

struct Schema {
  Type type = Type::kAny;
  // kString
  std::vector<std::string_view> enum_values;  // empty: any string
  StringRule string_rule = StringRule::kNone;
  // kInt
  int64_t min = 0;
  int64_t max = kInt32Max;
  // kObject
  std::vector<FieldSpec> fields;
  bool open = false;  // unknown fields are allowed (and not checked)
  // kArray, kMap
  SchemaRef element;
  bool non_empty = false;
  KeyRule key_rule = KeyRule::kNone;
  bool null_elements = false;  // kMap: a null value is allowed (Go reads it as empty)
  // kResourceList
  bool quota_keys = false;  // ResourceQuota: "requests.cpu", "pods", "count/jobs.batch"
  std::vector<Check> checks;
};

SchemaRef Make(Schema s) { return std::make_shared<const Schema>(std::move(s)); }

SchemaRef Str(StringRule rule = StringRule::kNone) {
  return Make({.type = Type::kString, .string_rule = rule});
}
SchemaRef Enum(std::vector<std::string_view> values) {
  return Make({.type = Type::kString, .enum_values = std::move(values)});
}
SchemaRef Int(int64_t min = 0, int64_t max = kInt32Max) {
  return Make({.type = Type::kInt, .min = min, .max = max});
}
SchemaRef Int64(int64_t min = 0) { return Int(min, kInt64Max); }
SchemaRef Bool() { return Make({.type = Type::kBool}); }
SchemaRef Qty() { return Make({.type = Type::kQuantity}); }
SchemaRef IntOrStr() { return Make({.type = Type::kIntOrString}); }
SchemaRef Any() { return Make({.type = Type::kAny}); }
SchemaRef Obj(std::vector<FieldSpec> fields, std::vector<Check> checks = {}) {
  return Make({.type = Type::kObject, .fields = std::move(fields), .checks = std::move(checks)});
}
// An object whose content Kubernetes leaves open (securityContext, affinity, ...):
// must be an object; `fields` that are present are checked, others pass.
SchemaRef OpenObj(std::vector<FieldSpec> fields = {}) {
  return Make({.type = Type::kObject, .fields = std::move(fields), .open = true});
}
SchemaRef Arr(SchemaRef element, bool non_empty = false) {
  return Make({.type = Type::kArray, .element = std::move(element), .non_empty = non_empty});
}
SchemaRef MapOf(SchemaRef element, KeyRule key_rule = KeyRule::kNone, bool null_elements = false) {
  return Make({.type = Type::kMap, .element = std::move(element), .key_rule = key_rule,
               .null_elements = null_elements});
}
SchemaRef ResourceList(bool quota_keys = false, std::vector<Check> checks = {}) {
  return Make({.type = Type::kResourceList, .quota_keys = quota_keys, .checks = std::move(checks)});
}
FieldSpec Opt(std::string_view name, SchemaRef s) { return {name, std::move(s), false}; }
FieldSpec Req(std::string_view name, SchemaRef s) { return {name, std::move(s), true}; }

// ---------------------------------------------------------------------------
// The validator.

void Validate(const Schema& s, const json& v, const std::string& path, Errors& errors);

void CheckString(const Schema& s, const json& v, const std::string& path, Errors& errors) {
  if (!v.is_string()) {
    std::string hint;
    if (v.is_number() || v.is_boolean()) hint = fmt::format(" (quote it: \"{}\")", Dump(v));
    errors.Add(path, fmt::format("expected a string, got {}{}", Describe(v), hint));
    return;
  }
  const std::string& str = v.get_ref<const std::string&>();
  if (!s.enum_values.empty()) {
    if (std::find(s.enum_values.begin(), s.enum_values.end(), str) != s.enum_values.end()) return;
    auto hint = Suggest(str, s.enum_values);
    errors.Add(path, fmt::format("unsupported value \"{}\"{} (supported: {})", str,
                                 hint ? fmt::format("; did you mean \"{}\"?", *hint) : "",
                                 JoinNames(s.enum_values)));
    return;
  }
  switch (s.string_rule) {
    case StringRule::kNone: return;
    case StringRule::kNamespace:
      if (str.empty()) return;
      [[fallthrough]];
    case StringRule::kDns1123Label:
      if (!IsDns1123Label(str)) errors.Add(path, fmt::format("\"{}\": {}", str, kLabelMessage));
      return;
    case StringRule::kDns1123Subdomain:
      if (!IsDns1123Subdomain(str)) {
        errors.Add(path, fmt::format("\"{}\": {}", str, kSubdomainMessage));
      }
      return;
    case StringRule::kLabelValue:
      if (Status st = ValidateLabelValue(str); !st.ok()) errors.Add(path, st.message());
      return;
    case StringRule::kQualifiedName:
      if (Status st = CheckQualifiedName(str); !st.ok()) errors.Add(path, st.message());
      return;
  }
}

void CheckInt(const Schema& s, const json& v, const std::string& path, Errors& errors) {
  std::optional<int64_t> n;
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(s.max)) {
      errors.Add(path, fmt::format("{} must be at most {}", Dump(v), s.max));
      return;
    }
    n = v.get<int64_t>();
  } else if (v.is_number_integer()) {
    n = v.get<int64_t>();
  } else if (v.is_number_float()) {
    // 1e3 in YAML is a float; a whole one is accepted as the integer it names.
    double d = v.get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d)) && d > -9.2e18 && d < 9.2e18) {
      n = static_cast<int64_t>(d);
    } else {
      errors.Add(path, fmt::format("expected an integer, got {}", Describe(v)));
      return;
    }
  } else {
    std::string hint;
    if (v.is_string() && !v.get_ref<const std::string&>().empty() &&
        std::all_of(v.get_ref<const std::string&>().begin(), v.get_ref<const std::string&>().end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      hint = " (remove the quotes)";
    }
    errors.Add(path, fmt::format("expected an integer, got {}{}", Describe(v), hint));
    return;
  }
  if (*n < s.min) {
    errors.Add(path, fmt::format("{} must be at least {}", *n, s.min));
  } else if (*n > s.max) {
    errors.Add(path, fmt::format("{} must be at most {}", *n, s.max));
  }
}

void CheckObject(const Schema& s, const json& v, const std::string& path, Errors& errors) {
  if (!v.is_object()) {
    errors.Add(path, fmt::format("expected an object, got {}", Describe(v)));
    return;
  }
  for (const auto& [key, value] : v.items()) {
    auto field = std::find_if(s.fields.begin(), s.fields.end(),
                              [&](const FieldSpec& f) { return f.name == key; });
    if (field == s.fields.end()) {
      if (s.open) continue;
      std::vector<std::string_view> names;
      for (const FieldSpec& f : s.fields) names.push_back(f.name);
      if (auto hint = Suggest(key, names)) {
        errors.Add(FieldPath(path, key), fmt::format("unknown field; did you mean \"{}\"?", *hint));
      } else if (names.size() <= 12) {
        errors.Add(FieldPath(path, key),
                   fmt::format("unknown field (known fields: {})", JoinNames(names)));
      } else {
        errors.Add(FieldPath(path, key), "unknown field");
      }
      continue;
    }
    if (value.is_null()) continue;  // null is absent (checked below when required)
    Validate(*field->schema, value, FieldPath(path, key), errors);
  }
  for (const FieldSpec& f : s.fields) {
    if (!f.required) continue;
    auto it = v.find(f.name);
    if (it == v.end() || it->is_null()) errors.Add(FieldPath(path, f.name), "required");
  }
}

void CheckArray(const Schema& s, const json& v, const std::string& path, Errors& errors) {
  if (!v.is_array()) {
    errors.Add(path, fmt::format("expected a list, got {}", Describe(v)));
    return;
  }
  if (s.non_empty && v.empty()) {
    errors.Add(path, "must not be empty");
    return;
  }
  for (size_t i = 0; i < v.size(); ++i) Validate(*s.element, v[i], IndexPath(path, i), errors);
}

void CheckMap(const Schema& s, const json& v, const std::string& path, Errors& errors) {
  if (!v.is_object()) {
    errors.Add(path, fmt::format("expected a map of names to values, got {}", Describe(v)));
    return;
  }
  for (const auto& [key, value] : v.items()) {
    std::string p = KeyPath(path, key);
    if (s.key_rule == KeyRule::kLabelKey) {
      if (Status st = ValidateLabelKey(key); !st.ok()) errors.Add(p, st.message());
    }
    if (value.is_null() && s.null_elements) continue;
    Validate(*s.element, value, p, errors);
  }
}

void CheckResourceList(const Schema& s, const json& v, const std::string& path, Errors& errors) {
  if (!v.is_object()) {
    errors.Add(path, fmt::format("expected a map of resource names to quantities, got {}",
                                 Describe(v)));
    return;
  }
  for (const auto& [key, value] : v.items()) {
    std::string p = KeyPath(path, key);
    size_t before = errors.count();
    if (s.quota_keys) {
      CheckQuotaResourceName(key, p, errors);
    } else {
      CheckContainerResourceName(key, p, errors);
    }
    if (errors.count() != before) continue;
    CheckAmount(s.quota_keys ? QuotaBaseName(key) : std::string_view(key), value, p, errors);
  }
}

void Validate(const Schema& s, const json& v, const std::string& path, Errors& errors) {
  size_t before = errors.count();
  switch (s.type) {
    case Type::kString: CheckString(s, v, path, errors); break;
    case Type::kInt: CheckInt(s, v, path, errors); break;
    case Type::kBool:
      if (!v.is_boolean()) {
        errors.Add(path, fmt::format("expected true or false, got {}", Describe(v)));
      }
      break;
    case Type::kQuantity: {
      std::optional<std::string> text = QuantityTextOf(v);
      if (!text) {
        errors.Add(path, fmt::format("expected a quantity such as \"2\", \"500m\" or \"64Gi\", got {}",
                                     Describe(v)));
      } else if (auto q = ParseAmount(Unit::kGeneric, *text); !q) {
        errors.Add(path, q.error().message());
      }
      break;
    }
    case Type::kIntOrString:
      if (!v.is_string() && !v.is_number_integer() && !v.is_number_unsigned()) {
        errors.Add(path, fmt::format("expected an integer or a string, got {}", Describe(v)));
      }
      break;
    case Type::kObject: CheckObject(s, v, path, errors); break;
    case Type::kArray: CheckArray(s, v, path, errors); break;
    case Type::kMap: CheckMap(s, v, path, errors); break;
    case Type::kResourceList: CheckResourceList(s, v, path, errors); break;
    case Type::kAny: break;
  }
  if (errors.count() != before) return;  // cross-field rules assume a sound structure
  for (const Check& check : s.checks) check(v, path, errors);
}

// Field access for checks, which run on structurally valid values only.
const json* Get(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}
std::string GetString(const json& obj, std::string_view key) {
  const json* v = Get(obj, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}
std::optional<int64_t> GetInt(const json& obj, std::string_view key) {
  const json* v = Get(obj, key);
  if (!v || !v->is_number()) return std::nullopt;
  return v->is_number_float() ? static_cast<int64_t>(v->get<double>()) : v->get<int64_t>();
}

// ===========================================================================
// Shared pieces of the kinds' schemas.

SchemaRef LabelMap() { return MapOf(Str(StringRule::kLabelValue), KeyRule::kLabelKey); }

SchemaRef AnnotationMap() {
  auto s = *MapOf(Str(), KeyRule::kLabelKey);
  s.checks.push_back([](const json& v, const std::string& path, Errors& errors) {
    size_t total = 0;
    for (const auto& [k, val] : v.items()) total += k.size() + val.get_ref<const std::string&>().size();
    if (total > kMaxAnnotationBytes) {
      errors.Add(path, fmt::format("annotations take {} bytes, more than the limit of {}", total,
                                   kMaxAnnotationBytes));
    }
  });
  return Make(std::move(s));
}

SchemaRef ObjectMeta() {
  static const SchemaRef s = Obj({
      Opt("name", Str()),
      Opt("generateName", Str()),
      Opt("namespace", Str(StringRule::kNamespace)),
      Opt("labels", LabelMap()),
      Opt("annotations", AnnotationMap()),
      Opt("uid", Str()),
      Opt("resourceVersion", Str()),
      Opt("generation", Int64()),
      Opt("creationTimestamp", Str()),
      Opt("deletionTimestamp", Str()),
      Opt("deletionGracePeriodSeconds", Int64()),
      Opt("finalizers", Arr(Str(StringRule::kQualifiedName))),
      Opt("ownerReferences", Arr(Obj({
                                 Req("apiVersion", Str()),
                                 Req("kind", Str()),
                                 Req("name", Str()),
                                 Req("uid", Str()),
                                 Opt("controller", Bool()),
                                 Opt("blockOwnerDeletion", Bool()),
                             }))),
      Opt("managedFields", Arr(OpenObj())),
      Opt("selfLink", Str()),
  });
  return s;
}

// In/NotIn need values; Exists/DoesNotExist take none.
void CheckRequirementValues(const json& v, const std::string& path, Errors& errors,
                            std::string_view op_field) {
  std::string op = GetString(v, op_field);
  const json* values = Get(v, "values");
  bool has_values = values && !values->empty();
  if ((op == "In" || op == "NotIn") && !has_values) {
    errors.Add(FieldPath(path, "values"), fmt::format("required for operator {}", op));
  } else if ((op == "Exists" || op == "DoesNotExist") && has_values) {
    errors.Add(FieldPath(path, "values"), fmt::format("must be empty for operator {}", op));
  }
}

SchemaRef LabelSelector() {
  static const SchemaRef s = Obj({
      Opt("matchLabels", LabelMap()),
      Opt("matchExpressions",
          Arr(Obj({Req("key", Str(StringRule::kQualifiedName)),
                   Req("operator", Enum({"In", "NotIn", "Exists", "DoesNotExist"})),
                   Opt("values", Arr(Str()))},
                  {[](const json& v, const std::string& path, Errors& errors) {
                    CheckRequirementValues(v, path, errors, "operator");
                  }}))),
  });
  return s;
}

SchemaRef Taint() {
  static const SchemaRef s = Obj({
      Req("key", Str(StringRule::kQualifiedName)),
      Opt("value", Str(StringRule::kLabelValue)),
      Req("effect", Enum({"NoSchedule", "PreferNoSchedule", "NoExecute"})),
      Opt("timeAdded", Str()),
  });
  return s;
}

SchemaRef Toleration() {
  static const SchemaRef s = Obj(
      {
          Opt("key", Str()),
          Opt("operator", Enum({"Exists", "Equal"})),
          Opt("value", Str()),
          Opt("effect", Enum({"", "NoSchedule", "PreferNoSchedule", "NoExecute"})),
          Opt("tolerationSeconds", Int64(std::numeric_limits<int64_t>::min())),
      },
      {[](const json& v, const std::string& path, Errors& errors) {
        std::string key = GetString(v, "key");
        std::string op = GetString(v, "operator");
        if (!key.empty()) {
          if (Status st = CheckQualifiedName(key); !st.ok()) {
            errors.Add(FieldPath(path, "key"), st.message());
          }
        } else if (op != "Exists") {
          errors.Add(FieldPath(path, "operator"),
                     "must be Exists when key is empty (a toleration of every taint)");
        }
        if (op == "Exists" && !GetString(v, "value").empty()) {
          errors.Add(FieldPath(path, "value"), "must be empty when operator is Exists");
        }
      }});
  return s;
}

// requests[r] <= limits[r] for every resource both list (Kubernetes' rule).
void CheckRequestsWithinLimits(const json& v, const std::string& path, Errors& errors) {
  const json* requests = Get(v, "requests");
  const json* limits = Get(v, "limits");
  if (!requests || !limits) return;
  for (const auto& [name, req] : requests->items()) {
    auto lim = limits->find(name);
    if (lim == limits->end() || lim->is_null()) continue;
    Errors ignored;
    auto r = CheckAmount(name, req, "", ignored);
    auto l = CheckAmount(name, *lim, "", ignored);
    if (r && l && *r > *l) {
      errors.Add(KeyPath(FieldPath(path, "requests"), name),
                 fmt::format("{} is more than the limit {}", *QuantityTextOf(req),
                             *QuantityTextOf(*lim)));
    }
  }
}

SchemaRef ResourceRequirements() {
  static const SchemaRef s = Obj(
      {
          Opt("limits", ResourceList()),
          Opt("requests", ResourceList()),
          Opt("claims", Arr(Obj({Req("name", Str()), Opt("request", Str())}))),
      },
      {CheckRequestsWithinLimits});
  return s;
}

SchemaRef Container() {
  static const SchemaRef s = [] {
    SchemaRef key_ref = Obj({Opt("name", Str()), Req("key", Str()), Opt("optional", Bool())});
    SchemaRef source_ref = Obj({Opt("name", Str()), Opt("optional", Bool())});
    SchemaRef env_var = Obj({
        Req("name", Str()),
        Opt("value", Str()),
        Opt("valueFrom", Obj({
                             Opt("fieldRef", Obj({Opt("apiVersion", Str()), Req("fieldPath", Str())})),
                             Opt("resourceFieldRef", Obj({Opt("containerName", Str()),
                                                          Req("resource", Str()),
                                                          Opt("divisor", Qty())})),
                             Opt("configMapKeyRef", key_ref),
                             Opt("secretKeyRef", key_ref),
                         })),
    });
    SchemaRef port = Obj({
        Opt("name", Str()),
        Req("containerPort", Int(1, 65535)),
        Opt("protocol", Enum({"TCP", "UDP", "SCTP"})),
        Opt("hostPort", Int(0, 65535)),
        Opt("hostIP", Str()),
    });
    SchemaRef mount = Obj({
        Req("name", Str()),
        Req("mountPath", Str()),
        Opt("readOnly", Bool()),
        Opt("subPath", Str()),
        Opt("subPathExpr", Str()),
        Opt("mountPropagation", Enum({"None", "HostToContainer", "Bidirectional"})),
        Opt("recursiveReadOnly", Enum({"Disabled", "IfPossible", "Enabled"})),
    });
    return Obj({
        Req("name", Str(StringRule::kDns1123Label)),
        Opt("image", Str()),
        Opt("command", Arr(Str())),
        Opt("args", Arr(Str())),
        Opt("workingDir", Str()),
        Opt("ports", Arr(port)),
        Opt("envFrom", Arr(Obj({Opt("prefix", Str()), Opt("configMapRef", source_ref),
                                Opt("secretRef", source_ref)}))),
        Opt("env", Arr(env_var)),
        Opt("resources", ResourceRequirements()),
        Opt("resizePolicy", Arr(OpenObj())),
        Opt("restartPolicy", Enum({"Always"})),  // init containers as sidecars
        Opt("volumeMounts", Arr(mount)),
        Opt("volumeDevices", Arr(OpenObj())),
        Opt("livenessProbe", OpenObj()),
        Opt("readinessProbe", OpenObj()),
        Opt("startupProbe", OpenObj()),
        Opt("lifecycle", OpenObj()),
        Opt("terminationMessagePath", Str()),
        Opt("terminationMessagePolicy", Enum({"File", "FallbackToLogsOnError"})),
        Opt("imagePullPolicy", Enum({"Always", "Never", "IfNotPresent"})),
        Opt("securityContext", OpenObj()),
        Opt("stdin", Bool()),
        Opt("stdinOnce", Bool()),
        Opt("tty", Bool()),
    });
  }();
  return s;
}

// A pod volume: the sources Tessera mounts (docs/agent.md, "Volumes") checked
// field by field; others are left to the agent, which names what it does not
// support. One source a volume.
SchemaRef Volume() {
  static const SchemaRef s = [] {
    SchemaRef mode = Int(0, 0777);
    SchemaRef items = Arr(Obj({Req("key", Str()), Req("path", Str()), Opt("mode", mode)},
                              {[](const json& v, const std::string& path, Errors& errors) {
                                const std::string p = GetString(v, "path");
                                bool dots = false;
                                for (size_t start = 0; start <= p.size();) {
                                  size_t slash = p.find('/', start);
                                  if (slash == std::string::npos) slash = p.size();
                                  dots = dots || p.substr(start, slash - start) == "..";
                                  start = slash + 1;
                                }
                                if (p.starts_with("/") || dots) {
                                  errors.Add(FieldPath(path, "path"),
                                             fmt::format("Invalid value: \"{}\": must be a relative path without '..'", p));
                                }
                              }}));
    SchemaRef host_path_type = Enum({"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket",
                                     "CharDevice", "BlockDevice"});
    return Make({.type = Type::kObject,
                 .fields = {Req("name", Str(StringRule::kDns1123Label)),
                            Opt("emptyDir", Obj({Opt("medium", Enum({"", "Memory"})), Opt("sizeLimit", Qty())})),
                            Opt("configMap", Obj({Req("name", Str()), Opt("items", items), Opt("defaultMode", mode),
                                                  Opt("optional", Bool())})),
                            Opt("secret", Obj({Req("secretName", Str()), Opt("items", items), Opt("defaultMode", mode),
                                               Opt("optional", Bool())})),
                            Opt("hostPath", Obj({Req("path", Str()), Opt("type", host_path_type)})),
                            Opt("persistentVolumeClaim", Obj({Req("claimName", Str()), Opt("readOnly", Bool())}))},
                 .open = true,
                 .checks = {[](const json& v, const std::string& path, Errors& errors) {
                   int sources = 0;
                   for (const auto& [key, unused] : v.items()) sources += key != "name" ? 1 : 0;
                   if (sources > 1) errors.Add(path, "Forbidden: may not specify more than 1 volume type");
                   const std::string host = GetString(Get(v, "hostPath") ? *Get(v, "hostPath") : json::object(), "path");
                   if (Get(v, "hostPath") && !host.starts_with("/")) {
                     errors.Add(FieldPath(path, "hostPath.path"),
                                fmt::format("Invalid value: \"{}\": must be an absolute path", host));
                   }
                 }}});
  }();
  return s;
}

// Container names are unique across containers and initContainers.
void CheckContainerNames(const json& spec, const std::string& path, Errors& errors) {
  std::set<std::string> seen;
  for (std::string_view list : {"initContainers", "containers"}) {
    const json* containers = Get(spec, list);
    if (!containers) continue;
    for (size_t i = 0; i < containers->size(); ++i) {
      std::string name = GetString((*containers)[i], "name");
      if (!seen.insert(name).second) {
        errors.Add(FieldPath(IndexPath(FieldPath(path, list), i), "name"),
                   fmt::format("duplicate container name \"{}\"", name));
      }
    }
  }
}

SchemaRef PodSpec() {
  static const SchemaRef s = Obj(
      {
          Opt("volumes", Arr(Volume())),
          Opt("initContainers", Arr(Container())),
          Req("containers", Arr(Container(), /*non_empty=*/true)),
          Opt("ephemeralContainers", Arr(OpenObj())),
          Opt("restartPolicy", Enum({"Always", "OnFailure", "Never"})),
          Opt("terminationGracePeriodSeconds", Int64()),
          Opt("activeDeadlineSeconds", Int64(1)),
          Opt("dnsPolicy", Enum({"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"})),
          Opt("nodeSelector", LabelMap()),
          Opt("serviceAccountName", Str()),
          Opt("serviceAccount", Str()),
          Opt("automountServiceAccountToken", Bool()),
          Opt("nodeName", Str()),
          Opt("hostNetwork", Bool()),
          Opt("hostPID", Bool()),
          Opt("hostIPC", Bool()),
          Opt("shareProcessNamespace", Bool()),
          Opt("securityContext", OpenObj()),
          Opt("imagePullSecrets", Arr(Obj({Opt("name", Str())}))),
          Opt("hostname", Str()),
          Opt("subdomain", Str()),
          Opt("affinity", OpenObj()),
          Opt("schedulerName", Str()),
          Opt("tolerations", Arr(Toleration())),
          Opt("hostAliases", Arr(OpenObj())),
          Opt("priorityClassName", Str()),
          Opt("priority", Int(kInt32Min)),
          Opt("dnsConfig", OpenObj()),
          Opt("readinessGates", Arr(OpenObj())),
          Opt("runtimeClassName", Str()),
          Opt("enableServiceLinks", Bool()),
          Opt("preemptionPolicy", Enum({"PreemptLowerPriority", "Never"})),
          Opt("overhead", ResourceList()),
          Opt("topologySpreadConstraints", Arr(OpenObj())),
          Opt("setHostnameAsFQDN", Bool()),
          Opt("os", OpenObj()),
          Opt("hostUsers", Bool()),
          Opt("schedulingGates", Arr(Obj({Req("name", Str())}))),
          Opt("resourceClaims", Arr(OpenObj())),
          Opt("resources", ResourceRequirements()),
      },
      {CheckContainerNames});
  return s;
}

SchemaRef PodTemplateSpec() {
  static const SchemaRef s = Obj({Opt("metadata", ObjectMeta()), Req("spec", PodSpec())});
  return s;
}

// A whole object: apiVersion, kind, metadata, the kind's own fields, and status
// (accepted with any content, never checked: the server owns it).
SchemaRef Root(std::vector<FieldSpec> fields, std::vector<Check> checks = {}) {
  fields.insert(fields.begin(), {Opt("apiVersion", Str()), Opt("kind", Str()),
                                 Opt("metadata", ObjectMeta())});
  fields.push_back(Opt("status", Any()));
  return Obj(std::move(fields), std::move(checks));
}

// ===========================================================================
// The kinds.

SchemaRef NamespaceSchema() {
  return Root({Opt("spec", Obj({Opt("finalizers", Arr(Str()))}))});
}

SchemaRef ResourceQuotaSchema() {
  SchemaRef scope = Enum({"Terminating", "NotTerminating", "BestEffort", "NotBestEffort",
                          "PriorityClass", "CrossNamespacePodAffinity"});
  return Root({Opt("spec", Obj({
                               Opt("hard", ResourceList(/*quota_keys=*/true)),
                               Opt("scopes", Arr(scope)),
                               Opt("scopeSelector",
                                   Obj({Opt("matchExpressions",
                                            Arr(Obj({Req("scopeName", scope),
                                                     Req("operator", Enum({"In", "NotIn", "Exists",
                                                                           "DoesNotExist"})),
                                                     Opt("values", Arr(Str()))},
                                                    {[](const json& v, const std::string& path,
                                                        Errors& errors) {
                                                      CheckRequirementValues(v, path, errors,
                                                                             "operator");
                                                    }})))})),
                           }))});
}

SchemaRef PodSchema() { return Root({Req("spec", PodSpec())}); }

// A Node's pod ranges: each an IPv4 CIDR (domain/ipv4_cidr.h); one of them
// (single stack: IPv4 only); podCIDR, when both are given, the first of podCIDRs.
void CheckPodCidrs(const json& spec, const std::string& path, Errors& errors) {
  auto check = [&](const json& v, const std::string& at) {
    if (!v.is_string()) return;  // the schema says so
    auto cidr = ParseIpv4Cidr(v.get_ref<const std::string&>());
    if (!cidr) errors.Add(at, fmt::format("Invalid value: {}", cidr.error().message()));
  };
  const json* single = Get(spec, "podCIDR");
  if (single && single->is_string() && !single->get_ref<const std::string&>().empty()) {
    check(*single, FieldPath(path, "podCIDR"));
  }
  const json* list = Get(spec, "podCIDRs");
  if (!list || !list->is_array()) return;
  for (size_t i = 0; i < list->size(); ++i) check((*list)[i], IndexPath(FieldPath(path, "podCIDRs"), i));
  if (list->size() > 1) {
    errors.Add(FieldPath(path, "podCIDRs"),
               fmt::format("Invalid value: {}: may specify no more than one CIDR (only IPv4 is supported)", Dump(*list)));
  }
  if (single && single->is_string() && !single->get_ref<const std::string&>().empty() && !list->empty() &&
      (*list)[0] != *single) {
    errors.Add(FieldPath(path, "podCIDR"), fmt::format("Invalid value: {}: must be the first of {} ({})", Dump(*single),
                                                       FieldPath(path, "podCIDRs"), Dump((*list)[0])));
  }
}

SchemaRef NodeSchema() {
  return Root({Opt("spec", Obj({
                               Opt("podCIDR", Str()),
                               Opt("podCIDRs", Arr(Str())),
                               Opt("providerID", Str()),
                               Opt("unschedulable", Bool()),
                               Opt("taints", Arr(Taint())),
                               Opt("configSource", OpenObj()),
                               Opt("externalID", Str()),
                           },
                           {CheckPodCidrs}))});
}

SchemaRef ObjectReference() {
  return Obj({Opt("kind", Str()), Opt("namespace", Str()), Opt("name", Str()), Opt("uid", Str()),
              Opt("apiVersion", Str()), Opt("resourceVersion", Str()), Opt("fieldPath", Str())});
}

SchemaRef EventSchema() {
  return Root({
      Req("involvedObject", ObjectReference()),
      Opt("reason", Str()),
      Opt("message", Str()),
      Opt("source", Obj({Opt("component", Str()), Opt("host", Str())})),
      Opt("firstTimestamp", Str()),
      Opt("lastTimestamp", Str()),
      Opt("count", Int()),
      Opt("type", Enum({"Normal", "Warning"})),
      Opt("eventTime", Str()),
      Opt("series", OpenObj()),
      Opt("action", Str()),
      Opt("related", ObjectReference()),
      Opt("reportingComponent", Str()),
      Opt("reportingInstance", Str()),
  });
}

SchemaRef LeaseSchema() {
  return Root({Opt("spec", Obj({
                               Opt("holderIdentity", Str()),
                               Opt("leaseDurationSeconds", Int(1)),
                               Opt("acquireTime", Str()),
                               Opt("renewTime", Str()),
                               Opt("leaseTransitions", Int(0)),
                               Opt("preferredHolder", Str()),
                               Opt("strategy", Str()),
                           }))});
}

// A usage interval the server records (server/usage_recorder.h).
SchemaRef UsageRecordSchema() {
  return Root({Req("spec", Obj({
                               Req("workload", Str()),
                               Opt("workloadUID", Str()),
                               Opt("clusterQueue", Str()),
                               Opt("flavor", Str()),
                               Req("gpuMilli", Int(0)),
                               Opt("devices", Arr(Str())),
                               Opt("user", Str()),
                               Req("start", Str()),
                               Opt("end", Str()),
                               Opt("usedGpuMilliSeconds", Int(0)),
                               Opt("usedUpdatedAt", Str()),
                           }))});
}

// v1 Secret: data values are base64 (the API's JSON form), keys as Kubernetes
// allows them; a kubernetes.io/dockerconfigjson one holds a .dockerconfigjson.
// stringData (write-only in Kubernetes) is not taken yet: give data.
SchemaRef SecretSchema() {
  return Root({Opt("type", Str()), Opt("data", MapOf(Str())), Opt("immutable", Bool())},
              {[](const json& v, const std::string& path, Errors& errors) {
                 static const std::string kBase64 =
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
                 const json data = v.value("data", json::object());
                 for (const auto& [key, value] : data.items()) {
                   const bool key_ok = !key.empty() && key.size() <= 253 && key != "." && key != ".." &&
                                       key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789-._") == std::string::npos;
                   if (!key_ok) {
                     errors.Add(FieldPath(FieldPath(path, "data"), key.c_str()),
                                "Invalid value: a valid config key must consist of alphanumeric characters, '-', '_' "
                                "or '.'");
                   }
                   const std::string text = value.is_string() ? value.get<std::string>() : "";
                   if (text.size() % 4 != 0 || text.find_first_not_of(kBase64) != std::string::npos) {
                     errors.Add(FieldPath(FieldPath(path, "data"), key.c_str()),
                                "Invalid value: must be base64 (the API's form of a Secret's bytes)");
                   }
                 }
                 if (v.value("type", "") == "kubernetes.io/dockerconfigjson" && !data.contains(".dockerconfigjson")) {
                   errors.Add(FieldPath(FieldPath(path, "data"), ".dockerconfigjson"),
                              "Required value: a kubernetes.io/dockerconfigjson Secret holds the registry credentials "
                              "there (kubectl create secret docker-registry makes one)");
                 }
               }});
}

// A ConfigMap's or Secret's key, as Kubernetes allows it (IsConfigMapKey).
bool ConfigKeyOk(const std::string& key) {
  return !key.empty() && key.size() <= 253 && key != "." && key != ".." &&
         key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") == std::string::npos;
}

// v1 ConfigMap: data (text) and binaryData (base64), keys as Kubernetes allows
// them and no key in both; immutable (then data cannot change, ValidateUpdate).
SchemaRef ConfigMapSchema() {
  return Root({Opt("data", MapOf(Str())), Opt("binaryData", MapOf(Str())), Opt("immutable", Bool())},
              {[](const json& v, const std::string& path, Errors& errors) {
                 static const std::string kBase64 =
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
                 const json data = v.value("data", json::object());
                 const json binary = v.value("binaryData", json::object());
                 size_t bytes = 0;
                 for (const auto& [key, value] : data.items()) {
                   if (!ConfigKeyOk(key)) {
                     errors.Add(FieldPath(FieldPath(path, "data"), key.c_str()),
                                "Invalid value: a valid config key must consist of alphanumeric characters, '-', '_' "
                                "or '.'");
                   }
                   if (value.is_string()) bytes += value.get_ref<const std::string&>().size();
                 }
                 for (const auto& [key, value] : binary.items()) {
                   if (!ConfigKeyOk(key)) {
                     errors.Add(FieldPath(FieldPath(path, "binaryData"), key.c_str()),
                                "Invalid value: a valid config key must consist of alphanumeric characters, '-', '_' "
                                "or '.'");
                   }
                   if (data.contains(key)) {
                     errors.Add(FieldPath(FieldPath(path, "binaryData"), key.c_str()),
                                "Invalid value: duplicate of key present in data");
                   }
                   const std::string text = value.is_string() ? value.get<std::string>() : "";
                   if (text.size() % 4 != 0 || text.find_first_not_of(kBase64) != std::string::npos) {
                     errors.Add(FieldPath(FieldPath(path, "binaryData"), key.c_str()),
                                "Invalid value: must be base64 (the API's form of a ConfigMap's bytes)");
                   }
                   bytes += text.size() / 4 * 3;
                 }
                 // Kubernetes' limit (MaxSecretSize, 1 MiB), over data and binaryData together.
                 if (bytes > 1024 * 1024) {
                   errors.Add(FieldPath(path, "data"),
                              "Too long: must have at most 1048576 bytes");
                 }
               }});
}

// v1 PersistentVolumeClaim: a directory on the nodes' shared volume root
// (docs/agent.md, "Persistent volumes"); Filesystem claims only, a size above 0.
SchemaRef PersistentVolumeClaimSchema() {
  SchemaRef mode = Enum({"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"});
  return Root({Req("spec", Obj({
                               Req("accessModes", Arr(mode, /*non_empty=*/true)),
                               Req("resources", Obj({Req("requests", Obj({Req("storage", Qty())})),
                                                     Opt("limits", Obj({Opt("storage", Qty())}))})),
                               Opt("storageClassName", Str()),
                               Opt("volumeMode", Enum({"Filesystem"})),
                               Opt("volumeName", Str()),
                               Opt("selector", LabelSelector()),
                           },
                           {[](const json& v, const std::string& path, Errors& errors) {
                             const json requests = v.value("resources", json::object()).value("requests", json::object());
                             Errors ignored;
                             auto bytes = requests.contains("storage")
                                              ? CheckAmount("storage", requests["storage"], "", ignored)
                                              : std::nullopt;
                             if (requests.contains("storage") && bytes && *bytes <= 0) {
                               errors.Add(FieldPath(path, "resources.requests.storage"),
                                          "Invalid value: must be greater than zero");
                             }
                           }}))});
}

SchemaRef ServiceAccountSchema() {
  return Root({
      Opt("secrets", Arr(ObjectReference())),
      Opt("imagePullSecrets", Arr(Obj({Opt("name", Str())}))),
      Opt("automountServiceAccountToken", Bool()),
  });
}

// authentication.k8s.io/v1 TokenRequest, the body of serviceaccounts/NAME/token.
SchemaRef TokenRequestSchema() {
  static const SchemaRef s = Root({Opt("spec", Obj({
                                                   Opt("audiences", Arr(Str())),
                                                   Opt("expirationSeconds", Int64(0)),
                                                   Opt("boundObjectRef", Obj({Opt("kind", Enum({"Pod", "Secret", "Node"})),
                                                                             Opt("apiVersion", Str()),
                                                                             Opt("name", Str()),
                                                                             Opt("uid", Str())})),
                                               }))});
  return s;
}

SchemaRef SelfSubjectAccessReviewSchema() {
  SchemaRef resource = Obj({Opt("namespace", Str()), Opt("verb", Str()), Opt("group", Str()), Opt("version", Str()),
                            Opt("resource", Str()), Opt("subresource", Str()), Opt("name", Str()),
                            Opt("fieldSelector", OpenObj()), Opt("labelSelector", OpenObj())});
  SchemaRef non_resource = Obj({Opt("path", Str()), Opt("verb", Str())});
  return Root({Req("spec", Obj({Opt("resourceAttributes", resource), Opt("nonResourceAttributes", non_resource)},
                               {[](const json& v, const std::string& path, Errors& errors) {
                                 const bool resource = Get(v, "resourceAttributes") != nullptr;
                                 const bool non_resource = Get(v, "nonResourceAttributes") != nullptr;
                                 if (resource == non_resource) {
                                   errors.Add(path, "exactly one of resourceAttributes or nonResourceAttributes must "
                                                    "be specified");
                                 }
                               }}))});
}

SchemaRef SelfSubjectRulesReviewSchema() { return Root({Req("spec", Obj({Opt("namespace", Str())}))}); }

SchemaRef SelfSubjectReviewSchema() { return Root({}); }

// A decimal amount of money or GPU-hours ("5000", "2.10", 100): at most three
// decimals, not negative.
void CheckDecimal(const json& v, const std::string& path, Errors& errors) {
  std::optional<std::string> text = QuantityTextOf(v);
  auto milli = text ? ParseMilli(*text) : Result<int64_t>(Err(Status::InvalidArgument("")));
  if (!milli || *milli < 0) {
    errors.Add(path, fmt::format("expected an amount such as \"5000\" or \"2.10\" (at most 3 decimals, not negative), "
                                 "got {}",
                                 Describe(v)));
  }
}
SchemaRef Decimal() { return Make({.type = Type::kAny, .checks = {CheckDecimal}}); }

// A Go duration ("24h", "90m").
SchemaRef DurationText() {
  return Make({.type = Type::kString, .checks = {[](const json& v, const std::string& path, Errors& errors) {
                 if (!v.is_string() || !ParseDuration(v.get<std::string>())) {
                   errors.Add(path, fmt::format("expected a duration such as \"24h\" or \"30m\", got {}", Describe(v)));
                 }
               }}});
}

SchemaRef BudgetSchema() {
  return Root({Req("spec", Obj({Opt("period", Enum({"Daily", "Weekly", "Monthly"})), Opt("gpuHours", Decimal()),
                                Opt("cost", Decimal())},
                               {[](const json& v, const std::string& path, Errors& errors) {
                                 if (!Get(v, "gpuHours") && !Get(v, "cost")) {
                                   errors.Add(path, "a budget needs gpuHours, cost or both");
                                 }
                               }}))});
}

SchemaRef ApprovalPolicySchema() {
  return Root({Req("spec", Obj({
                               Opt("namespaceSelector", LabelSelector()),
                               Req("thresholds", Obj({Opt("gpus", Decimal()), Opt("gpuHours", Decimal()),
                                                      Opt("estimatedCost", Decimal()),
                                                      Opt("priorityClasses", Arr(Str())),
                                                      Opt("overNominalQuota", Bool())},
                                                     {[](const json& v, const std::string& path, Errors& errors) {
                                                       if (v.empty()) {
                                                         errors.Add(path, "set at least one threshold: gpus, gpuHours, "
                                                                          "estimatedCost, priorityClasses or "
                                                                          "overNominalQuota");
                                                       }
                                                     }})),
                               Opt("requiredApprovals", Int(1, 100)),
                               Opt("allowSelfApproval", Bool()),
                               Opt("expireAfter", DurationText()),
                           }))});
}

SchemaRef ApprovalRequestSchema() {
  return Root({Req("spec", Obj({
                               Req("workload", Str()),
                               Opt("workloadUID", Str()),
                               Opt("requester", Str()),
                               Opt("policies", Arr(Str())),
                               Opt("reasons", Arr(Str())),
                               Opt("requiredApprovals", Int(1, 100)),
                               Opt("allowSelfApproval", Bool()),
                               Opt("specHash", Str()),
                               Opt("expiresAt", Str()),
                               Opt("approvers", Arr(Str())),
                           }))});
}

SchemaRef PriorityClassSchema() {
  return Root({
      Req("value", Int(kInt32Min, kHighestUserPriority)),
      Opt("globalDefault", Bool()),
      Opt("description", Str()),
      Opt("preemptionPolicy", Enum({"PreemptLowerPriority", "Never"})),
  });
}

SchemaRef PolicyRule() {
  return Obj({
      Req("verbs", Arr(Str(), /*non_empty=*/true)),
      Opt("apiGroups", Arr(Str())),
      Opt("resources", Arr(Str())),
      Opt("resourceNames", Arr(Str())),
      Opt("nonResourceURLs", Arr(Str())),
  });
}

SchemaRef RoleSchema() {
  return Root({Opt("rules", Arr(PolicyRule()))},
              {[](const json& v, const std::string&, Errors& errors) {
                const json* rules = Get(v, "rules");
                if (!rules) return;
                for (size_t i = 0; i < rules->size(); ++i) {
                  const json* urls = Get((*rules)[i], "nonResourceURLs");
                  if (urls && !urls->empty()) {
                    errors.Add(FieldPath(IndexPath("rules", i), "nonResourceURLs"),
                               "a namespaced Role cannot grant non-resource URLs (use a ClusterRole)");
                  }
                }
              }});
}

SchemaRef ClusterRoleSchema() {
  return Root({
      Opt("rules", Arr(PolicyRule())),
      Opt("aggregationRule", Obj({Opt("clusterRoleSelectors", Arr(LabelSelector()))})),
  });
}

SchemaRef BindingSchema(bool cluster) {
  SchemaRef subject = Obj({
      Req("kind", Enum({"User", "Group", "ServiceAccount"})),
      Opt("apiGroup", Str()),
      Req("name", Str()),
      Opt("namespace", Str()),
  });
  SchemaRef role_ref = Obj({
      Opt("apiGroup", Str()),
      Req("kind", cluster ? Enum({"ClusterRole"}) : Enum({"Role", "ClusterRole"})),
      Req("name", Str()),
  });
  return Root({Opt("subjects", Arr(subject)), Req("roleRef", role_ref)});
}

SchemaRef NetworkPolicySchema() {
  SchemaRef peer = Obj({
      Opt("podSelector", LabelSelector()),
      Opt("namespaceSelector", LabelSelector()),
      Opt("ipBlock", Obj({Req("cidr", Str()), Opt("except", Arr(Str()))})),
  });
  SchemaRef port = Obj({
      Opt("protocol", Enum({"TCP", "UDP", "SCTP"})),
      Opt("port", IntOrStr()),
      Opt("endPort", Int(1, 65535)),
  });
  return Root({Opt("spec", Obj({
                               Opt("podSelector", LabelSelector()),
                               Opt("policyTypes", Arr(Enum({"Ingress", "Egress"}))),
                               Opt("ingress", Arr(Obj({Opt("from", Arr(peer)), Opt("ports", Arr(port))}))),
                               Opt("egress", Arr(Obj({Opt("to", Arr(peer)), Opt("ports", Arr(port))}))),
                           }))});
}

// ---------------------------------------------------------------------------
// v1 Service (ClusterIP only) and discovery.k8s.io/v1 EndpointSlice, with
// kube-apiserver's words for what it refuses (ValidateService).

// Kubernetes' IsValidPortName (IANA_SVC_NAME): each rule broken is one error.
void CheckPortName(const json& value, const std::string& path, Errors& errors) {
  const std::string& name = value.get_ref<const std::string&>();
  const std::string shown = Dump(value);
  if (name.size() > 15) errors.Add(path, fmt::format("Invalid value: {}: must be no more than 15 characters", shown));
  if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
    errors.Add(path, fmt::format("Invalid value: {}: must contain only alpha-numeric characters (a-z, 0-9), and "
                                 "hyphens (-)",
                                 shown));
  }
  if (name.find_first_of("abcdefghijklmnopqrstuvwxyz") == std::string::npos) {
    errors.Add(path, fmt::format("Invalid value: {}: must contain at least one letter (a-z)", shown));
  }
  if (name.find("--") != std::string::npos) {
    errors.Add(path, fmt::format("Invalid value: {}: must not contain consecutive hyphens", shown));
  }
  if (!name.empty() && (name.front() == '-' || name.back() == '-')) {
    errors.Add(path, fmt::format("Invalid value: {}: must not begin or end with a hyphen", shown));
  }
}

void CheckPortNumber(const json& value, const std::string& path, Errors& errors) {
  const int64_t n = value.get<int64_t>();
  if (n < 1 || n > 65535) errors.Add(path, fmt::format("Invalid value: {}: must be between 1 and 65535, inclusive", n));
}

// A string field that takes one of `supported` ("" is the default, taken too);
// `why` is added after Kubernetes' list.
void CheckSupported(const json& spec, const char* field, const std::string& path,
                    std::initializer_list<std::string_view> supported, std::string_view why, Errors& errors) {
  const json* v = Get(spec, field);
  if (!v) return;
  const std::string& text = v->get_ref<const std::string&>();
  if (text.empty() || std::find(supported.begin(), supported.end(), text) != supported.end()) return;
  std::string list;
  for (std::string_view s : supported) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", s);
  errors.Add(FieldPath(path, field), fmt::format("Unsupported value: {}: supported values: {}{}", Dump(*v), list,
                                                 why.empty() ? "" : fmt::format(" ({})", why)));
}

// A cluster IP as written: "" (allocated at create), "None" (headless) or an
// IPv4 address (the range and whether it is free are the server's to check).
void CheckClusterIpText(const json& value, const std::string& path, Errors& errors) {
  const std::string& ip = value.get_ref<const std::string&>();
  if (ip.empty() || ip == "None" || ParseIpv4Address(ip)) return;
  if (ip.find(':') != std::string::npos) {
    errors.Add(path, fmt::format("Invalid value: {}: only IPv4 is supported (this cluster is IPv4 single-stack)",
                                 Dump(value)));
    return;
  }
  errors.Add(path, fmt::format("Invalid value: {}: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                               Dump(value)));
}

void CheckServiceSpec(const json& spec, const std::string& path, Errors& errors) {
  CheckSupported(spec, "type", path, {"ClusterIP"},
                 "Tessera serves only ClusterIP Services; NodePort, LoadBalancer and ExternalName are not supported",
                 errors);
  CheckSupported(spec, "sessionAffinity", path, {"None"}, "ClientIP affinity is not supported", errors);
  CheckSupported(spec, "internalTrafficPolicy", path, {"Cluster"},
                 "Local is not supported: traffic goes to every ready endpoint", errors);
  if (const json* policy = Get(spec, "ipFamilyPolicy"); policy && *policy == "RequireDualStack") {
    errors.Add(FieldPath(path, "ipFamilyPolicy"),
               "Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services");
  }
  if (const json* families = Get(spec, "ipFamilies")) {
    if (families->size() > 1) {
      errors.Add(FieldPath(path, "ipFamilies"),
                 fmt::format("Invalid value: {}: this cluster is not configured for dual-stack services", Dump(*families)));
    }
    for (size_t i = 0; i < families->size(); ++i) {
      if ((*families)[i] != "IPv4") {
        errors.Add(IndexPath(FieldPath(path, "ipFamilies"), i),
                   fmt::format("Unsupported value: {}: supported values: \"IPv4\"", Dump((*families)[i])));
      }
    }
  }

  // clusterIP and clusterIPs: one IPv4 address (or "None"), the same in both.
  const json* ip = Get(spec, "clusterIP");
  const json* ips = Get(spec, "clusterIPs");
  if (ip) CheckClusterIpText(*ip, FieldPath(path, "clusterIP"), errors);
  if (ips) {
    for (size_t i = 0; i < ips->size(); ++i) CheckClusterIpText((*ips)[i], IndexPath(FieldPath(path, "clusterIPs"), i), errors);
    if (ips->size() > 1) {
      errors.Add(FieldPath(path, "clusterIPs"),
                 fmt::format("Invalid value: {}: may hold no more than one IP (this cluster is IPv4 single-stack)",
                             Dump(*ips)));
    }
    if (ip && !ip->get_ref<const std::string&>().empty() && !ips->empty() && (*ips)[0] != *ip) {
      errors.Add(IndexPath(FieldPath(path, "clusterIPs"), 0),
                 fmt::format("Invalid value: {}: must match clusterIP {} when both are given", Dump((*ips)[0]), Dump(*ip)));
    }
  }
  const bool headless = (ip && *ip == "None") || (ips && !ips->empty() && (*ips)[0] == "None");

  // Ports: at least one (unless headless), named when more than one, unique.
  const json* ports = Get(spec, "ports");
  const std::string ports_path = FieldPath(path, "ports");
  if (!ports || ports->empty()) {
    if (!headless) errors.Add(ports_path, "Required value");
    return;
  }
  std::set<std::string> names;
  std::set<std::pair<int64_t, std::string>> numbers;
  for (size_t i = 0; i < ports->size(); ++i) {
    const json& p = (*ports)[i];
    const std::string at = IndexPath(ports_path, i);
    const std::string name = GetString(p, "name");
    if (name.empty()) {
      if (ports->size() > 1) errors.Add(FieldPath(at, "name"), "Required value");
    } else {
      if (!IsDns1123Label(name)) {
        errors.Add(FieldPath(at, "name"), fmt::format("Invalid value: \"{}\": {}", name, kLabelMessage));
      }
      if (!names.insert(name).second) errors.Add(FieldPath(at, "name"), fmt::format("Duplicate value: \"{}\"", name));
    }
    std::string protocol = GetString(p, "protocol");
    if (protocol.empty()) protocol = "TCP";
    if (protocol != "TCP" && protocol != "UDP" && protocol != "SCTP") {
      errors.Add(FieldPath(at, "protocol"),
                 fmt::format("Unsupported value: \"{}\": supported values: \"SCTP\", \"TCP\", \"UDP\"", protocol));
    }
    const json* port = Get(p, "port");
    if (!port) {
      errors.Add(FieldPath(at, "port"), "Required value");
    } else {
      CheckPortNumber(*port, FieldPath(at, "port"), errors);
      if (!numbers.emplace(port->get<int64_t>(), protocol).second) {
        errors.Add(at, fmt::format("Duplicate value: \"{}/{}\": a port and protocol may be given once",
                                   port->get<int64_t>(), protocol));
      }
    }
    // targetPort: a number or a container port's name; 0 and "" mean the port.
    if (const json* target = Get(p, "targetPort")) {
      if (target->is_string() && !target->get_ref<const std::string&>().empty()) {
        CheckPortName(*target, FieldPath(at, "targetPort"), errors);
      } else if (!target->is_string() && target->get<int64_t>() != 0) {
        CheckPortNumber(*target, FieldPath(at, "targetPort"), errors);
      }
    }
    if (const json* node_port = Get(p, "nodePort"); node_port && node_port->get<int64_t>() != 0) {
      errors.Add(FieldPath(at, "nodePort"), "Forbidden: may not be used when `type` is 'ClusterIP'");
    }
  }
}

SchemaRef ServiceSchema() {
  SchemaRef port = Obj({
      Opt("name", Str()),
      Opt("protocol", Str()),
      Opt("appProtocol", Str()),
      Opt("port", Int(kInt32Min)),
      Opt("targetPort", IntOrStr()),
      Opt("nodePort", Int(kInt32Min)),
  });
  return Root({Opt("spec", Obj(
                               {
                                   Opt("type", Str()),
                                   Opt("selector", LabelMap()),
                                   Opt("ports", Arr(port)),
                                   Opt("clusterIP", Str()),
                                   Opt("clusterIPs", Arr(Str())),
                                   Opt("sessionAffinity", Str()),
                                   Opt("publishNotReadyAddresses", Bool()),
                                   Opt("ipFamilies", Arr(Str())),
                                   Opt("ipFamilyPolicy", Enum({"SingleStack", "PreferDualStack", "RequireDualStack"})),
                                   Opt("internalTrafficPolicy", Str()),
                               },
                               {CheckServiceSpec}))});
}

SchemaRef EndpointSliceSchema() {
  SchemaRef endpoint = Obj({
      Req("addresses", Arr(Str(), /*non_empty=*/true)),
      Opt("conditions", Obj({Opt("ready", Bool()), Opt("serving", Bool()), Opt("terminating", Bool())})),
      Opt("hostname", Str(StringRule::kDns1123Label)),
      Opt("targetRef", ObjectReference()),
      Opt("nodeName", Str()),
      Opt("zone", Str()),
      Opt("hints", OpenObj()),
      Opt("deprecatedTopology", MapOf(Str())),
  });
  SchemaRef port = Obj({
      Opt("name", Str()),
      Opt("protocol", Enum({"TCP", "UDP", "SCTP"})),
      Opt("port", Int(0, 65535)),
      Opt("appProtocol", Str()),
  });
  return Root({Req("addressType", Enum({"IPv4", "IPv6", "FQDN"})), Opt("endpoints", Arr(endpoint)),
               Opt("ports", Arr(port))});
}

// ---------------------------------------------------------------------------
// Kueue v1beta1.

SchemaRef ResourceFlavorSchema() {
  return Root({Opt("spec", Obj({
                               Opt("nodeLabels", LabelMap()),
                               Opt("nodeTaints", Arr(Taint())),
                               Opt("tolerations", Arr(Toleration())),
                               Opt("topologyName", Str()),
                           }))},
              {[](const json& v, const std::string&, Errors& errors) {
                // Budgets and reports charge by the flavor's price: a typo must not make it free.
                const json* meta = Get(v, "metadata");
                const json* annotations = meta ? Get(*meta, "annotations") : nullptr;
                const json* price = annotations ? Get(*annotations, "tessera.dev/price-per-gpu-hour") : nullptr;
                if (price) CheckDecimal(*price, "metadata.annotations[tessera.dev/price-per-gpu-hour]", errors);
              }});
}

// A flavor's quota for one resource: amounts in the resource's unit, and
// lendingLimit <= nominalQuota (Kueue's rule).
void CheckResourceQuota(const json& v, const std::string& path, Errors& errors) {
  std::string name = GetString(v, "name");
  std::optional<int64_t> nominal;
  for (std::string_view field : {"nominalQuota", "borrowingLimit", "lendingLimit"}) {
    const json* amount = Get(v, field);
    if (!amount) continue;
    auto parsed = CheckAmount(name, *amount, FieldPath(path, field), errors);
    if (field == "nominalQuota") nominal = parsed;
    if (field == "lendingLimit" && parsed && nominal && *parsed > *nominal) {
      errors.Add(FieldPath(path, field),
                 fmt::format("{} is more than nominalQuota {}", *QuantityTextOf(*amount),
                             *QuantityTextOf(*Get(v, "nominalQuota"))));
    }
  }
}

// Every flavor lists the group's coveredResources (Kueue requires exactly them);
// borrowingLimit only makes sense in a cohort (Kueue refuses it without one).
void CheckClusterQueueSpec(const json& spec, const std::string& path, Errors& errors) {
  bool has_cohort = !GetString(spec, "cohort").empty();
  const json* groups = Get(spec, "resourceGroups");
  if (!groups) return;
  for (size_t g = 0; g < groups->size(); ++g) {
    const json& group = (*groups)[g];
    std::string gpath = IndexPath(FieldPath(path, "resourceGroups"), g);
    std::vector<std::string> covered;
    if (const json* c = Get(group, "coveredResources")) {
      for (const json& r : *c) covered.push_back(r.get<std::string>());
    }
    const json* flavors = Get(group, "flavors");
    if (!flavors) continue;
    for (size_t f = 0; f < flavors->size(); ++f) {
      const json& flavor = (*flavors)[f];
      std::string fpath = IndexPath(FieldPath(gpath, "flavors"), f);
      const json* resources = Get(flavor, "resources");
      std::set<std::string> listed;
      for (size_t r = 0; resources && r < resources->size(); ++r) {
        const json& res = (*resources)[r];
        std::string rpath = IndexPath(FieldPath(fpath, "resources"), r);
        std::string name = GetString(res, "name");
        listed.insert(name);
        if (std::find(covered.begin(), covered.end(), name) == covered.end()) {
          errors.Add(FieldPath(rpath, "name"),
                     fmt::format("\"{}\" is not in this group's coveredResources", name));
        }
        if (!has_cohort && Get(res, "borrowingLimit")) {
          errors.Add(FieldPath(rpath, "borrowingLimit"),
                     "must not be set when spec.cohort is empty (there is no one to borrow from)");
        }
      }
      for (const std::string& c : covered) {
        if (!listed.contains(c)) {
          errors.Add(FieldPath(fpath, "resources"),
                     fmt::format("missing \"{}\": every flavor lists each of coveredResources", c));
        }
      }
    }
  }
}

SchemaRef FairSharing() { return Obj({Opt("weight", Qty())}); }

SchemaRef ClusterQueueSchema() {
  SchemaRef resource = Obj({Req("name", Str()), Req("nominalQuota", Qty()),
                            Opt("borrowingLimit", Qty()), Opt("lendingLimit", Qty())},
                           {CheckResourceQuota});
  SchemaRef flavor = Obj({Req("name", Str(StringRule::kDns1123Subdomain)),
                          Req("resources", Arr(resource, /*non_empty=*/true))});
  SchemaRef group = Obj({Req("coveredResources", Arr(Str(), /*non_empty=*/true)),
                         Req("flavors", Arr(flavor, /*non_empty=*/true))});
  return Root({Opt("spec", Obj(
                               {
                                   Opt("cohort", Str(StringRule::kDns1123Subdomain)),
                                   Opt("namespaceSelector", LabelSelector()),
                                   Opt("resourceGroups", Arr(group)),
                                   Opt("queueingStrategy", Enum({"StrictFIFO", "BestEffortFIFO"})),
                                   Opt("preemption",
                                       Obj({
                                           Opt("reclaimWithinCohort",
                                               Enum({"Never", "LowerPriority", "Any"})),
                                           Opt("borrowWithinCohort",
                                               Obj({Opt("policy", Enum({"Never", "LowerPriority"})),
                                                    Opt("maxPriorityThreshold", Int(kInt32Min))})),
                                           Opt("withinClusterQueue",
                                               Enum({"Never", "LowerPriority",
                                                     "LowerOrNewerEqualPriority"})),
                                       })),
                                   Opt("flavorFungibility",
                                       Obj({Opt("whenCanBorrow", Enum({"Borrow", "TryNextFlavor"})),
                                            Opt("whenCanPreempt",
                                                Enum({"Preempt", "TryNextFlavor"}))})),
                                   Opt("fairSharing", FairSharing()),
                                   Opt("stopPolicy", Enum({"None", "Hold", "HoldAndDrain"})),
                                   Opt("admissionChecks", Arr(Str())),
                                   Opt("admissionChecksStrategy",
                                       Obj({Opt("admissionChecks",
                                                Arr(Obj({Req("name", Str()),
                                                         Opt("onFlavors", Arr(Str()))})))})),
                               },
                               {CheckClusterQueueSpec}))});
}

SchemaRef LocalQueueSchema() {
  return Root({Opt("spec", Obj({
                               Opt("clusterQueue", Str(StringRule::kDns1123Subdomain)),
                               Opt("stopPolicy", Enum({"None", "Hold", "HoldAndDrain"})),
                               Opt("fairSharing", FairSharing()),
                           }))});
}

SchemaRef WorkloadSchema() {
  SchemaRef pod_set = Obj(
      {
          Opt("name", Str(StringRule::kDns1123Label)),
          Opt("count", Int()),
          Opt("minCount", Int()),
          Req("template", PodTemplateSpec()),
          Opt("topologyRequest", OpenObj()),
      },
      {[](const json& v, const std::string& path, Errors& errors) {
        auto count = GetInt(v, "count");
        auto min_count = GetInt(v, "minCount");
        if (count && min_count && *min_count > *count) {
          errors.Add(FieldPath(path, "minCount"),
                     fmt::format("{} is more than count {}", *min_count, *count));
        }
      }});
  return Root({Opt("spec", Obj({
                               Req("podSets", Arr(pod_set, /*non_empty=*/true)),
                               Opt("queueName", Str()),
                               Opt("priorityClassName", Str()),
                               Opt("priority", Int(kInt32Min)),
                               Opt("priorityClassSource", Str()),
                               Opt("active", Bool()),
                               Opt("maximumExecutionTimeSeconds", Int(1)),
                           }))});
}

// ---------------------------------------------------------------------------
// batch/v1 Job and Volcano's Job.

// A Job's pods must not restart in place forever: Kubernetes requires
// restartPolicy OnFailure or Never (the pod default, Always, is refused).
void CheckBatchJobSpec(const json& spec, const std::string& path, Errors& errors) {
  const json* template_spec = Get(*Get(spec, "template"), "spec");
  std::string policy = template_spec ? GetString(*template_spec, "restartPolicy") : "";
  if (policy != "OnFailure" && policy != "Never") {
    errors.Add(FieldPath(path, "template.spec.restartPolicy"),
               fmt::format("{}; a Job's pods take \"OnFailure\" or \"Never\"",
                           policy.empty() ? std::string("required")
                                          : fmt::format("unsupported value \"{}\"", policy)));
  }
  if (GetString(spec, "completionMode") == "Indexed" && !GetInt(spec, "completions")) {
    errors.Add(FieldPath(path, "completions"), "required when completionMode is Indexed");
  }
}

SchemaRef BatchJobSchema() {
  return Root({Opt("spec", Obj(
                               {
                                   Opt("parallelism", Int()),
                                   Opt("completions", Int()),
                                   Opt("activeDeadlineSeconds", Int64(1)),
                                   Opt("podFailurePolicy", OpenObj()),
                                   Opt("successPolicy", OpenObj()),
                                   Opt("backoffLimit", Int()),
                                   Opt("backoffLimitPerIndex", Int()),
                                   Opt("maxFailedIndexes", Int()),
                                   Opt("selector", LabelSelector()),
                                   Opt("manualSelector", Bool()),
                                   Req("template", PodTemplateSpec()),
                                   Opt("ttlSecondsAfterFinished", Int()),
                                   Opt("completionMode", Enum({"NonIndexed", "Indexed"})),
                                   Opt("suspend", Bool()),
                                   Opt("podReplacementPolicy",
                                       Enum({"TerminatingOrFailed", "Failed"})),
                                   Opt("managedBy", Str()),
                               },
                               {CheckBatchJobSpec}))});
}

// minAvailable (the gang size) fits the tasks' replicas; task names are unique.
void CheckVolcanoJobSpec(const json& spec, const std::string& path, Errors& errors) {
  const json* tasks = Get(spec, "tasks");
  if (!tasks) return;
  int64_t replicas = 0;
  std::set<std::string> names;
  for (size_t i = 0; i < tasks->size(); ++i) {
    const json& task = (*tasks)[i];
    replicas += GetInt(task, "replicas").value_or(0);
    std::string name = GetString(task, "name");
    if (!name.empty() && !names.insert(name).second) {
      errors.Add(FieldPath(IndexPath(FieldPath(path, "tasks"), i), "name"),
                 fmt::format("duplicate task name \"{}\"", name));
    }
  }
  if (auto min_available = GetInt(spec, "minAvailable"); min_available && *min_available > replicas) {
    errors.Add(FieldPath(path, "minAvailable"),
               fmt::format("{} is more than the {} replicas of all tasks together", *min_available,
                           replicas));
  }
}

SchemaRef VolcanoJobSchema() {
  SchemaRef policy = Obj({
      Opt("action", Str()),
      Opt("event", Str()),
      Opt("events", Arr(Str())),
      Opt("exitCode", Int(kInt32Min)),
      Opt("timeout", Str()),
  });
  SchemaRef task = Obj(
      {
          Opt("name", Str(StringRule::kDns1123Label)),
          Opt("replicas", Int()),
          Opt("minAvailable", Int()),
          Req("template", PodTemplateSpec()),
          Opt("policies", Arr(policy)),
          Opt("topologyPolicy", Enum({"none", "best-effort", "restricted", "single-numa-node"})),
          Opt("maxRetry", Int()),
          Opt("dependsOn", OpenObj()),
      },
      {[](const json& v, const std::string& path, Errors& errors) {
        auto replicas = GetInt(v, "replicas");
        auto min_available = GetInt(v, "minAvailable");
        if (replicas && min_available && *min_available > *replicas) {
          errors.Add(FieldPath(path, "minAvailable"),
                     fmt::format("{} is more than replicas {}", *min_available, *replicas));
        }
      }});
  return Root({Opt("spec", Obj(
                               {
                                   Opt("schedulerName", Str()),
                                   Opt("minAvailable", Int()),
                                   Opt("volumes", Arr(OpenObj())),
                                   Req("tasks", Arr(task, /*non_empty=*/true)),
                                   Opt("policies", Arr(policy)),
                                   // plugin name -> arguments ("ssh: []", "svc: [...]")
                                   Opt("plugins", MapOf(Arr(Str()), KeyRule::kNone,
                                                        /*null_elements=*/true)),
                                   Opt("runningEstimate", Str()),
                                   Opt("queue", Str()),
                                   Opt("maxRetry", Int()),
                                   Opt("ttlSecondsAfterFinished", Int()),
                                   Opt("priorityClassName", Str()),
                                   Opt("minSuccess", Int(1)),
                                   Opt("networkTopology", OpenObj()),
                               },
                               {CheckVolcanoJobSpec}))});
}

const std::map<std::string_view, SchemaRef>& Schemas() {
  static const std::map<std::string_view, SchemaRef> schemas = {
      {"/Namespace", NamespaceSchema()},
      {"/ResourceQuota", ResourceQuotaSchema()},
      {"/Pod", PodSchema()},
      {"/Node", NodeSchema()},
      {"/Event", EventSchema()},
      {"/ServiceAccount", ServiceAccountSchema()},
      {"/Secret", SecretSchema()},
      {"/Service", ServiceSchema()},
      {"discovery.k8s.io/EndpointSlice", EndpointSliceSchema()},
      {"/ConfigMap", ConfigMapSchema()},
      {"/PersistentVolumeClaim", PersistentVolumeClaimSchema()},
      {"authorization.k8s.io/SelfSubjectAccessReview", SelfSubjectAccessReviewSchema()},
      {"authorization.k8s.io/SelfSubjectRulesReview", SelfSubjectRulesReviewSchema()},
      {"authentication.k8s.io/SelfSubjectReview", SelfSubjectReviewSchema()},
      {"batch/Job", BatchJobSchema()},
      {"scheduling.k8s.io/PriorityClass", PriorityClassSchema()},
      {"coordination.k8s.io/Lease", LeaseSchema()},
      {"rbac.authorization.k8s.io/Role", RoleSchema()},
      {"rbac.authorization.k8s.io/RoleBinding", BindingSchema(/*cluster=*/false)},
      {"rbac.authorization.k8s.io/ClusterRole", ClusterRoleSchema()},
      {"rbac.authorization.k8s.io/ClusterRoleBinding", BindingSchema(/*cluster=*/true)},
      {"networking.k8s.io/NetworkPolicy", NetworkPolicySchema()},
      {"kueue.x-k8s.io/ResourceFlavor", ResourceFlavorSchema()},
      {"kueue.x-k8s.io/ClusterQueue", ClusterQueueSchema()},
      {"kueue.x-k8s.io/LocalQueue", LocalQueueSchema()},
      {"kueue.x-k8s.io/Workload", WorkloadSchema()},
      {"batch.volcano.sh/Job", VolcanoJobSchema()},
      {"tessera.dev/UsageRecord", UsageRecordSchema()},
      {"tessera.dev/Budget", BudgetSchema()},
      {"tessera.dev/ApprovalPolicy", ApprovalPolicySchema()},
      {"tessera.dev/ApprovalRequest", ApprovalRequestSchema()},
  };
  return schemas;
}

// metadata.name: required, and of the kind's form.
void CheckName(const KindInfo& kind, const json& object, Errors& errors) {
  const json* metadata = Get(object, "metadata");
  const json* name = metadata ? Get(*metadata, "name") : nullptr;
  if (!name) {
    errors.Add("metadata.name", "required");
    return;
  }
  if (!name->is_string()) return;  // the schema reports the type
  if (Status s = ValidateName(kind.name_rule, name->get<std::string>()); !s.ok()) {
    errors.Add("metadata.name", s.message());
  }
}

Status ValidateObjectOrThrow(const KindInfo& kind, const json& object) {
  if (!object.is_object()) {
    return Status::InvalidArgument(
        fmt::format("expected an object with apiVersion and kind, got {}", Describe(object)));
  }
  Errors errors;
  const json* api_version = Get(object, "apiVersion");
  const json* kind_field = Get(object, "kind");
  if (!api_version || *api_version != kind.api_version) {
    errors.Add("apiVersion", fmt::format("expected \"{}\" for kind {}, got {}", kind.api_version,
                                         kind.kind, api_version ? Describe(*api_version) : "none"));
  }
  if (!kind_field || *kind_field != kind.kind) {
    errors.Add("kind", fmt::format("expected \"{}\", got {}", kind.kind,
                                   kind_field ? Describe(*kind_field) : "none"));
  }
  if (kind.stored) CheckName(kind, object, errors);  // a review is answered, never named
  auto schema = Schemas().find(kind.store_key);
  if (schema == Schemas().end()) {
    return Status::Internal(fmt::format("no schema for kind {}", kind.store_key));
  }
  Validate(*schema->second, object, "", errors);
  return errors.ToStatus();
}

}  // namespace

// ===========================================================================
// Public interface.

Status ValidateName(NameRule rule, std::string_view name) {
  switch (rule) {
    case NameRule::kDns1123Label:
      if (IsDns1123Label(name)) return Status::Ok();
      return Status::InvalidArgument(fmt::format("\"{}\": {}", name, kLabelMessage));
    case NameRule::kDns1035Label:
      if (IsDns1123Label(name) && name.front() >= 'a' && name.front() <= 'z') return Status::Ok();
      return Status::InvalidArgument(fmt::format("\"{}\": {}", name, kDns1035Message));
    case NameRule::kDns1123Subdomain:
      if (IsDns1123Subdomain(name)) return Status::Ok();
      return Status::InvalidArgument(fmt::format("\"{}\": {}", name, kSubdomainMessage));
    case NameRule::kPathSegment:
      if (name.empty()) return Status::InvalidArgument("must not be empty");
      if (name == "." || name == "..") {
        return Status::InvalidArgument(fmt::format("\"{}\" may not be a name", name));
      }
      if (name.find_first_of("/%") != name.npos) {
        return Status::InvalidArgument(fmt::format("\"{}\": a name may not contain '/' or '%'", name));
      }
      return Status::Ok();
  }
  return Status::Ok();
}

Status ValidateLabelKey(std::string_view key) { return CheckQualifiedName(key); }

Status ValidateLabelValue(std::string_view value) {
  if (value.empty() || IsQualifiedNamePart(value)) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "\"{}\" is not a valid label value: at most 63 characters, alphanumerics, '-', '_' or '.', "
      "starting and ending with an alphanumeric character (quote values such as \"true\" or "
      "\"8\")",
      value));
}

Result<std::string> QuantityText(const json& value) {
  if (auto text = QuantityTextOf(value)) return *text;
  return Err(Status::InvalidArgument(fmt::format(
      "expected a quantity such as \"2\", \"500m\" or \"64Gi\", got {}", Describe(value))));
}

Result<const KindInfo*> ResolveKind(const json& object) {
  if (!object.is_object()) {
    return Err(Status::InvalidArgument(
        fmt::format("expected an object with apiVersion and kind, got {}", Describe(object))));
  }
  const json* api_version = Get(object, "apiVersion");
  const json* kind = Get(object, "kind");
  if (!api_version) {
    return Err(Status::InvalidArgument(
        "apiVersion: required (for example \"v1\" or \"kueue.x-k8s.io/v1beta1\")"));
  }
  if (!api_version->is_string()) {
    return Err(Status::InvalidArgument(
        fmt::format("apiVersion: expected a string, got {}", Describe(*api_version))));
  }
  if (!kind) return Err(Status::InvalidArgument("kind: required (for example \"Pod\")"));
  if (!kind->is_string()) {
    return Err(Status::InvalidArgument(fmt::format("kind: expected a string, got {}", Describe(*kind))));
  }
  const std::string& av = api_version->get_ref<const std::string&>();
  const std::string& k = kind->get_ref<const std::string&>();
  if (const KindInfo* info = FindKindByApiVersion(av, k)) return info;

  // Not served: say what is.
  std::vector<std::string_view> versions = ApiVersionsServingKind(k);
  if (!versions.empty()) {
    std::string alternatives;
    for (size_t i = 0; i < versions.size(); ++i) {
      if (i > 0) alternatives += i + 1 == versions.size() ? " or " : ", ";
      alternatives += versions[i];
    }
    return Err(Status::InvalidArgument(fmt::format(
        "apiVersion: kind {} is not served as \"{}\"; use {}", k, av, alternatives)));
  }
  std::vector<std::string_view> in_version, all;
  for (const KindInfo& info : AllKinds()) {
    all.push_back(info.kind);
    if (info.api_version == av) in_version.push_back(info.kind);
  }
  auto hint = Suggest(k, in_version.empty() ? all : in_version);
  std::string suggestion = hint ? fmt::format("; did you mean \"{}\"?", *hint) : "";
  if (!in_version.empty()) {
    return Err(Status::InvalidArgument(fmt::format("kind: unknown kind \"{}\" in {}{} (served: {})",
                                                   k, av, suggestion, JoinNames(in_version))));
  }
  return Err(Status::InvalidArgument(fmt::format(
      "kind: unknown kind \"{}\"{} (apiVersion \"{}\" is not served either)", k, suggestion, av)));
}

Status ValidateObject(const KindInfo& kind, const json& object) {
  // Nothing below should throw (checks run on values whose types were checked);
  // the catch keeps a slip from crossing the API as an exception.
  try {
    return ValidateObjectOrThrow(kind, object);
  } catch (const std::exception& e) {
    return Status::Internal(fmt::format("validating {} failed: {}", kind.store_key, e.what()));
  }
}

Status ValidateTokenRequest(const json& object) {
  try {
    if (!object.is_object()) {
      return Status::InvalidArgument(fmt::format("expected a TokenRequest object, got {}", Describe(object)));
    }
    Errors errors;
    const json* api_version = Get(object, "apiVersion");
    const json* kind = Get(object, "kind");
    if (api_version && *api_version != "authentication.k8s.io/v1") {
      errors.Add("apiVersion", fmt::format("expected \"authentication.k8s.io/v1\", got {}", Describe(*api_version)));
    }
    if (kind && *kind != "TokenRequest") errors.Add("kind", fmt::format("expected \"TokenRequest\", got {}", Describe(*kind)));
    Validate(*TokenRequestSchema(), object, "", errors);
    return errors.ToStatus();
  } catch (const std::exception& e) {
    return Status::Internal(fmt::format("validating a TokenRequest failed: {}", e.what()));
  }
}

namespace {

// A Node's pod ranges as one list: spec.podCIDRs, or spec.podCIDR when that is all it has.
std::vector<json> PodCidrsOf(const json& node) {
  const json* spec = Get(node, "spec");
  if (!spec || !spec->is_object()) return {};
  if (const json* list = Get(*spec, "podCIDRs"); list && list->is_array() && !list->empty()) {
    return std::vector<json>(list->begin(), list->end());
  }
  const json* single = Get(*spec, "podCIDR");
  if (single && single->is_string() && !single->get_ref<const std::string&>().empty()) {
    return {*single};
  }
  return {};
}

}  // namespace

Status ValidateUpdate(const KindInfo& kind, const nlohmann::json& stored, const nlohmann::json& next) {
  if (kind.store_key == "/Node") {
    // As kube-apiserver: the controller sets a Node's range once; no update moves it.
    const std::vector<json> before = PodCidrsOf(stored);
    if (!before.empty() && before != PodCidrsOf(next)) {
      return Status::InvalidArgument("spec.podCIDR: Forbidden: node updates may not change podCIDR except from \"\" to valid");
    }
  }
  if (kind.store_key == "/Service") {
    // As kube-apiserver: the allocated address stays the Service's for its life
    // (an update that leaves it out keeps it: KeepAllocatedServiceFields, api/service.h).
    const nlohmann::json& before = Get(stored, "spec") ? *Get(stored, "spec") : nlohmann::json::object();
    const nlohmann::json& after = Get(next, "spec") ? *Get(next, "spec") : nlohmann::json::object();
    for (const char* field : {"clusterIP", "clusterIPs"}) {
      const nlohmann::json was = before.value(field, nlohmann::json());
      const nlohmann::json is = after.value(field, nlohmann::json());
      if (was != is) {
        return Status::InvalidArgument(
            fmt::format("spec.{}: Invalid value: {}: field is immutable", field, is.is_null() ? "null" : Dump(is)));
      }
    }
  }
  if (kind.store_key == "discovery.k8s.io/EndpointSlice" &&
      stored.value("addressType", nlohmann::json()) != next.value("addressType", nlohmann::json())) {
    return Status::InvalidArgument(fmt::format("addressType: Invalid value: {}: field is immutable",
                                               Dump(next.value("addressType", nlohmann::json()))));
  }
  if ((kind.store_key == "/ConfigMap" || kind.store_key == "/Secret") && stored.value("immutable", false)) {
    // As kube-apiserver: an immutable one keeps its data (and stays immutable); delete it to change it.
    for (const char* field : {"data", "binaryData", "immutable"}) {
      if (stored.value(field, nlohmann::json()) != next.value(field, nlohmann::json())) {
        return Status::InvalidArgument(fmt::format(
            "{}: Forbidden: field is immutable when `immutable` is set (delete the {} and create it again)",
            std::string(field) == "immutable" ? "immutable" : field, kind.kind));
      }
    }
  }
  if (kind.store_key == "/PersistentVolumeClaim" &&
      stored.value("spec", nlohmann::json()) != next.value("spec", nlohmann::json())) {
    // No resizing yet (it would move the quota's requests.storage): delete and create again.
    return Status::InvalidArgument(
        "spec: Forbidden: spec is immutable after creation (Tessera does not resize claims: make a new one)");
  }
  if (kind.group == "rbac.authorization.k8s.io" && (kind.kind == "RoleBinding" || kind.kind == "ClusterRoleBinding")) {
    const nlohmann::json before = stored.value("roleRef", nlohmann::json::object());
    const nlohmann::json after = next.value("roleRef", nlohmann::json::object());
    if (before != after) {
      return Status::InvalidArgument(fmt::format(
          "roleRef: Invalid value: {{APIGroup:\"{}\", Kind:\"{}\", Name:\"{}\"}}: cannot change roleRef (delete the "
          "{} and create it again to bind another role)",
          after.value("apiGroup", ""), after.value("kind", ""), after.value("name", ""), kind.kind));
    }
  }
  return Status::Ok();
}

Result<const KindInfo*> ValidateManifest(const json& object) {
  ASSIGN_OR_RETURN(const KindInfo* kind, ResolveKind(object));
  RETURN_IF_ERROR(ValidateObject(*kind, object));
  return kind;
}

}  // namespace tessera
