#include "cli/commands/resource_paths.h"

#include <fmt/format.h>

#include <cctype>

namespace tessera {
namespace {

std::string ApiBase(const KindInfo& k) {
  if (k.group.empty()) return fmt::format("/api/{}", k.version);
  return fmt::format("/apis/{}/{}", k.group, k.version);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string PercentEncode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == ':' || c == '@') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string CollectionPath(const KindInfo& kind, std::string_view ns) {
  if (kind.namespaced && !ns.empty()) {
    return fmt::format("{}/namespaces/{}/{}", ApiBase(kind), PercentEncode(ns), kind.plural);
  }
  return fmt::format("{}/{}", ApiBase(kind), kind.plural);
}

std::string ObjectPath(const KindInfo& kind, std::string_view ns, std::string_view name) {
  return fmt::format("{}/{}", CollectionPath(kind, ns), PercentEncode(name));
}

std::string WithQuery(std::string path, const std::vector<std::pair<std::string, std::string>>& query) {
  char sep = path.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [key, value] : query) {
    if (value.empty()) continue;
    path += sep;
    path += PercentEncode(key) + "=" + PercentEncode(value);
    sep = '&';
  }
  return path;
}

std::string QualifiedKind(const KindInfo& kind) {
  if (kind.group.empty()) return Lower(kind.kind);
  return fmt::format("{}.{}", Lower(kind.kind), kind.group);
}

std::string ObjectRef(const KindInfo& kind, std::string_view name) {
  return fmt::format("{}/{}", QualifiedKind(kind), name);
}

Result<const KindInfo*> ResolveKindArg(std::string_view name) {
  if (const KindInfo* k = FindKindByCliName(name)) return k;
  std::string known;
  for (const KindInfo& k : AllKinds()) {
    if (!known.empty()) known += ", ";
    known += k.group == "batch.volcano.sh" ? fmt::format("{}.{}", k.plural, k.group) : std::string(k.plural);
  }
  return Err(Status::InvalidArgument(
      fmt::format("the server doesn't have a resource type \"{}\"; known types: {}", name, known)));
}

Result<std::vector<ObjectArg>> ParseObjectArgs(const std::vector<std::string>& args) {
  std::vector<ObjectArg> out;
  if (args.empty()) return Err(Status::InvalidArgument("name a resource type, such as `pods` or `clusterqueues`"));
  if (args[0].find('/') != std::string::npos) {
    for (const std::string& arg : args) {
      const auto slash = arg.find('/');
      if (slash == std::string::npos || slash == 0 || slash + 1 == arg.size()) {
        return Err(Status::InvalidArgument(fmt::format(
            "\"{}\": when the first argument is TYPE/NAME, every argument must be TYPE/NAME", arg)));
      }
      ASSIGN_OR_RETURN(const KindInfo* kind, ResolveKindArg(std::string_view(arg).substr(0, slash)));
      out.push_back(ObjectArg{kind, arg.substr(slash + 1)});
    }
    return out;
  }
  ASSIGN_OR_RETURN(const KindInfo* kind, ResolveKindArg(args[0]));
  if (args.size() == 1) {
    out.push_back(ObjectArg{kind, ""});
    return out;
  }
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i].find('/') != std::string::npos) {
      return Err(Status::InvalidArgument(fmt::format(
          "\"{}\": there is no need to name the type twice; write `{} NAME` or `TYPE/NAME`", args[i], args[0])));
    }
    out.push_back(ObjectArg{kind, args[i]});
  }
  return out;
}

}  // namespace tessera
