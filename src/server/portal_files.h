// The portal (web/, docs/portal.md) as the server serves it at /ui/: the files
// of its build (`npm run build` writes web/dist) and /ui/config.json, which tells
// the browser how it may sign in. The portal itself uses only the public API;
// this serves nothing but static files and that configuration, without a token.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "http/http_server.h"

namespace tessera {

class PortalFiles {
 public:
  // `dir` holds index.html and the assets; empty or missing: /ui/ answers 404
  // saying how to build the portal. `config` is served as /ui/config.json.
  PortalFiles(std::filesystem::path dir, nlohmann::json config);

  // Whether `path` is the portal's (/ui or under /ui/).
  static bool Owns(const std::string& path);

  // GET or HEAD of /ui/...: the file, or index.html for a path that names no
  // file and has no extension (the portal's own routes: /ui/ns/team-a/workloads),
  // so links into the portal can be shared. Anything else under /ui/ is 404.
  HttpResponse Serve(const HttpRequest& request) const;

  // The default of --ui-dir: the portal installed beside this program
  // (../share/tessera/ui), else the source tree's build (web/dist); empty when neither exists.
  static std::filesystem::path DefaultDir();

 private:
  std::filesystem::path dir_;
  std::string config_;
};

}  // namespace tessera
