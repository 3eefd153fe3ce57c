"""The game's own random generator: SplitMix64 held in one int.

A ``random.Random`` carries 2.5 KB of state, which would dominate ``State.clone()``.
SplitMix64 is one 64-bit integer, so cloning the generator is free and a game is
reproducible byte for byte from its seed.
"""

from __future__ import annotations

_MASK = (1 << 64) - 1


def seed_state(seed: int | None) -> int:
    """Turn any int seed (or None, meaning 0) into a 64-bit generator state."""
    return (0 if seed is None else int(seed)) & _MASK


def next_u64(state: int) -> tuple[int, int]:
    """Return (new_state, 64-bit output)."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def below(state: int, n: int) -> tuple[int, int]:
    """Return (new_state, uniform int in [0, n)) by rejection, so there is no modulo bias."""
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        state, x = next_u64(state)
        if x < limit:
            return state, x % n


def shuffle(state: int, items: list) -> int:
    """Fisher-Yates shuffle in place; returns the new generator state."""
    for i in range(len(items) - 1, 0, -1):
        state, j = below(state, i + 1)
        items[i], items[j] = items[j], items[i]
    return state
