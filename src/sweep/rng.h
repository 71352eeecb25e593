// Rng: the sweep's random numbers, the same on every platform for a seed.
//
// Why our own: the standard engines are portable but the standard
// distributions (uniform_real_distribution, normal_distribution) are not
// (libstdc++ and libc++ draw differently), and a sweep must suggest the same
// trials for the same seed and history wherever its controller runs.
// xoshiro256** (Blackman and Vigna) seeded through SplitMix64; doubles from
// the top 53 bits; normals by Box-Muller.
//
// Thread-safety: none; a value type, one per use.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace tessera::sweep {

// SplitMix64's finaliser: a well-mixed 64-bit function of x.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t x = seed;
    for (uint64_t& word : s_) {
      x += 0x9e3779b97f4a7c15ULL;
      word = Mix64(x);
    }
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }

  // Uniform in [0, n). REQUIRES: n > 0. Rejecting the lowest 2^64 mod n draws
  // keeps it unbiased.
  uint64_t Below(uint64_t n) {
    uint64_t threshold = (0 - n) % n;
    while (true) {
      uint64_t r = Next();
      if (r >= threshold) return r % n;
    }
  }

  // Standard normal (Box-Muller; one of the pair, so no hidden state).
  double Normal() {
    double u1 = 1.0 - Uniform();  // (0, 1]: log is finite
    double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace tessera::sweep
