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
* ``stream_seed(seed, stream, *key)`` / ``generator(seed, stream, *key)``: every other seed a run
  or a game derives from its seed, spawned by name: ``Stream`` names each purpose once (a run's
  minibatch order, its collectors, its evaluations' deals, a tournament's tables...), and the
  seed is 64 bits of ``np.random.SeedSequence(seed, spawn_key=(stream_key(stream), *key))``, an
  integer the engines take as a deal seed. No numeric offset: two purposes, or two run seeds,
  never share a deal by arithmetic, and the same seed gives the same streams.
"""

from __future__ import annotations

import enum
import hashlib
import secrets
from collections.abc import Iterable

import numpy as np

from island_fortress_env.engine.rng import DEAL_SEED_BITS, deal_seed
from island_fortress_env.players.specs import AgentKind, parse_agent_spec

__all__ = [
    "DEAL_SEED_BITS", "Stream", "agent_seed", "bot_seed", "deal_seed", "generator", "run_seed",
    "stream_key", "stream_seed",
]  # fmt: skip

BOT_SEED_BITS = 53


def stream_key(name: str) -> int:
    """The number a stream of seeds is spawned by: the first 8 bytes of ``name``'s SHA-256, so
    that streams are told apart by name, never by a numeric offset."""
    return int.from_bytes(hashlib.sha256(f"island-fortress/{name}".encode()).digest()[:8], "little")


class Stream(enum.Enum):
    """Every purpose a run or a game draws seeds for besides its user's seed, each named once: its
    value is the name its stream is spawned by (``stream_key``)."""

    AGENTS = "agents"  # a local agent's seed for one game (agent_seed)
    WEIGHTS = "weights"  # the native trainer's initial weights (torch's generator)
    MINIBATCHES = "minibatches"  # minibatch order: PPO's by the update a leg starts at, search's by iteration
    COLLECTOR = "collector"  # collector rank's draws: tables, seats, sampled actions
    COLLECTOR_OPPONENT = "collector-opponent"  # league.opponent's seats, by collector rank, game, seat
    PERIODIC_EVALUATION = "periodic-evaluation"  # the native trainer's periodic greedy evaluations
    FINAL_EVALUATION = "final-evaluation"  # its final one: other deals than the periodic ones'
    EVALUATION_TABLE = "evaluation-table"  # a greedy evaluation's batch of games, by table size
    EVALUATION = "evaluation"  # game g of ``evaluate``: its deal
    TRAINING_EVALUATION = "training-evaluation"  # the SB3 trainer's evaluation after training
    DEMONSTRATIONS = "demonstrations"  # imitation's teacher games, by table size
    SEARCH_GAMES = "search-games"  # search learning's games of iteration k: tables, seats, deals
    SEARCH_TREES = "search-trees"  # its learning seats' search trees, by iteration, game, seat
    SEARCH_OPPONENTS = "search-opponents"  # its frozen seats' draws, by iteration (game, seat)
    LEAGUE_ENV = "league-env"  # the SB3 trainer's environment of worker rank
    TOURNAMENT = "tournament"  # game g of table t of a tournament: its deal
    PSRO_ROUND = "psro-round"  # the run seed of round k's policy training in ``psro``
    WIN_CHANCES = "win-chances"  # rollout i of the browser's win chances
    BENCH_GAMES = "bench-games"  # game i of a benchmark: its deal
    BENCH_POSITIONS = "bench-positions"  # game g of the states a benchmark times one call on
    BENCH_SEARCH = "bench-search"  # the positions the search benchmark times
    LATENCY_GAMES = "latency-games"  # game g of the web app's latency measure: its deal
    LATENCY_CHOICES = "latency-choices"  # game g of that measure: the moves its player picks
    CALIBRATION_GAMES = "calibration-games"  # a calibration run's small-game draws: seats, chance, moves
    CALIBRATION_TARGET = "calibration-target"  # random:S, a calibration's seeded tabular target


AGENT_STREAM = stream_key(Stream.AGENTS.value)


def generator_sequence(seed: int, stream: Stream, *key: int) -> np.random.SeedSequence:
    """The ``SeedSequence`` of ``stream`` (numbered by ``key``) of a run or game seeded ``seed``."""
    return np.random.SeedSequence(seed, spawn_key=(stream_key(stream.value), *key))


def stream_seed(seed: int, stream: Stream, *key: int) -> int:
    """64 bits of ``stream`` (numbered by ``key``) of seed ``seed``: an integer in ``[0, 2**64)``,
    a deal seed the engines take, that reveals neither ``seed`` nor another stream's seeds."""
    return int(generator_sequence(seed, stream, *key).generate_state(1, np.uint64)[0])


def generator(seed: int, stream: Stream, *key: int) -> np.random.Generator:
    """A numpy generator drawing ``stream`` (numbered by ``key``) of seed ``seed``."""
    return np.random.default_rng(generator_sequence(seed, stream, *key))


def agent_seed(seed: int, game: int, index: int) -> int:
    """The seed of local agent ``index`` for game ``game`` of a run with seed ``seed`` (module
    doc): 64 bits of the run seed's ``agents`` stream."""
    return stream_seed(seed, Stream.AGENTS, game, index)


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
