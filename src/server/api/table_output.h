// Table output: kube-apiserver's server-side printing, which kubectl asks for
// on every `get` (Accept: application/json;as=Table;v=v1;g=meta.k8s.io): a
// meta.k8s.io Table whose columns are the kind's printer columns
// (api/printer_columns.h), the same as `tessera get` prints, wide ones at
// priority 1 (kubectl shows them with -o wide). Each row carries the object as
// PartialObjectMetadata (?includeObject=Metadata, the default), whole (Object)
// or not at all (None), as the apiserver does.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/kinds.h"
#include "common/result.h"

namespace tessera {

// The meta.k8s.io version of Table an Accept header asks for ("v1" or
// "v1beta1", the first listed), nullopt when it asks for none.
std::optional<std::string> TableVersionAsked(std::string_view accept);

struct TableOptions {
  std::string version = "v1";          // meta.k8s.io/<version>
  std::string include_object = "Metadata";  // None, Metadata or Object
  int64_t now = 0;                      // for ages (seconds since the epoch)
  int64_t default_priority = 0;         // the globalDefault PriorityClass's value, for workloads
};

// ?includeObject= as the apiserver reads it: "", None, Metadata or Object;
// anything else is InvalidArgument naming the allowed values.
Result<std::string> ParseIncludeObject(std::string_view text);

// A Table of `objects` (all of `kind`), with `list_metadata` as its metadata
// (resourceVersion, continue, remainingItemCount).
nlohmann::json ObjectsTable(const KindInfo& kind, const std::vector<nlohmann::json>& objects,
                            nlohmann::json list_metadata, const TableOptions& options);
// The Table of one object (a get, or one watch event's object).
nlohmann::json ObjectTable(const KindInfo& kind, const nlohmann::json& object, const TableOptions& options);

}  // namespace tessera
