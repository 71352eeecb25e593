#include "cli/commands/apply_command.h"

#include <fmt/format.h>

#include "api/defaults.h"
#include "api/convert.h"
#include "api/object_fields.h"
#include "api/service.h"
#include "api/validation.h"
#include "cli/commands/exit_codes.h"
#include "cli/commands/manifest_sources.h"
#include "cli/commands/resource_paths.h"
#include "cli/commands/server_errors.h"

namespace tessera {
namespace {

using nlohmann::json;

// Drops null members recursively: the server treats null as absent, so an
// object that stored `cohort: null` equals one without cohort.
json WithoutNulls(const json& v) {
  if (v.is_object()) {
    json out = json::object();
    for (const auto& [k, child] : v.items()) {
      if (!child.is_null()) out[k] = WithoutNulls(child);
    }
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (const json& child : v) out.push_back(WithoutNulls(child));
    return out;
  }
  return v;
}

// What apply compares: every top-level field but the envelope and status, plus
// labels and annotations (a missing map equals an empty one), without the
// annotations the server writes itself (who created it, a namespace's uids).
json DesiredState(const json& obj) {
  json state = json::object();
  for (const auto& [k, v] : obj.items()) {
    if (k != "apiVersion" && k != "kind" && k != "metadata" && k != "status") state[k] = v;
  }
  for (const char* map : {"labels", "annotations"}) {
    const json* m = Find(obj, std::string("metadata.") + map);
    state["metadata"][map] = m != nullptr && m->is_object() ? *m : json::object();
  }
  for (std::string_view server_owned : kServerAnnotations) state["metadata"]["annotations"].erase(std::string(server_owned));
  if (TextAt(obj, "kind") == "Namespace") state["metadata"]["labels"].erase(std::string(kNamespaceNameLabel));
  return WithoutNulls(state);
}

// Copies spec.podCIDR and spec.podCIDRs from `live` into `node` when `node` has neither.
void KeepLivePodCidrs(json& node, const json& live) {
  const json* spec = Find(node, "spec");
  if (spec != nullptr && (!spec->is_object() || spec->contains("podCIDR") || spec->contains("podCIDRs"))) return;
  for (const char* field : {"podCIDR", "podCIDRs"}) {
    if (const json* v = Find(live, std::string("spec.") + field)) node["spec"][field] = *v;
  }
}

enum class Outcome { kCreated, kConfigured, kUnchanged, kFailed, kFatal };

struct Applier {
  const CommandContext& ctx;
  ApiClient& client;
  const ApplyOptions& options;

  Outcome Fail(const std::string& message) {
    *ctx.err << message << "\n";
    return Outcome::kFailed;
  }
  // A refused token or no server: the next object would fail the same way.
  Outcome FailResponse(const ApiResponse& r, const std::string& context) {
    *ctx.err << ServerError(r, ctx.config, context) << "\n";
    return r.status == 401 ? Outcome::kFatal : Outcome::kFailed;
  }
  Outcome Unreachable(const Status& s) {
    *ctx.err << LocalError(s) << "\n";
    return Outcome::kFatal;
  }

