"""The seeds a run hands out besides its deals: its local agents', a remote bot's, and a deal's
own where a person names none.

* ``agent_seed(seed, game, index)``: a local agent's seed for game ``game`` of a run seeded
  ``seed`` (agent ``index``). 64 bits of the run seed's stream named ``agents``
  (``np.random.SeedSequence(seed, spawn_key=(stream_key("agents"), game, index))``), apart from
  the deal's (``env.reset(seed=...)`` is gymnasium's ``SeedSequence(seed)`` itself, whose own
  children are spawned by number): the same run seed gives the same agents the same seeds, so a
  run of local agents replays exactly. The seed never leaves the process.
* ``bot_seed()``: the seed a remote bot is sent for a game (``players.remote``): 53 bits from the
  operating system (``secrets``), drawn afresh for every game, a function of nothing: neither the
  deal's seed, nor the run's, nor the game, nor the seat. A bot is another process whose
  determinism a run does not own, so it is given nothing to replay with, and so nothing it could
  turn back into the deal. Below ``2**53``: every JSON reader reads it exactly (RFC 8259, 6), and
  a 32-bit hash (such as agents had) can equal it only in the one game in 2**21 where it falls
  below ``2**32``.
* ``deal_seed()``: the deal seed of a game a person starts without one (``play``, the browser
  app): 64 bits from the operating system, the most the engine takes (``engine.rng``: a seed is an
  integer in ``[0, 2**64)``; the deal's own generator holds 63 of them). Nobody can deal the game
  again without being told the seed: it is printed or saved with the record only.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable

import numpy as np

from island_fortress_env.engine.rng import DEAL_SEED_BITS, deal_seed
from island_fortress_env.players.specs import AgentKind, parse_agent_spec

__all__ = ["DEAL_SEED_BITS", "agent_seed", "bot_seed", "deal_seed", "run_seed", "stream_key"]

BOT_SEED_BITS = 53


def stream_key(name: str) -> int:
    """The number a stream of seeds is spawned by: the first 8 bytes of ``name``'s SHA-256, so
    that streams are told apart by name, never by a numeric offset."""
    return int.from_bytes(hashlib.sha256(f"island-fortress/{name}".encode()).digest()[:8], "little")


AGENT_STREAM = stream_key("agents")


def agent_seed(seed: int, game: int, index: int) -> int:
    """The seed of local agent ``index`` for game ``game`` of a run with seed ``seed`` (module
    doc): 64 bits of the run seed's ``agents`` stream."""
    sequence = np.random.SeedSequence(seed, spawn_key=(AGENT_STREAM, game, index))
    return int(sequence.generate_state(1, np.uint64)[0])


def bot_seed() -> int:
    """The seed a remote bot is sent for one game: ``BOT_SEED_BITS`` bits from the operating
    system, independent of everything the run knows (module doc)."""
    return secrets.randbits(BOT_SEED_BITS)


def run_seed(given: int | None, specs: Iterable[str]) -> tuple[int, bool]:
    """The seed a run of ``specs`` deals from, and whether it was drawn: ``given`` where a person
    gave one; else 0, so a run of local agents replays by default; else, when a remote bot sits at
    the table (``remote:URL``), a ``deal_seed()``: a bot that knew the run deals from 0 would know
    every deal before the first card."""
    if given is not None:
        return given, False
    remote = any(parse_agent_spec(spec).kind is AgentKind.REMOTE for spec in specs)
    return (deal_seed(), True) if remote else (0, False)
