// Where the shared traces are: ../shared/traces beside the repository (from the
// source directory, or from the working directory). Empty when neither exists.
#pragma once

#include <filesystem>
#include <string>

namespace tessera {

inline std::string SharedTracesDir() {
  namespace fs = std::filesystem;
  for (fs::path candidate : {fs::path(TESSERA_SOURCE_DIR) / ".." / "shared" / "traces", fs::path("..") / "shared" / "traces"}) {
    std::error_code ec;
    if (fs::is_directory(candidate, ec)) return candidate.lexically_normal().string();
  }
  return {};
}

}  // namespace tessera
