#include "cli/commands/get_command.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>

#include "api/object_fields.h"
#include "api/printer_columns.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"
#include "cli/commands/table_printer.h"
#include "cli/commands/workload_priority.h"
#include "cli/commands/yaml_output.h"

namespace tessera {
namespace {

using nlohmann::json;

// The objects asked for, per kind, in the order the user named the kinds.
struct KindGroup {
  const KindInfo* kind = nullptr;
  std::vector<std::string> names;  // empty: list
  std::vector<json> objects;
  std::string list_revision;
};

bool IsTable(const std::string& output) { return output.empty() || output == "wide"; }

std::string EmptyListMessage(const KindInfo& kind, const CommandContext& ctx, bool all_namespaces) {
  if (!kind.namespaced || all_namespaces) return "No resources found";
  return fmt::format("No resources found in {} namespace.", ctx.ns);
}

// Prints a watch event's object in the chosen output; a table row reuses
// the widths of what was printed before (header printed once).
class WatchPrinter {
 public:
  WatchPrinter(const CommandContext& ctx, const KindInfo& kind, const GetOptions& options, ColumnOptions columns,
               std::optional<std::vector<size_t>> widths)
      : ctx_(ctx), kind_(kind), options_(options), columns_(columns), widths_(std::move(widths)) {}

  void Print(const json& object) {
    if (options_.output == "name") {
      *ctx_.out << ObjectRef(kind_, NameOf(object)) << "\n";
    } else if (options_.output == "json") {
      *ctx_.out << object.dump(4) << "\n";
    } else if (options_.output == "yaml") {
      *ctx_.out << "---\n" << ToYaml(object);
    } else {
      std::vector<std::string> row = TableRow(kind_, object, columns_);
      if (!widths_) {
        Table first(TableHeaders(kind_, columns_));
        first.AddRow(row);
        widths_ = first.Widths();
        *ctx_.out << FormatRow(first.headers(), *widths_);
      }
      *ctx_.out << FormatRow(row, *widths_);
    }
    ctx_.out->flush();
  }

