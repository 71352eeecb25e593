#include "api/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "api/names.h"
#include "common/suggest.h"
#include "domain/quantity.h"

namespace tessera::schema {
namespace {

using nlohmann::json;

constexpr std::string_view kGpu = "nvidia.com/gpu";
constexpr std::string_view kGpuMemory = "tessera.dev/gpu-memory";

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

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
  if (Status s = ValidateQualifiedName(name); !s.ok()) errors.Add(path, s.message());
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

}  // namespace

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

void Errors::Add(const std::string& path, std::string_view message) {
  if (list_.size() < kMaxErrors) list_.push_back(FieldCause{.field = path, .message = std::string(message)});
  ++count_;
}

Status Errors::ToStatus() const {
  if (count_ == 0) return Status::Ok();
  std::string msg;
  for (const FieldCause& e : list_) {
    if (!msg.empty()) msg += "; ";
    msg += e.field.empty() ? e.message : fmt::format("{}: {}", e.field, e.message);
  }
  if (count_ > list_.size()) msg += fmt::format("; and {} more", count_ - list_.size());
  return Status::Invalid(std::move(msg), list_);
}


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

std::string JoinNames(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) {
    if (!out.empty()) out += ", ";
    out += n.empty() ? "\"\"" : std::string(n);
  }
  return out;
}

// ===========================================================================
// Quantities.

// A quantity's numeric form: "128", "0.5" (json::dump prints the shortest
// round-tripping form of a double).
std::optional<std::string> QuantityTextOf(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return Dump(v);
  return std::nullopt;
}

// "requests.nvidia.com/gpu" -> "nvidia.com/gpu" (ResourceQuota keys).
std::string_view QuotaBaseName(std::string_view key) {
  for (std::string_view prefix : {std::string_view("requests."), std::string_view("limits.")}) {
    if (key.starts_with(prefix)) return key.substr(prefix.size());
  }
  return key;
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
// Builders.

SchemaRef Make(Schema s) { return std::make_shared<const Schema>(std::move(s)); }

SchemaRef Str(StringRule rule) {
  return Make({.type = Type::kString, .string_rule = rule});
}
SchemaRef Enum(std::vector<std::string_view> values) {
  return Make({.type = Type::kString, .enum_values = std::move(values)});
}
SchemaRef Int(int64_t min, int64_t max) {
  return Make({.type = Type::kInt, .min = min, .max = max});
}
SchemaRef Int64(int64_t min) { return Int(min, kInt64Max); }
SchemaRef Bool() { return Make({.type = Type::kBool}); }
SchemaRef Qty() { return Make({.type = Type::kQuantity}); }
SchemaRef IntOrStr() { return Make({.type = Type::kIntOrString}); }
SchemaRef Any() { return Make({.type = Type::kAny}); }
SchemaRef Obj(std::vector<FieldSpec> fields, std::vector<Check> checks) {
  return Make({.type = Type::kObject, .fields = std::move(fields), .checks = std::move(checks)});
}
SchemaRef OpenObj(std::vector<FieldSpec> fields) {
  return Make({.type = Type::kObject, .fields = std::move(fields), .open = true});
}
SchemaRef Arr(SchemaRef element, bool non_empty) {
  return Make({.type = Type::kArray, .element = std::move(element), .non_empty = non_empty});
}
SchemaRef MapOf(SchemaRef element, KeyRule key_rule, bool null_elements) {
  return Make({.type = Type::kMap, .element = std::move(element), .key_rule = key_rule,
               .null_elements = null_elements});
}
SchemaRef ResourceList(bool quota_keys, std::vector<Check> checks) {
  return Make({.type = Type::kResourceList, .quota_keys = quota_keys, .checks = std::move(checks)});
}
FieldSpec Opt(std::string_view name, SchemaRef s) { return {name, std::move(s), false}; }
FieldSpec Req(std::string_view name, SchemaRef s) { return {name, std::move(s), true}; }
FieldSpec Doc(FieldSpec field, std::string_view description) {
  field.description = description;
  return field;
}

// ===========================================================================
// The validator.

namespace {

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
      if (!IsDns1123Label(str)) errors.Add(path, fmt::format("\"{}\": {}", str, kDns1123LabelMessage));
      return;
    case StringRule::kDns1123Subdomain:
      if (!IsDns1123Subdomain(str)) {
        errors.Add(path, fmt::format("\"{}\": {}", str, kDns1123SubdomainMessage));
      }
      return;
    case StringRule::kLabelValue:
      if (Status st = ValidateLabelValue(str); !st.ok()) errors.Add(path, st.message());
      return;
    case StringRule::kQualifiedName:
      if (Status st = ValidateQualifiedName(str); !st.ok()) errors.Add(path, st.message());
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

}  // namespace

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

}  // namespace tessera::schema
