#include "common/uuid.h"

namespace tessera {
namespace {

uint64_t SeedFromRandomDevice() {
  std::random_device device;
  // random_device yields 32 bits per call; take two for a 64-bit seed.
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace

UuidGenerator::UuidGenerator() : rng_(SeedFromRandomDevice()) {}

UuidGenerator::UuidGenerator(uint64_t seed) : rng_(seed) {}

std::string UuidGenerator::Next() {
  uint64_t high = 0;
  uint64_t low = 0;
  {
    std::lock_guard lock(mu_);
    high = rng_();
    low = rng_();
  }
  return FormatUuidV4(high, low);
}

std::string FormatUuidV4(uint64_t high, uint64_t low) {
  // Layout (RFC 9562 section 5.4): octet 6's high nibble is the version (4),
  // octet 8's two high bits are the variant (10).
  high = (high & ~0x000000000000f000ULL) | 0x0000000000004000ULL;
  low = (low & ~0xc000000000000000ULL) | 0x8000000000000000ULL;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  auto append = [&](uint64_t bits, int first_nibble, int count) {
    for (int i = first_nibble; i < first_nibble + count; ++i) {
      out.push_back(kHex[(bits >> (60 - 4 * i)) & 0xf]);
    }
  };
  append(high, 0, 8);
  out.push_back('-');
  append(high, 8, 4);
  out.push_back('-');
  append(high, 12, 4);
  out.push_back('-');
  append(low, 0, 4);
  out.push_back('-');
  append(low, 4, 12);
  return out;
}

}  // namespace tessera
