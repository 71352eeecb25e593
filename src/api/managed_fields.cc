#include "api/managed_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "api/strategic_merge_patch.h"

namespace tessera {
namespace {

using nlohmann::json;

// Fields the server sets, which nobody owns.
bool Unowned(const std::vector<std::string>& names) {
  if (names.size() == 1) return names[0] == "apiVersion" || names[0] == "kind" || names[0] == "status";
  if (names.size() == 2 && names[0] == "metadata") {
    static const std::set<std::string> server_set = {"name",          "namespace", "uid",          "resourceVersion",
                                                     "generation",    "managedFields", "creationTimestamp",
                                                     "deletionTimestamp", "selfLink", "generateName"};
    return server_set.contains(names[1]);
  }
  return false;
}

void Walk(const json& value, FieldPath& path, std::vector<std::string>& names, FieldSet& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, child] : value.items()) {
      names.push_back(key);
      if (!Unowned(names) && !child.is_null()) {
        path.push_back("f:" + key);
        Walk(child, path, names, out);
        path.pop_back();
      }
      names.pop_back();
    }
    return;
  }
  if (value.is_array() && !value.empty()) {
    const std::optional<std::string> key = ListMergeKey(names);
    if (key && key->empty()) {
      for (const json& v : value) {
        path.push_back("v:" + v.dump());
        out.insert(path);
        path.pop_back();
      }
      return;
    }
    if (key && std::all_of(value.begin(), value.end(), [&](const json& e) { return e.is_object() && e.contains(*key); })) {
      for (const json& element : value) {
        path.push_back("k:" + json{{*key, element[*key]}}.dump());
        out.insert(path);  // the element itself ("." in fieldsV1)
        Walk(element, path, names, out);
        path.pop_back();
      }
      return;
    }
  }
  out.insert(path);  // a scalar, an empty object or list, or a list replaced whole
}

// The child of `value` a step names, or nullptr.
const json* Step(const json& value, const std::string& step) {
  if (step.starts_with("f:")) {
    if (!value.is_object()) return nullptr;
    auto it = value.find(step.substr(2));
    return it == value.end() ? nullptr : &*it;
  }
  if (!value.is_array()) return nullptr;
  if (step.starts_with("k:")) {
    const json key = json::parse(step.substr(2), nullptr, false);
    if (!key.is_object()) return nullptr;
    for (const json& e : value) {
      if (e.is_object() &&
          std::all_of(key.items().begin(), key.items().end(), [&](const auto& kv) {
            return e.contains(kv.key()) && e[kv.key()] == kv.value();
          })) {
        return &e;
      }
    }
    return nullptr;
  }
  if (step.starts_with("v:")) {
    const json v = json::parse(step.substr(2), nullptr, false);
    auto it = std::find(value.begin(), value.end(), v);
    return it == value.end() ? nullptr : &*it;
  }
  return nullptr;
}

std::optional<json> ValueAt(const json& object, const FieldPath& path) {
  const json* at = &object;
  for (const std::string& step : path) {
    at = Step(*at, step);
    if (at == nullptr) return std::nullopt;
  }
  return *at;
}

void RemoveAt(json& object, const FieldPath& path) {
  if (path.empty()) return;
  json* parent = &object;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const json* child = Step(*parent, path[i]);
    if (child == nullptr) return;
    parent = const_cast<json*>(child);
  }
  const std::string& last = path.back();
  if (last.starts_with("f:")) {
    if (parent->is_object()) parent->erase(last.substr(2));
    return;
  }
  if (const json* element = Step(*parent, last); element != nullptr) {
    for (auto it = parent->begin(); it != parent->end(); ++it) {
      if (&*it == element) {
        parent->erase(it);
        return;
      }
    }
  }
}

