// BatchedWriter: commits a controller pass's writes in few transactions.
//
// Writes come in units (all of a unit's ops or none: an admission and its Pods).
// Flush() commits up to kUnitsPerTransaction units per Store::ApplyUnits: a unit
// that fails (it met a conflict: a user changed that object since the pass read
// it) costs only itself, and the next pass redoes it from fresher state.
// Results go into the ObjectCache at once.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "server/object_cache.h"
#include "store/store.h"

namespace tessera {

class BatchedWriter {
 public:
  BatchedWriter(Store& store, ObjectCache& cache) : store_(store), cache_(cache) {}

  // `what` names the unit in the warning logged when it fails.
  void Add(std::vector<WriteOp> unit, std::string what);
  void Add(WriteOp op, std::string what);

  // Commits everything added; returns how many units were written.
  size_t Flush();
  bool wrote() const { return wrote_; }

 private:
  struct Unit {
    std::vector<WriteOp> ops;
    std::string what;
  };
  Store& store_;
  ObjectCache& cache_;
  std::vector<Unit> units_;
  bool wrote_ = false;
};

}  // namespace tessera
