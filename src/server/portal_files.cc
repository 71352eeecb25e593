#include "server/portal_files.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

namespace tessera {

namespace {

constexpr std::string_view kPrefix = "/ui/";

std::string ContentTypeOf(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json" || ext == ".map") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".woff2") return "font/woff2";
  if (ext == ".txt") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

HttpResponse Text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

std::optional<std::string> ReadFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream body;
  body << in.rdbuf();
  return std::move(body).str();
}

// The request's path below /ui/ as a relative path inside the portal's folder,
// or nullopt when it would leave it ("..") or names something odd.
std::optional<std::filesystem::path> RelativeFile(std::string_view rest) {
  std::filesystem::path out;
  size_t start = 0;
  while (start <= rest.size()) {
    size_t slash = rest.find('/', start);
    if (slash == std::string_view::npos) slash = rest.size();
    const std::string_view part = rest.substr(start, slash - start);
    if (part == "..") return std::nullopt;
    if (!part.empty() && part != ".") out /= std::string(part);
    start = slash + 1;
  }
  return out;
}

}  // namespace

PortalFiles::PortalFiles(std::filesystem::path dir, nlohmann::json config)
    : dir_(std::move(dir)), config_(config.dump()) {}

bool PortalFiles::Owns(const std::string& path) { return path == "/ui" || path.starts_with(kPrefix); }

std::filesystem::path PortalFiles::DefaultDir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = self.parent_path().parent_path() / "share" / "tessera" / "ui";
    if (std::filesystem::exists(installed / "index.html", ec)) return installed;
  }
#ifdef TESSERA_SOURCE_DIR
  const std::filesystem::path built = std::filesystem::path(TESSERA_SOURCE_DIR) / "web" / "dist";
  if (std::filesystem::exists(built / "index.html", ec)) return built;
#endif
  return {};
}

HttpResponse PortalFiles::Serve(const HttpRequest& request) const {
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse r = Text(405, fmt::format("{} is not allowed here: the portal's files are read with GET\n", request.method));
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  if (request.path == "/ui") {
    HttpResponse r = Text(301, "");
    r.headers.emplace_back("Location", "/ui/");
    return r;
  }
  if (request.path == "/ui/config.json") {
    HttpResponse r;
    r.body = config_;
    r.headers.emplace_back("Cache-Control", "no-cache");
    return r;
  }
  std::error_code ec;
  if (dir_.empty() || !std::filesystem::exists(dir_ / "index.html", ec)) {
    return Text(404,
                "The portal is not built on this server. Build it with `make run` (or `npm ci && npm run build` in web/) "
                "and start the server with --ui-dir web/dist.\n");
  }
  const std::optional<std::filesystem::path> rel = RelativeFile(std::string_view(request.path).substr(kPrefix.size()));
  if (!rel) return Text(404, "404 page not found\n");
  std::filesystem::path file = dir_ / *rel;
  const bool is_file = !rel->empty() && std::filesystem::is_regular_file(file, ec);
  if (!is_file) {
    // A portal route (no extension): the app, which draws the view the path names.
    if (!rel->empty() && rel->has_extension()) return Text(404, "404 page not found\n");
    file = dir_ / "index.html";
  }
  std::optional<std::string> body = ReadFile(file);
  if (!body) return Text(404, "404 page not found\n");
  HttpResponse r;
  r.content_type = ContentTypeOf(file);
  // Vite names its assets by their content: those never change. index.html
  // (and so every route) is checked again each time, so a new build is seen.
  const bool hashed = rel->begin() != rel->end() && *rel->begin() == "assets";
  r.headers.emplace_back("Cache-Control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  if (file.filename() == "index.html") {
    r.headers.emplace_back("Content-Security-Policy",
                           "default-src 'self'; connect-src 'self' https:; img-src 'self' data:; style-src 'self' "
                           "'unsafe-inline'; frame-ancestors 'none'; base-uri 'self'; form-action 'self' https:");
    r.headers.emplace_back("X-Frame-Options", "DENY");
  }
  r.body = request.method == "HEAD" ? std::string() : std::move(*body);
  return r;
}

}  // namespace tessera
