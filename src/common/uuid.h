// UuidGenerator: random (version 4) UUIDs for metadata.uid.
//
// Formatted as RFC 9562 text, lowercase: 8-4-4-4-12 hex digits, with the
// version nibble 4 and the variant bits 10. The bits come from an mt19937_64
// seeded from std::random_device: unique in practice (122 random bits), not a
// secret (never use one as a credential).
//
// Thread-safety: Next() may be called from any number of threads.
#pragma once

#include <cstdint>
#include <mutex>
#include <random>
#include <string>

namespace tessera {

class UuidGenerator {
 public:
  UuidGenerator();  // seeded from std::random_device
  explicit UuidGenerator(uint64_t seed);  // deterministic, for tests

  std::string Next();

 private:
  std::mutex mu_;
  std::mt19937_64 rng_;
};

// Formats 128 bits as a version-4 UUID (overwrites the version and variant bits).
std::string FormatUuidV4(uint64_t high, uint64_t low);

}  // namespace tessera
