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

Status BatchedWriter::Commit(std::vector<WriteOp> ops) {
  std::vector<bool> deletes;
  for (const WriteOp& op : ops) deletes.push_back(op.op == WriteOp::Kind::kDelete);
  auto applied = store_.Apply(std::move(ops));
  if (!applied) return applied.error();
  for (size_t i = 0; i < applied->size(); ++i) {
    StoredObject& o = (*applied)[i];
    if (deletes[i]) {
      cache_.Remove(o.key, o.revision);
    } else {
      cache_.Put(std::move(o));
    }
  }
  wrote_ = true;
  return Status::Ok();
}

size_t BatchedWriter::Flush() {
  size_t written = 0;
  for (size_t begin = 0; begin < units_.size(); begin += kUnitsPerTransaction) {
    const size_t end = std::min(units_.size(), begin + kUnitsPerTransaction);
    if (end - begin > 1) {
      // A copy: if the transaction fails, each unit is tried again alone.
      std::vector<WriteOp> ops;
      size_t count = 0;
      for (size_t i = begin; i < end; ++i) count += units_[i].ops.size();
      ops.reserve(count);
      for (size_t i = begin; i < end; ++i) ops.insert(ops.end(), units_[i].ops.begin(), units_[i].ops.end());
      if (Commit(std::move(ops)).ok()) {
        written += end - begin;
        continue;
      }
    }
    for (size_t i = begin; i < end; ++i) {
      Status status = Commit(std::move(units_[i].ops));  // its last try: nothing to keep
      if (status.ok()) {
        ++written;
      } else {
        spdlog::warn("{}: {}; the next pass retries from fresher state", units_[i].what, status.message());
      }
    }
  }
  units_.clear();
  return written;
}

}  // namespace tessera
