// The sub-schemas several kinds share (api/schema.h): object metadata, label
// selectors, pod templates and their parts, references, amounts of money.
// Each is Kubernetes' type of the same name, as far as Tessera reads it; the
// comments of common_schemas.cc say where Tessera is stricter or looser.
//
// Thread-safety: the shared schemas are built once (thread-safe static
// initialisation) and immutable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/schema.h"

namespace tessera::schema {

inline constexpr size_t kMaxAnnotationBytes = 256 * 1024;  // Kubernetes' TotalAnnotationSizeLimitB

SchemaRef LabelMap();       // label key -> label value
SchemaRef AnnotationMap();  // qualified key -> string, 256 KiB in all
SchemaRef ObjectMeta();
SchemaRef LabelSelector();  // matchLabels, matchExpressions
SchemaRef Taint();
SchemaRef Toleration();
SchemaRef ResourceRequirements();  // requests <= limits
SchemaRef Container();
SchemaRef Volume();  // the sources Tessera mounts, one a volume
SchemaRef PodSpec();
SchemaRef PodTemplateSpec();
SchemaRef ObjectReference();  // v1 ObjectReference (an Event's involvedObject)

// A whole object: apiVersion, kind, metadata, the kind's own `fields`, and
// status (accepted with any content, never checked: the server owns it).
// `checks` run over the whole object.
SchemaRef Root(std::vector<FieldSpec> fields, std::vector<Check> checks = {});

// A decimal amount of money or GPU-hours ("5000", "2.10", 100): at most three
// decimals, not negative.
void CheckDecimal(const nlohmann::json& v, const std::string& path, Errors& errors);
SchemaRef Decimal();
// A Go duration ("24h", "90m").
SchemaRef DurationText();

// In/NotIn need values; Exists/DoesNotExist take none (a selector requirement,
// its operator in `op_field`).
void CheckRequirementValues(const nlohmann::json& v, const std::string& path, Errors& errors,
                            std::string_view op_field);

}  // namespace tessera::schema