bool IsPrefix(const FieldPath& prefix, const FieldPath& path) {
  return prefix.size() <= path.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

// True when `owned` holds `field`, or a field that contains it or that it contains.
bool Overlaps(const FieldSet& owned, const FieldPath& field) {
  if (owned.contains(field)) return true;
  for (size_t n = 1; n < field.size(); ++n) {
    if (owned.contains(FieldPath(field.begin(), field.begin() + static_cast<std::ptrdiff_t>(n)))) return true;
  }
  auto it = owned.lower_bound(field);
  return it != owned.end() && IsPrefix(field, *it);
}

void Insert(json& node, const FieldPath& path, size_t i) {
  if (i == path.size()) return;
  json& child = node[path[i]];
  if (child.is_null()) child = json::object();
  if (i + 1 == path.size() && path[i].starts_with("k:")) child["."] = json::object();
  Insert(child, path, i + 1);
}

void Read(const json& node, FieldPath& path, FieldSet& out) {
  if (!node.is_object()) return;
  if (node.empty() && !path.empty()) out.insert(path);
  for (const auto& [step, child] : node.items()) {
    if (step == ".") {
      out.insert(path);
      continue;
    }
    path.push_back(step);
    Read(child, path, out);
    path.pop_back();
  }
}

struct Entry {
  std::string manager;
  std::string operation;
  std::string api_version;
  std::string time;
  FieldSet fields;
};

std::vector<Entry> EntriesOf(const json& object) {
  std::vector<Entry> entries;
  const json* metadata = object.is_object() && object.contains("metadata") ? &object["metadata"] : nullptr;
  if (metadata == nullptr || !metadata->contains("managedFields") || !(*metadata)["managedFields"].is_array()) {
    return entries;
  }
  // What a client sent of managedFields is read only as far as it is well formed.
  auto text = [](const json& e, const char* key, const char* fallback) {
    auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
  };
  for (const json& e : (*metadata)["managedFields"]) {
    if (!e.is_object() || text(e, "manager", "").empty()) continue;
    auto fields = e.find("fieldsV1");
    entries.push_back(Entry{.manager = text(e, "manager", ""),
                            .operation = text(e, "operation", "Update") == "Apply" ? "Apply" : "Update",
                            .api_version = text(e, "apiVersion", ""),
                            .time = text(e, "time", ""),
                            .fields = fields != e.end() ? FromFieldsV1(*fields) : FieldSet()});
  }
  return entries;
}

void SetEntries(json& object, const std::vector<Entry>& entries) {
  json list = json::array();
  for (const Entry& e : entries) {
    if (e.fields.empty()) continue;  // a manager that owns nothing is dropped, as the apiserver does
    list.push_back({{"manager", e.manager},
                    {"operation", e.operation},
                    {"apiVersion", e.api_version},
                    {"time", e.time},
                    {"fieldsType", "FieldsV1"},
                    {"fieldsV1", ToFieldsV1(e.fields)}});
  }
  if (list.empty()) {
    object["metadata"].erase("managedFields");
  } else {
    object["metadata"]["managedFields"] = std::move(list);
  }
}

}  // namespace

FieldSet FieldsOf(const json& object) {
  FieldSet out;
  if (!object.is_object() || object.empty()) return out;
  FieldPath path;
  std::vector<std::string> names;
  Walk(object, path, names, out);
  return out;
}

json ToFieldsV1(const FieldSet& fields) {
  json root = json::object();
  for (const FieldPath& path : fields) Insert(root, path, 0);
  return root;
}

FieldSet FromFieldsV1(const json& fields_v1) {
  FieldSet out;
  FieldPath path;
  Read(fields_v1, path, out);
  return out;
}

std::string FieldPathText(const FieldPath& path) {
  std::string out;
  for (const std::string& step : path) {
    if (step.starts_with("f:")) {
      out += "." + step.substr(2);
    } else if (step.starts_with("k:")) {
      const json key = json::parse(step.substr(2), nullptr, false);
      std::string inside;
      if (key.is_object()) {
        for (const auto& [k, v] : key.items()) inside += fmt::format("{}{}={}", inside.empty() ? "" : ",", k, v.dump());
      }
      out += "[" + inside + "]";
    } else if (step.starts_with("v:")) {
      out += "[=" + step.substr(2) + "]";
    }
  }
  return out;
}

Result<ApplyOutcome> ServerSideApply(const json& current, const json& applied, const ApplyRequest& request) {
  if (request.manager.empty()) {
    return Err(Status::InvalidArgument(
        "fieldManager: Required value: is required for apply patch (kubectl apply --server-side sends it)"));
  }
  if (!applied.is_object()) return Err(Status::InvalidArgument("an apply patch is one object, in YAML or JSON"));
  const FieldSet intent = FieldsOf(applied);
  const json base = current.is_object() ? current : json::object();
  std::vector<Entry> entries = EntriesOf(base);
  auto own = std::find_if(entries.begin(), entries.end(),
                          [&](const Entry& e) { return e.manager == request.manager && e.operation == "Apply"; });
  const FieldSet before = own == entries.end() ? FieldSet() : own->fields;

  ApplyOutcome outcome;
  for (Entry& e : entries) {
    if (e.manager == request.manager) continue;
    FieldSet taken;
    for (const FieldPath& field : intent) {
      if (!Overlaps(e.fields, field)) continue;
      if (ValueAt(base, field) == ValueAt(applied, field)) continue;  // the same value: shared, not a conflict
      if (request.force) {
        taken.insert(field);
      } else {
        outcome.conflicts.push_back(ApplyConflict{.manager = e.manager, .api_version = e.api_version, .field = field});
      }
    }
    for (const FieldPath& field : taken) {
      std::erase_if(e.fields, [&](const FieldPath& owned) { return IsPrefix(owned, field) || IsPrefix(field, owned); });
    }
  }
  if (!outcome.conflicts.empty()) return outcome;

  json object = base;
  // What this manager applied before and no longer does goes, unless another owns it.
  for (const FieldPath& field : before) {
    if (intent.contains(field)) continue;
    const bool shared = std::any_of(entries.begin(), entries.end(), [&](const Entry& e) {
      return e.manager != request.manager && Overlaps(e.fields, field);
    });
    if (!shared) RemoveAt(object, field);
  }
  json intent_doc = applied;
  if (!request.status) intent_doc.erase("status");
  if (intent_doc.contains("metadata") && intent_doc["metadata"].is_object()) {
    intent_doc["metadata"].erase("managedFields");
    intent_doc["metadata"].erase("resourceVersion");
  }
  ASSIGN_OR_RETURN(object, StrategicMergePatch(object, intent_doc));
  std::erase_if(entries, [&](const Entry& e) { return e.manager == request.manager && e.operation == "Apply"; });
  entries.push_back(Entry{.manager = request.manager,
                          .operation = "Apply",
                          .api_version = request.api_version,
                          .time = request.now,
                          .fields = intent});
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = json::object();
  SetEntries(object, entries);
  outcome.object = std::move(object);
  return outcome;
}

