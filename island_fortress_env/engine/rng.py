"""The game's own random generator: SplitMix64 held in one int.

A ``random.Random`` carries 2.5 KB of state, which would dominate ``State.clone()``.
SplitMix64 is one 64-bit integer, so cloning the generator is free and a game is
reproducible byte for byte from its seed.
"""

from __future__ import annotations

import operator
import secrets
from typing import SupportsIndex

_MASK = (1 << 64) - 1
DEAL_SEED_BITS = 64  # a seed is an integer in [0, 2**64): the most a deal can be given
# The random chooser of a game (``state.play_random_game``) draws from the deal's seed xor this: part
# of the game's definition, shared with the C++ core (``kChooserSalt``).
CHOOSER_SALT = 0x5EED


class SeedError(ValueError):
    """A seed that is not an integer in [0, 2**64) or None."""


def seed_state(seed: SupportsIndex | None) -> int:
    """A seed (an integer in [0, 2**64), a numpy integer included, or None meaning 0) as the
    generator's 64-bit state. Anything else (a string, a float, a bool, a negative or too
    large number) raises ``SeedError`` instead of being coerced."""
    if seed is None:
        return 0
    try:
        if isinstance(seed, bool):
            raise TypeError
        value = operator.index(seed)
    except TypeError:
        raise SeedError(f"invalid seed {seed!r}: must be an integer in [0, 2**64) or None") from None
    if not 0 <= value <= _MASK:
        raise SeedError(f"invalid seed {value}: must be in [0, 2**64)")
    return value


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


def deal_seed() -> int:
    """The deal seed of a game started without one (``play``, the browser app, the language-model
    harnesses): ``DEAL_SEED_BITS`` bits from the operating system, so nobody can deal the game
    again without being told its seed."""
    return secrets.randbits(DEAL_SEED_BITS)
