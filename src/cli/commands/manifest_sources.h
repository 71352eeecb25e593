// The objects behind `-f` arguments (apply, delete): a file, a directory (its
// *.yaml, *.yml and *.json files, sorted by name, not recursive, as kubectl
// without -R) or "-" for standard input; each file may hold several YAML
// documents, a JSON object, or a List.
//
// A file that cannot be read or parsed is an error for that file only: the
// caller reports it and goes on with the others, as kubectl does.
//
// Thread-safety: reads the filesystem and `in`; no shared state.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "api/manifest.h"

namespace tessera {

struct SourceDocument {
  std::string source;  // the file's path as given (joined with the directory), or "STDIN"
  ManifestDocument doc;

  // "\"06-kueue.yaml\" document 2 (line 23)", for messages.
  std::string Where() const;
};

struct LoadedManifests {
  std::vector<SourceDocument> documents;
  std::vector<std::string> errors;  // "error: ...", one per file that failed
};

LoadedManifests LoadManifests(const std::vector<std::string>& paths, std::istream& in);

}  // namespace tessera
