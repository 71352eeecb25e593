// Where the seed's manifests are: ../shared/examples/seed next to the repository
// (from the source directory, or from the working directory, where ctest runs the
// tests at the repository root). Empty when neither exists.
#pragma once

#include <filesystem>

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

}  // namespace tessera::testing
