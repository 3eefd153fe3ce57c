// The game's own random generator: SplitMix64 in one 64-bit integer, exactly as engine/rng.py.
#pragma once

#include <cstdint>

#include "bits.h"

namespace island_fortress::rng {

// Advances the state; returns the 64-bit output.
inline uint64_t NextU64(uint64_t& state) {
  state += 0x9E3779B97F4A7C15ULL;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A uniform integer in [0, n) by rejection, so there is no modulo bias (n >= 1).
inline uint64_t Below(uint64_t& state, uint64_t n) {
  const Bits two64 = static_cast<Bits>(1) << 64;
  const Bits limit = two64 - (two64 % n);
  while (true) {
    const uint64_t x = NextU64(state);
    if (x < limit) return x % n;
  }
}

// Fisher-Yates shuffle of items[0..size) in place.
template <typename T>
inline void Shuffle(uint64_t& state, T* items, int size) {
  for (int i = size - 1; i > 0; --i) {
    const auto j = static_cast<int>(Below(state, static_cast<uint64_t>(i) + 1));
    const T tmp = items[i];
    items[i] = items[j];
    items[j] = tmp;
  }
}

}  // namespace island_fortress::rng
