#include "cli/commands/manifest_sources.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessera {
namespace {

namespace fs = std::filesystem;

bool IsManifestFile(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

void LoadText(const std::string& source, const std::string& text, LoadedManifests& out) {
  auto docs = ParseManifests(text);
  if (!docs) {
    out.errors.push_back(fmt::format("error: error parsing \"{}\": {}", source, docs.error().message()));
    return;
  }
  for (ManifestDocument& d : *docs) out.documents.push_back(SourceDocument{source, std::move(d)});
}

void LoadFile(const fs::path& path, LoadedManifests& out) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    out.errors.push_back(fmt::format("error: cannot read \"{}\": {}", path.string(), std::strerror(errno)));
    return;
  }
  std::ostringstream text;
  text << file.rdbuf();
  LoadText(path.string(), text.str(), out);
}

}  // namespace

std::string SourceDocument::Where() const { return fmt::format("\"{}\" {}", source, doc.Where()); }

LoadedManifests LoadManifests(const std::vector<std::string>& paths, std::istream& in) {
  LoadedManifests out;
  bool stdin_read = false;
  for (const std::string& arg : paths) {
    if (arg == "-") {
      if (stdin_read) continue;  // standard input can be read once
      stdin_read = true;
      std::ostringstream text;
      text << in.rdbuf();
      LoadText("STDIN", text.str(), out);
      continue;
    }
    std::error_code ec;
    const fs::path path(arg);
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        if (entry.is_regular_file() && IsManifestFile(entry.path())) files.push_back(entry.path());
      }
      if (ec) {
        out.errors.push_back(fmt::format("error: cannot list \"{}\": {}", arg, ec.message()));
        continue;
      }
      std::sort(files.begin(), files.end());
      if (files.empty()) {
        out.errors.push_back(fmt::format("error: \"{}\" holds no .yaml, .yml or .json files", arg));
      }
      for (const fs::path& f : files) LoadFile(f, out);
    } else if (fs::exists(path, ec)) {
      LoadFile(path, out);
    } else {
      out.errors.push_back(fmt::format("error: the path \"{}\" does not exist", arg));
    }
  }
  return out;
}

}  // namespace tessera
