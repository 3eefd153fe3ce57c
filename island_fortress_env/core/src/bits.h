// Bit sets: the wall (80 positions, engine/wall.py's layout) and favor card sets (36 cards).
#pragma once

#include <cstdint>

namespace island_fortress {

__extension__ typedef unsigned __int128 Bits;  // bit level * kStride + column stands for a wall cell

inline constexpr Bits Bit(int i) { return static_cast<Bits>(1) << i; }

// Set bits of a 64-bit word by the SWAR method: inline on every x86-64, where a build for the
// baseline instruction set (no POPCNT) would call libgcc's __popcountdi2 instead.
inline int PopCount(uint64_t b) {
  b = b - ((b >> 1) & 0x5555555555555555ULL);
  b = (b & 0x3333333333333333ULL) + ((b >> 2) & 0x3333333333333333ULL);
  b = (b + (b >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<int>((b * 0x0101010101010101ULL) >> 56);
}
inline int PopCount(Bits b) { return PopCount(static_cast<uint64_t>(b)) + PopCount(static_cast<uint64_t>(b >> 64)); }

// The lowest set bit's index; the set must not be empty.
inline int LowBit(Bits b) {
  const auto lo = static_cast<uint64_t>(b);
  return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll(static_cast<uint64_t>(b >> 64));
}
inline int LowBit(uint64_t b) { return __builtin_ctzll(b); }

// Calls f(index) for every set bit, lowest first (engine/wall.py's iter_bits).
template <typename Mask, typename F>
inline void ForEachBit(Mask mask, F&& f) {
  while (mask) {
    const int i = LowBit(mask);
    mask &= mask - 1;
    f(i);
  }
}

}  // namespace island_fortress