  Outcome Apply(const SourceDocument& d) {
    json obj = d.doc.object;
    auto kind = ResolveKind(obj);
    if (!kind) return Fail(fmt::format("error: {}: {}", d.Where(), kind.error().message()));
    const KindInfo& k = **kind;
    const std::string name = TextAt(obj, "metadata.name");
    if (name.empty()) {
      return Fail(fmt::format("error: {}: metadata.name is required (apply finds the object by name; "
                              "generateName is not supported)",
                              d.Where()));
    }
    std::string ns;
    if (k.namespaced) {
      const std::string declared = TextAt(obj, "metadata.namespace");
      if (!declared.empty() && ctx.ns_explicit && declared != ctx.ns) {
        return Fail(fmt::format("error: {}: the namespace from the provided object \"{}\" does not match the "
                                "namespace \"{}\"; pass --namespace={} or drop -n",
                                d.Where(), declared, ctx.ns, declared));
      }
      ns = declared.empty() ? ctx.ns : declared;
      obj["metadata"]["namespace"] = ns;
    }
    const std::string path = ObjectPath(k, ns, name);
    const std::string ref = ObjectRef(k, name);
    if (options.server_side) {
      // The server merges and keeps who owns which field (docs/kubectl.md).
      const std::string target = fmt::format("{}?fieldManager={}{}", path, options.field_manager,
                                             options.force_conflicts ? "&force=true" : "");
      auto applied = client.Request("PATCH", target, obj.dump(), "application/apply-patch+yaml");
      if (!applied) return Unreachable(applied.error());
      if (applied->status / 100 != 2) return FailResponse(*applied, fmt::format("error when applying {}", d.Where()));
      *ctx.out << ref << " serverside-applied\n";
      return applied->status == 201 ? Outcome::kCreated : Outcome::kConfigured;
    }
    for (int attempt = 0;; ++attempt) {
      const bool last_try = attempt == 1;
      auto got = client.Request("GET", path);
      if (!got) return Unreachable(got.error());
      if (got->status == 404) {
        json body = obj;
        if (body.contains("metadata")) body["metadata"].erase("resourceVersion");
        auto created = client.Request("POST", CollectionPath(k, ns), body.dump());
        if (!created) return Unreachable(created.error());
        if (created->status == 409 && !last_try) continue;  // created meanwhile: update it instead
        if (created->status / 100 != 2) {
          return FailResponse(*created, fmt::format("error when creating {}", d.Where()));
        }
        *ctx.out << ref << " created\n";
        return Outcome::kCreated;
      }
      if (got->status != 200) {
        return FailResponse(*got, fmt::format("error when retrieving the current state of {}", d.Where()));
      }
      const json live = json::parse(got->body, nullptr, /*allow_exceptions=*/false);
      if (!live.is_object()) return Fail(fmt::format("error: {}: the server answered GET {} with no object", d.Where(), path));
      // A Node's pod range is the server's to give, and may not change once
      // given: a manifest that names none keeps the live one, as kubectl's
      // merge keeps the fields a manifest never set.
      json desired = obj;
      if (k.kind == "Node") KeepLivePodCidrs(desired, live);
      // A Service's address and defaults are the server's, as it keeps them on
      // update: a manifest that leaves them out is unchanged (api/service.h).
      if (k.store_key == kServiceKind) {
        KeepAllocatedServiceFields(desired, live);
        DefaultService(desired);
      }
      DefaultObject(k, desired);  // what the server fills in (api/defaults.h)
      if (DesiredState(desired) == DesiredState(live)) {
        *ctx.out << ref << " unchanged\n";
        return Outcome::kUnchanged;
      }
      json body = std::move(desired);
      body["metadata"]["resourceVersion"] = TextAt(live, "metadata.resourceVersion");
      // Status is the server's; sending it back keeps it whatever the server does with a PUT's status.
      if (live.contains("status")) body["status"] = live["status"];
      auto updated = client.Request("PUT", path, body.dump());
      if (!updated) return Unreachable(updated.error());
      if (updated->status == 409 && !last_try) continue;
      if (updated->status / 100 != 2) {
        return FailResponse(*updated, fmt::format("error when updating {}", d.Where()));
      }
      *ctx.out << ref << " configured\n";
      return Outcome::kConfigured;
    }
  }
};

}  // namespace

int RunApply(const CommandContext& ctx, const ApplyOptions& options) {
  if (options.files.empty()) {
    *ctx.err << "error: name the manifests with -f FILE, -f DIR or -f - (standard input)\n";
    return kExitUsage;
  }
  LoadedManifests loaded = LoadManifests(options.files, *ctx.in);
  for (const std::string& e : loaded.errors) *ctx.err << e << "\n";
  if (loaded.documents.empty()) {
    if (loaded.errors.empty()) *ctx.err << "error: no objects passed to apply\n";
    return kExitFailure;
  }
  auto client = ctx.Client();
  Applier applier{ctx, *client, options};
  int failed = static_cast<int>(loaded.errors.size());
  for (const SourceDocument& d : loaded.documents) {
    const Outcome o = applier.Apply(d);
    if (o == Outcome::kFatal) return kExitFailure;
    if (o == Outcome::kFailed) ++failed;
  }
  return failed == 0 ? kExitOk : kExitFailure;
}

}  // namespace tessera
