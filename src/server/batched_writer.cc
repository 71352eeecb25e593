#include "server/batched_writer.h"

#include <spdlog/spdlog.h>

namespace tessera {
namespace {

constexpr size_t kUnitsPerTransaction = 256;

}  // namespace

void BatchedWriter::Add(std::vector<WriteOp> unit, std::string what) {
  if (!unit.empty()) units_.push_back(Unit{std::move(unit), std::move(what)});
}

void BatchedWriter::Add(WriteOp op, std::string what) {
  std::vector<WriteOp> unit;
  unit.push_back(std::move(op));
  Add(std::move(unit), std::move(what));
}

size_t BatchedWriter::Flush() {
  size_t written = 0;
  for (size_t begin = 0; begin < units_.size(); begin += kUnitsPerTransaction) {
    const size_t end = std::min(units_.size(), begin + kUnitsPerTransaction);
    std::vector<std::vector<WriteOp>> units;
    units.reserve(end - begin);
    std::vector<std::vector<bool>> deletes;
    deletes.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) {
      std::vector<bool>& d = deletes.emplace_back();
      for (const WriteOp& op : units_[i].ops) d.push_back(op.op == WriteOp::Kind::kDelete);
      units.push_back(std::move(units_[i].ops));
    }
    std::vector<Store::UnitResult> results = store_.ApplyUnits(std::move(units));
    for (size_t u = 0; u < results.size(); ++u) {
      if (!results[u]) {
        spdlog::warn("{}: {}; the next pass retries from fresher state", units_[begin + u].what,
                     results[u].error().message());
        continue;
      }
      std::vector<StoredObject>& applied = *results[u];
      for (size_t i = 0; i < applied.size(); ++i) {
        if (deletes[u][i]) {
          cache_.Remove(applied[i].key, applied[i].revision);
        } else {
          cache_.Put(std::move(applied[i]));
        }
      }
      ++written;
      wrote_ = true;
    }
  }
  units_.clear();
  return written;
}

}  // namespace tessera
