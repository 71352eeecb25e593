#include "server/api/table_output.h"

#include <fmt/format.h>

#include <charconv>

#include "api/printer_columns.h"
#include "server/api/media_types.h"

namespace tessera {
namespace {

using nlohmann::json;

std::string_view TypeName(ColumnType type) {
  switch (type) {
    case ColumnType::kInteger: return "integer";
    // Ages are printed here ("5m"), as the apiserver prints a CRD's date columns.
    case ColumnType::kDate:
    case ColumnType::kString: break;
  }
  return "string";
}

json ColumnDefinitions(const KindInfo& kind) {
  json columns = json::array();
  for (const PrinterColumn& c : ColumnsFor(kind)) {
    json column{{"name", c.name},
                {"type", TypeName(c.type)},
                {"format", c.name == "NAME" ? "name" : ""},
                {"description", c.description},
                {"priority", c.priority}};
    columns.push_back(std::move(column));
  }
  return columns;
}

// An integer column's cell as a number, as the apiserver sends it; text that is
// not one (empty: unknown) stays text.
json Cell(const PrinterColumn& column, std::string text) {
  if (column.type == ColumnType::kInteger && !text.empty()) {
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size()) return value;
  }
  return text;
}

json Row(const KindInfo& kind, const json& object, const TableOptions& options) {
  const ColumnOptions columns{.wide = true, .now = options.now, .default_priority = options.default_priority};
  json cells = json::array();
  for (const PrinterColumn& c : ColumnsFor(kind)) cells.push_back(Cell(c, c.cell(object, columns)));
  json row{{"cells", std::move(cells)}};
  if (options.include_object == "Object") {
    row["object"] = object;
  } else if (options.include_object == "Metadata") {
    row["object"] = {{"kind", "PartialObjectMetadata"},
                     {"apiVersion", "meta.k8s.io/" + options.version},
                     {"metadata", object.value("metadata", json::object())}};
  }
  return row;
}

json Table(const KindInfo& kind, json rows, json metadata, const TableOptions& options) {
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/" + options.version},
          {"metadata", std::move(metadata)},
          {"columnDefinitions", ColumnDefinitions(kind)},
          {"rows", std::move(rows)}};
}

}  // namespace

std::optional<std::string> TableVersionAsked(std::string_view accept) {
  for (const MediaType& m : AcceptedMediaTypes(accept)) {
    auto at = [&](const char* key) {
      auto it = m.params.find(key);
      return it == m.params.end() ? std::string() : it->second;
    };
    if (at("as") == "Table" && at("g") == "meta.k8s.io" && (at("v") == "v1" || at("v") == "v1beta1")) return at("v");
  }
  return std::nullopt;
}

Result<std::string> ParseIncludeObject(std::string_view text) {
  if (text.empty()) return std::string("Metadata");
  if (text == "None" || text == "Metadata" || text == "Object") return std::string(text);
  return Err(Status::InvalidArgument(
      fmt::format("includeObject: Unsupported value: \"{}\": supported values: \"Metadata\", \"None\", \"Object\"",
                  text)));
}

json ObjectsTable(const KindInfo& kind, const std::vector<json>& objects, json list_metadata,
                  const TableOptions& options) {
  json rows = json::array();
  for (const json& object : objects) rows.push_back(Row(kind, object, options));
  return Table(kind, std::move(rows), std::move(list_metadata), options);
}

json ObjectTable(const KindInfo& kind, const json& object, const TableOptions& options) {
  json metadata = json::object();
  if (const json* m = object.contains("metadata") ? &object["metadata"] : nullptr; m && m->contains("resourceVersion")) {
    metadata["resourceVersion"] = (*m)["resourceVersion"];
  }
  return Table(kind, json::array({Row(kind, object, options)}), std::move(metadata), options);
}

}  // namespace tessera