std::string ConflictMessage(const std::vector<ApplyConflict>& conflicts) {
  // Grouped by manager, in the order they came, as the apiserver words it.
  std::vector<std::pair<std::string, std::vector<const ApplyConflict*>>> by_manager;
  for (const ApplyConflict& c : conflicts) {
    const std::string who = fmt::format("\"{}\" using {}", c.manager, c.api_version);
    auto it = std::find_if(by_manager.begin(), by_manager.end(), [&](const auto& g) { return g.first == who; });
    if (it == by_manager.end()) {
      by_manager.push_back({who, {&c}});
    } else {
      it->second.push_back(&c);
    }
  }
  std::string out = fmt::format("Apply failed with {} conflict{}: ", conflicts.size(), conflicts.size() == 1 ? "" : "s");
  for (size_t g = 0; g < by_manager.size(); ++g) {
    const auto& [who, list] = by_manager[g];
    if (g > 0) out += "\n";
    if (list.size() == 1) {
      out += fmt::format("conflict with {}: {}", who, FieldPathText(list[0]->field));
    } else {
      out += fmt::format("conflicts with {}:", who);
      for (const ApplyConflict* c : list) out += "\n- " + FieldPathText(c->field);
    }
  }
  return out;
}

json ConflictCauses(const std::vector<ApplyConflict>& conflicts) {
  json causes = json::array();
  for (const ApplyConflict& c : conflicts) {
    causes.push_back({{"reason", "FieldManagerConflict"},
                      {"message", fmt::format("conflict with \"{}\" using {}", c.manager, c.api_version)},
                      {"field", FieldPathText(c.field)}});
  }
  return causes;
}

json RecordUpdate(const json& previous, json next, std::string_view manager, std::string_view api_version,
                  std::string_view now) {
  if (!next.is_object() || !next.contains("metadata") || !next["metadata"].is_object()) return next;
  std::vector<Entry> entries = EntriesOf(previous.is_object() ? previous : json::object());
  const FieldSet after = FieldsOf(next);
  FieldSet changed;
  for (const FieldPath& field : after) {
    if (ValueAt(previous.is_object() ? previous : json(), field) != ValueAt(next, field)) changed.insert(field);
  }
  for (const FieldPath& field : FieldsOf(previous)) {
    if (!after.contains(field)) changed.insert(field);
  }
  if (changed.empty() && !entries.empty()) {
    SetEntries(next, entries);  // nothing changed hands (what a client sent of managedFields is not taken)
    return next;
  }
  for (Entry& e : entries) {
    if (e.manager == manager && e.operation == "Update") continue;
    std::erase_if(e.fields, [&](const FieldPath& owned) {
      return std::any_of(changed.begin(), changed.end(), [&](const FieldPath& c) {
        return IsPrefix(owned, c) || IsPrefix(c, owned);
      });
    });
  }
  auto mine = std::find_if(entries.begin(), entries.end(),
                           [&](const Entry& e) { return e.manager == manager && e.operation == "Update"; });
  if (mine == entries.end()) {
    entries.push_back(Entry{.manager = std::string(manager), .operation = "Update"});
    mine = entries.end() - 1;
  }
  for (const FieldPath& field : changed) {
    if (after.contains(field)) mine->fields.insert(field);
  }
  std::erase_if(mine->fields, [&](const FieldPath& owned) { return !after.contains(owned); });
  mine->api_version = std::string(api_version);
  mine->time = std::string(now);
  SetEntries(next, entries);
  return next;
}

std::string ManagerOf(std::string_view field_manager, std::string_view user_agent) {
  if (!field_manager.empty()) return std::string(field_manager);
  const std::string_view product = user_agent.substr(0, user_agent.find_first_of("/ "));
  return product.empty() ? "unknown" : std::string(product);
}

}  // namespace tessera
