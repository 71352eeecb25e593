// StrongId<Tag>: a dense integer index that cannot be mixed up with another kind
// of id. The scheduler core addresses nodes, queues and workloads by their
// position in the snapshot, so ids are indices into the snapshot's vectors.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace tessera {

template <typename Tag>
class StrongId {
 public:
  constexpr StrongId() = default;
  constexpr explicit StrongId(int32_t v) : value_(v) {}

  constexpr int32_t value() const { return value_; }
  constexpr bool valid() const { return value_ >= 0; }

  friend constexpr auto operator<=>(StrongId, StrongId) = default;

 private:
  int32_t value_ = -1;
};

}  // namespace tessera

template <typename Tag>
struct std::hash<tessera::StrongId<Tag>> {
  size_t operator()(tessera::StrongId<Tag> id) const noexcept { return std::hash<int32_t>()(id.value()); }
};
