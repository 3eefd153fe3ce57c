"""The native trainer's evaluation (``training/ppo.py``): the greedy policy against fixed players.

Every ``eval.every`` decisions, and once at the end on other deals, the greedy policy (the argmax
over legal actions) plays ``n - 1`` copies of each ``eval.opponents`` kind at 2, 3 and 4 players,
seats rotated; its win rates and an OpenSkill rating against anchors of fixed rating are logged.
Each table's games are played at once through ``players.runner`` in a batch of C++ core games
(``island_fortress_env.vector``: the opponents decided in C++, the policy's moves in one forward
pass per tick); where the core is not built, in the Python engine's twin of that batch (the same
games, slower).
With ``eval.keep_best`` the weights of the best periodic evaluation (``selection_score``) are kept
as ``best.zip``, as SB3's ``EvalCallback`` keeps ``best_model``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from island_fortress_env.agents.checkpoint import read_metadata
from island_fortress_env.agents.network import ActorCritic, torch_threads
from island_fortress_env.players.seeds import Stream, stream_seed
from island_fortress_env.stats import RatedGame, Rating, rate_games, require_openskill
from island_fortress_env.training.collect import starmap
from island_fortress_env.training.config import TABLE_SIZES

ANCHORS = {"random": 15.0, "heuristic": 25.0}  # fixed OpenSkill mu of the anchor players
BEST = "best.zip"


def selection_score(result: Mapping[str, float]) -> float:
    """What ``eval.keep_best`` maximises: the mean greedy win rate against the heuristic over the
    table sizes evaluated (-1 without heuristic games)."""
    rates = [v for k, v in result.items() if k.startswith("win_rate_vs_heuristic_")]
    return float(np.mean(rates)) if rates else -1.0


def previous_best_score(path: Path) -> float:
    """The selection score recorded in a run's best.zip (-1 when there is none), for ``--resume``."""
    if not path.is_file():
        return -1.0
    return float(read_metadata(path).get("selection", {}).get("score", -1.0))


def play_evaluation_table(
    state_dict: Mapping[str, torch.Tensor],
    network: Mapping[str, Any],
    players: int,
    kind: str,
    games: int,
    seed: int,
    env_options: Mapping[str, Any],
) -> tuple[float, list[list[int]]]:
    """The greedy policy in seat rotation against ``players - 1`` agents of ``kind`` (the batch's
    heuristic or random player, seeded like each deal) in ``games`` games played at once
    (``players.runner``; the C++ core's batch, or the Python engine's where the core is not
    built: the same games). Game ``g`` is dealt like episode 0 of slot ``g`` of a batch seeded by
    the ``evaluation-table`` stream of ``seed`` at ``players`` (``players.seeds``), the policy in
    seat ``g % players``. Returns the policy's win count
    (shared wins split) and every game's final ranks in agent order (policy first)."""
    from island_fortress_env import vector
    from island_fortress_env.players.runner import Seating, play_seatings
    from island_fortress_env.players.seat_policies import BatchSeats, NetworkSeats

    # One thread, as in a worker process (the same figures for any number of processes); played in
    # the learner's process (train.workers=0), the learner keeps its threads after it.
    with torch_threads(1):
        net = ActorCritic(**network)
        net.load_state_dict(state_dict)
        net.eval()
        policy = NetworkSeats(net, greedy=True)
        opponent = BatchSeats(kind)
        batch_seed = stream_seed(seed, Stream.EVALUATION_TABLE, players)
        seatings = []
        for g in range(games):
            seat = g % players
            policies = tuple(policy if s == seat else opponent for s in range(players))
            seatings.append(Seating(players, vector.batch_game_seed(batch_seed, g, 0), policies, tag=seat))
        batch = vector.make(games, num_players=players, **dict(env_options))
        wins, ranks = 0.0, []
        for finished in play_seatings(batch, seatings):
            seat, final = finished.seating.tag, finished.final
            wins += float(final.win[seat])
            ranks.append([int(final.rank[(seat + i) % players]) for i in range(players)])
        return wins, ranks


def greedy_evaluation(
    net: nn.Module,
    network: Mapping[str, Any],
    games: int,
    seed: int,
    opponents: Iterable[str],
    env_options: Mapping[str, Any],
    processes: int = 1,
    tables: Iterable[int] = TABLE_SIZES,
) -> dict[str, float]:
    """The greedy policy against ``n - 1`` copies of each opponent kind at each table size
    (seats rotated; the tables played on ``processes``, one table per job: the same figures for any
    number), plus its OpenSkill rating
    (Plackett-Luce, ranked by final position) against anchors whose ratings stay fixed
    (``ANCHORS``)."""
    require_openskill()

    state_dict = {k: v.detach().clone() for k, v in net.state_dict().items()}
    tables_played = [(n, kind) for n in tables for kind in opponents]
    jobs = [(state_dict, dict(network), n, kind, games, seed, dict(env_options)) for n, kind in tables_played]
    results = starmap(play_evaluation_table, jobs, processes)
    anchor = {kind: i for i, kind in enumerate(ANCHORS, start=1)}  # the policy's rating is 0
    rated: list[RatedGame] = []
    out: dict[str, float] = {}
    for t, (n, kind) in enumerate(tables_played):
        wins, table_ranks = results[t]
        out[f"win_rate_vs_{kind}_{n}p"] = wins / max(games, 1)
        for game_ranks in table_ranks:
            rated.append(RatedGame((0,) + (anchor[kind],) * (n - 1), tuple(float(r) for r in game_ranks)))
    start = [None, *(Rating(mu, 1.0) for mu in ANCHORS.values())]
    rating = rate_games(rated, start, fixed=frozenset(anchor.values()))[0]
    out["openskill_mu"] = rating.mu
    out["openskill_ordinal"] = rating.ordinal
    return out
