// Where the seed's manifests are: ../shared/examples/seed next to the repository
// (from the source directory, or from the working directory, where ctest runs the
// tests at the repository root). Empty when neither exists.
#pragma once

#include <algorithm>
#include <filesystem>
#include <vector>

namespace tessera::testing {

inline std::filesystem::path SeedDir() {
  namespace fs = std::filesystem;
  for (fs::path candidate : {fs::path(TESSERA_SOURCE_DIR) / ".." / "shared" / "examples" / "seed",
                             fs::path("..") / "shared" / "examples" / "seed"}) {
    std::error_code ec;
    if (fs::is_directory(candidate, ec)) return candidate;
  }
  return {};
}

// The seed's .yaml files, in name order (the order they are applied in); empty
// when there is no seed directory.
inline std::vector<std::filesystem::path> SeedManifestFiles() {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path dir = SeedDir();
  if (dir.empty()) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tessera::testing
