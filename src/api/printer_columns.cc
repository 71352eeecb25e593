#include "api/printer_columns.h"

#include <fmt/format.h>

#include <utility>

#include "api/age.h"
#include "api/kind_definition.h"
#include "api/object_fields.h"

namespace tessera {
namespace {

using nlohmann::json;

bool Shown(const PrinterColumn& c, const ColumnOptions& options) { return c.priority == 0 || options.wide; }

}  // namespace

const std::vector<PrinterColumn>& ColumnsFor(const KindInfo& kind) {
  static const std::vector<PrinterColumn> fallback = DefaultColumns();
  const KindDefinition* definition = FindDefinition(kind);
  return definition == nullptr || definition->columns.empty() ? fallback : definition->columns;
}

PrinterColumn NameColumn() {
  return {.name = "NAME",
          .description = "the object's name",
          .cell = [](const json& o, const ColumnOptions&) { return NameOf(o); }};
}

PrinterColumn AgeColumn() {
  return {.name = "AGE",
          .type = ColumnType::kDate,
          .description = "time since the object was created",
          .cell = [](const json& o, const ColumnOptions& options) {
            return AgeSince(TextAt(o, "metadata.creationTimestamp"), options.now);
          }};
}

PrinterColumn FieldColumn(std::string_view name, std::string path, std::string fallback, int priority,
                          ColumnType type, std::string description) {
  if (description.empty()) description = "." + path;
  return {.name = name,
          .type = type,
          .priority = priority,
          .description = std::move(description),
          .cell = [path = std::move(path), fallback = std::move(fallback)](const json& o, const ColumnOptions&) {
            return TextAt(o, path, fallback);
          }};
}

std::vector<PrinterColumn> DefaultColumns() { return {NameColumn(), AgeColumn()}; }

std::string ConditionStatus(const json& object, std::string_view type, std::string_view fallback) {
  const json* c = FindCondition(object, type);
  return c ? Text(Child(c, "status"), fallback) : std::string(fallback);
}

std::string PendingMessage(const json& workload) {
  if (ConditionStatus(workload, "Admitted") == "True") return "";
  for (std::string_view type : {"QuotaReserved", "Admitted"}) {
    const json* c = FindCondition(workload, type);
    if (c && Text(Child(c, "status")) != "True") {
      const std::string message = Text(Child(c, "message"));
      if (!message.empty()) return message;
    }
  }
  return "";
}

std::vector<std::string> TableHeaders(const KindInfo& kind, const ColumnOptions& options) {
  std::vector<std::string> headers;
  if (options.with_namespace && kind.namespaced) headers.push_back("NAMESPACE");
  for (const PrinterColumn& c : ColumnsFor(kind)) {
    if (Shown(c, options)) headers.emplace_back(c.name);
  }
  if (options.show_labels) headers.push_back("LABELS");
  return headers;
}

std::vector<std::string> TableRow(const KindInfo& kind, const json& object, const ColumnOptions& options) {
  std::vector<std::string> cells;
  if (options.with_namespace && kind.namespaced) cells.push_back(NamespaceOf(object));
  for (const PrinterColumn& c : ColumnsFor(kind)) {
    if (Shown(c, options)) cells.push_back(c.cell(object, options));
  }
  if (options.show_labels) {
    // As kubectl prints them: key=value, by key, comma-separated.
    std::string labels;
    const json* all = Find(object, "metadata.labels");
    if (all && all->is_object()) {
      for (const auto& [key, value] : all->items()) {
        labels += fmt::format("{}{}={}", labels.empty() ? "" : ",", key,
                              value.is_string() ? value.get<std::string>() : value.dump());
      }
    }
    cells.push_back(labels.empty() ? "<none>" : labels);
  }
  return cells;
}

}  // namespace tessera