 private:
  const CommandContext& ctx_;
  const KindInfo& kind_;
  const GetOptions& options_;
  const ColumnOptions columns_;
  std::optional<std::vector<size_t>> widths_;
};

// How `-o json` and `-o yaml` print objects: the object itself when one was
// named, else a kind: List as kubectl prints it.
std::string FormatObjects(const std::vector<json>& objects, bool as_list, const std::string& output) {
  json value;
  if (!as_list && objects.size() == 1) {
    value = objects.front();
  } else {
    value = json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", objects}, {"metadata", {{"resourceVersion", ""}}}};
  }
  return output == "json" ? value.dump(4) + "\n" : ToYaml(value);
}

}  // namespace

int RunGet(const CommandContext& ctx, const GetOptions& options) {
  // 1. Parse the arguments into kinds and names; usage errors send nothing.
  auto parsed = ParseObjectArgs(options.args);
  if (!parsed) {
    *ctx.err << LocalError(parsed.error()) << "\n";
    return kExitUsage;
  }
  std::vector<KindGroup> groups;
  bool named = false;
  for (const ObjectArg& a : *parsed) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const KindGroup& g) { return g.kind == a.kind; });
    if (it == groups.end()) it = groups.insert(groups.end(), KindGroup{a.kind, {}, {}, ""});
    if (!a.name.empty()) {
      it->names.push_back(a.name);
      named = true;
    }
  }
  if (named && options.all_namespaces) {
    *ctx.err << "error: a resource cannot be retrieved by name across all namespaces; use -n NAMESPACE\n";
    return kExitUsage;
  }
  if (named && (!options.selector.empty() || !options.field_selector.empty())) {
    *ctx.err << "error: name cannot be provided when a selector is specified\n";
    return kExitUsage;
  }
  if (options.watch && groups.size() != 1) {
    *ctx.err << "error: you may only watch a single resource type\n";
    return kExitUsage;
  }

  // 2. Fetch: each named object, or the list (always the list when watching,
  //    for the resourceVersion to watch from).
  auto client = ctx.Client();
  int failures = 0;
  for (KindGroup& g : groups) {
    const std::string ns = options.all_namespaces ? "" : ctx.ns;
    if (g.names.empty() || options.watch) {
      auto list = ListObjects(*client, ctx.config, CollectionPath(*g.kind, ns), options.selector, options.chunk_size,
                              options.field_selector);
      if (!list) {
        *ctx.err << list.error() << "\n";
        return kExitFailure;
      }
      g.list_revision = list->resource_version;
      for (json& item : list->items) {
        if (g.names.empty() || std::find(g.names.begin(), g.names.end(), NameOf(item)) != g.names.end()) {
          g.objects.push_back(std::move(item));
        }
      }
      continue;
    }
    for (const std::string& name : g.names) {
      auto r = client->Request("GET", ObjectPath(*g.kind, ns, name));
      if (!r) {
        *ctx.err << LocalError(r.error()) << "\n";
        return kExitFailure;
      }
      if (r->status != 200) {
        *ctx.err << ServerError(*r, ctx.config) << "\n";
        if (r->status == 401) return kExitFailure;
        ++failures;
        continue;
      }
      g.objects.push_back(json::parse(r->body, nullptr, false));
    }
  }

  // 3. Print what was found.
  ColumnOptions columns{.wide = options.output == "wide",
                        .with_namespace = options.all_namespaces,
                        .now = ctx.Now(),
                        .show_labels = options.show_labels};
  const bool workloads = std::any_of(groups.begin(), groups.end(), [](const KindGroup& g) {
    return g.kind->store_key == "kueue.x-k8s.io/Workload";
  });
  if (workloads && IsTable(options.output)) columns.default_priority = FetchDefaultPriorityClass(*client).value;
  const bool single_named = parsed->size() == 1 && named;
  std::optional<std::vector<size_t>> widths;
  if (options.output == "json" || options.output == "yaml") {
    std::vector<json> all;
    for (const KindGroup& g : groups) all.insert(all.end(), g.objects.begin(), g.objects.end());
    if (!(options.watch && all.empty())) {
      if (options.watch) {
        for (const json& o : all) *ctx.out << (options.output == "yaml" ? "---\n" + ToYaml(o) : o.dump(4) + "\n");
      } else if (!(single_named && all.empty())) {
        *ctx.out << FormatObjects(all, !single_named, options.output);
      }
    }
  } else if (options.output == "name") {
    for (const KindGroup& g : groups) {
      for (const json& o : g.objects) *ctx.out << ObjectRef(*g.kind, NameOf(o)) << "\n";
    }
  } else {
    bool first = true;
    for (const KindGroup& g : groups) {
      if (g.objects.empty()) {
        if (g.names.empty()) *ctx.err << EmptyListMessage(*g.kind, ctx, options.all_namespaces) << "\n";
        continue;
      }
      Table table(TableHeaders(*g.kind, columns));
      for (const json& o : g.objects) table.AddRow(TableRow(*g.kind, o, columns));
      if (!first) *ctx.out << "\n";
      first = false;
      table.Print(*ctx.out);
      widths = table.Widths();
    }
  }
  ctx.out->flush();
  if (!options.watch) return failures == 0 ? kExitOk : kExitFailure;

  // 4. Watch: a row per event from the list's resourceVersion on.
  const KindGroup& g = groups.front();
  const std::string ns = options.all_namespaces ? "" : ctx.ns;
  const std::string target = WithQuery(CollectionPath(*g.kind, ns), {{"watch", "true"},
                                                                     {"resourceVersion", g.list_revision},
                                                                     {"labelSelector", options.selector},
                                                                     {"fieldSelector", options.field_selector}});
  WatchPrinter printer(ctx, *g.kind, options, columns, IsTable(options.output) ? widths : std::nullopt);
  int events = 0;
  int rc = kExitOk;
  Status s = client->Stream(target, [&](const std::string& line) {
    if (line.empty()) return true;
    const json event = json::parse(line, nullptr, false);
    if (!event.is_object()) return true;
    const std::string type = TextAt(event, "type");
    const json* object = Child(&event, "object");
    if (type == "ERROR" || object == nullptr || TextAt(event, "object.kind") == "Status") {
      ApiResponse as_response{.status = 0, .body = object ? object->dump() : line, .content_type = ""};
      *ctx.err << ServerError(as_response, ctx.config) << "\n";
      rc = kExitFailure;
      return false;
    }
    if (g.names.empty() || std::find(g.names.begin(), g.names.end(), NameOf(*object)) != g.names.end()) {
      printer.Print(*object);
    }
    ++events;
    return options.max_watch_events_for_test == 0 || events < options.max_watch_events_for_test;
  });
  if (!s.ok() && rc == kExitOk) {
    *ctx.err << LocalError(s) << "\n";
    rc = kExitFailure;
  }
  return rc;
}

}  // namespace tessera
