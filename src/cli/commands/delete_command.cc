#include "cli/commands/delete_command.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/object_fields.h"
#include "api/validation.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/list_objects.h"
#include "cli/commands/manifest_sources.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"

namespace tessera {
namespace {

struct Target {
  const KindInfo* kind = nullptr;
  std::string ns;
  std::string name;
  std::string where;  // for -f: the file and document
};

}  // namespace

int RunDelete(const CommandContext& ctx, const DeleteOptions& options) {
  // 1. What to delete: -f manifests, KIND -l SELECTOR, or named objects.
  if (!options.files.empty() && !options.args.empty()) {
    *ctx.err << "error: name the objects either with -f or as KIND NAME, not both\n";
    return kExitUsage;
  }
  if (options.files.empty() && options.args.empty()) {
    *ctx.err << "error: name what to delete: KIND NAME..., KIND/NAME..., KIND -l SELECTOR or -f FILE\n";
    return kExitUsage;
  }
  int failures = 0;
  std::vector<Target> targets;
  auto client = ctx.Client();
  if (!options.files.empty()) {
    LoadedManifests loaded = LoadManifests(options.files, *ctx.in);
    for (const std::string& e : loaded.errors) *ctx.err << e << "\n";
    failures += static_cast<int>(loaded.errors.size());
    for (const SourceDocument& d : loaded.documents) {
      auto kind = ResolveKind(d.doc.object);
      const std::string name = TextAt(d.doc.object, "metadata.name");
      if (!kind || name.empty()) {
        *ctx.err << fmt::format("error: {}: {}\n", d.Where(),
                                kind ? "metadata.name is required" : kind.error().message());
        ++failures;
        continue;
      }
      const std::string ns = TextAt(d.doc.object, "metadata.namespace", ctx.ns);
      targets.push_back(Target{*kind, ns, name, d.Where()});
    }
  } else {
    auto parsed = ParseObjectArgs(options.args);
    if (!parsed) {
      *ctx.err << LocalError(parsed.error()) << "\n";
      return kExitUsage;
    }
    const bool named = !parsed->front().name.empty();
    if (named && !options.selector.empty()) {
      *ctx.err << "error: name the objects or select them with -l, not both\n";
      return kExitUsage;
    }
    if (!named && options.selector.empty()) {
      *ctx.err << fmt::format("error: resource(s) were provided, but no name was specified: "
                              "`tessera delete {} NAME` or `-l SELECTOR`\n",
                              options.args.front());
      return kExitUsage;
    }
    if (named) {
      for (const ObjectArg& a : *parsed) targets.push_back(Target{a.kind, ctx.ns, a.name, ""});
    } else {
      const KindInfo& kind = *parsed->front().kind;
      auto list = ListObjects(*client, ctx.config, CollectionPath(kind, ctx.ns), options.selector);
      if (!list) {
        *ctx.err << list.error() << "\n";
        return kExitFailure;
      }
      for (const nlohmann::json& o : list->items) targets.push_back(Target{&kind, NamespaceOf(o), NameOf(o), ""});
      if (targets.empty()) {
        *ctx.err << (kind.namespaced ? fmt::format("No resources found in {} namespace.", ctx.ns)
                                     : std::string("No resources found"))
                 << "\n";
      }
    }
  }

  // 2. Delete each, going on after failures.
  for (const Target& t : targets) {
    auto r = client->Request("DELETE", ObjectPath(*t.kind, t.ns, t.name));
    if (!r) {
      *ctx.err << LocalError(r.error()) << "\n";
      return kExitFailure;
    }
    if (r->status == 404 && options.ignore_not_found) continue;
    if (r->status / 100 != 2) {
      const std::string context = t.where.empty() ? "" : fmt::format("error when deleting {}", t.where);
      *ctx.err << ServerError(*r, ctx.config, context) << "\n";
      if (r->status == 401) return kExitFailure;
      ++failures;
      continue;
    }
    *ctx.out << ObjectRef(*t.kind, t.name) << " deleted\n";
  }
  return failures == 0 ? kExitOk : kExitFailure;
}

}  // namespace tessera
