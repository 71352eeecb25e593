// The schema engine behind manifest validation (api/validation.h): a small
// table-driven description of a JSON document, and the validator that walks a
// document against it and reports every problem with its field path.
//
// A Schema is one node: a type (string, enum, integer, boolean, quantity,
// int-or-string, object with named fields, list of X, map of string -> X, a
// resource list, or anything) plus `checks`, cross-field rules that run once the
// node's structure is valid. Schemas are built with the builders below
// (Obj({Req("name", Str()), Opt("replicas", Int(1))}), Arr(...), MapOf(...)) and
// shared as immutable SchemaRefs; the per-kind schemas live beside their kinds
// (api/kinds/*.cc), the pieces several kinds share in api/common_schemas.h.
//
// Rules of the walk:
//   - null is the same as an absent field (kubectl writes `creationTimestamp: null`);
//   - an unknown field of a closed object is refused with a did-you-mean, or the
//     list of known fields when there are at most 12;
//   - a node's checks run only when the node produced no structural error, so a
//     check may assume the types its schema promises (Get* still never throw);
//   - paths are Kubernetes': "spec.tasks[0].template", map keys in brackets
//     ("limits[nvidia.com/gpu]").
//
// Thread-safety: schemas are immutable once built; Validate is reentrant.
// Errors is a plain value owned by one validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/status.h"

namespace tessera::schema {

inline constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
inline constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// ---------------------------------------------------------------------------
// Paths and errors.

std::string FieldPath(const std::string& path, std::string_view name);  // "spec" + "tasks" -> "spec.tasks"
std::string IndexPath(const std::string& path, size_t i);               // "spec.tasks[0]"
std::string KeyPath(const std::string& path, std::string_view key);     // "limits[cpu]"

// Collects "<path>: <message>" lines; the first kMaxErrors are kept, the rest counted.
class Errors {
 public:
  static constexpr size_t kMaxErrors = 20;
  void Add(const std::string& path, std::string_view message);
  size_t count() const { return count_; }
  // OK when nothing was added; else Invalid with the lines "path: message"
  // joined by "; " (and "; and N more" beyond kMaxErrors), each line a cause.
  Status ToStatus() const;

 private:
  std::vector<FieldCause> list_;
  size_t count_ = 0;
};

// JSON text of a value; never throws (invalid UTF-8 is replaced).
std::string Dump(const nlohmann::json& v);
// "string \"4\"", "integer 8", "a list", for "expected X, got Y".
std::string Describe(const nlohmann::json& v);
// "a, b, \"\"": names for a message, the empty one quoted.
std::string JoinNames(const std::vector<std::string_view>& names);

// ---------------------------------------------------------------------------
// Quantities, with the rule of the resource they measure.

// A quantity's text: a string as is, a number in its shortest round-tripping
// form ("128", "0.5"); nullopt for other types.
std::optional<std::string> QuantityTextOf(const nlohmann::json& v);

// "requests.nvidia.com/gpu" -> "nvidia.com/gpu" (ResourceQuota keys).
std::string_view QuotaBaseName(std::string_view key);

// Checks one amount of `resource` (cpu in millis, memory and counts in whole
// units, nvidia.com/gpu a fraction below one or a whole number, others exact);
// returns it in the resource's unit when valid, else adds an error at `path`.
std::optional<int64_t> CheckAmount(std::string_view resource, const nlohmann::json& value, const std::string& path,
                                   Errors& errors);

// ---------------------------------------------------------------------------
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
using Check = std::function<void(const nlohmann::json& value, const std::string& path, Errors& errors)>;

struct FieldSpec {
  std::string_view name;
  SchemaRef schema;
  bool required = false;
  // For people: what the field means, served in the OpenAPI documents
  // (`kubectl explain`). Empty: undocumented.
  std::string_view description = {};
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

// Builders.
SchemaRef Make(Schema s);
SchemaRef Str(StringRule rule = StringRule::kNone);
SchemaRef Enum(std::vector<std::string_view> values);
SchemaRef Int(int64_t min = 0, int64_t max = kInt32Max);
SchemaRef Int64(int64_t min = 0);
SchemaRef Bool();
SchemaRef Qty();
SchemaRef IntOrStr();
SchemaRef Any();
SchemaRef Obj(std::vector<FieldSpec> fields, std::vector<Check> checks = {});
// An object whose content Kubernetes leaves open (securityContext, affinity, ...):
// must be an object; `fields` that are present are checked, others pass.
SchemaRef OpenObj(std::vector<FieldSpec> fields = {});
SchemaRef Arr(SchemaRef element, bool non_empty = false);
SchemaRef MapOf(SchemaRef element, KeyRule key_rule = KeyRule::kNone, bool null_elements = false);
SchemaRef ResourceList(bool quota_keys = false, std::vector<Check> checks = {});
FieldSpec Opt(std::string_view name, SchemaRef s);
FieldSpec Req(std::string_view name, SchemaRef s);
// `field` with its description (`kubectl explain` prints it).
FieldSpec Doc(FieldSpec field, std::string_view description);

// Walks `v` against `s`, adding each problem at its path below `path`.
void Validate(const Schema& s, const nlohmann::json& v, const std::string& path, Errors& errors);

// Field access for checks: obj[key] when obj is an object holding a non-null
// key, else nullptr / "" / nullopt. Never throws.
const nlohmann::json* Get(const nlohmann::json& obj, std::string_view key);
std::string GetString(const nlohmann::json& obj, std::string_view key);
std::optional<int64_t> GetInt(const nlohmann::json& obj, std::string_view key);

}  // namespace tessera::schema
