"""The native trainer's evaluation (``training/ppo.py``): the greedy policy against fixed players.

Every ``eval.every`` decisions, and once at the end on other deals, the greedy policy (the argmax
over legal actions) plays ``n - 1`` copies of each ``eval.opponents`` kind at 2, 3 and 4 players,
seats rotated; its win rates and an OpenSkill rating against anchors of fixed rating are logged.
Each table's games are played at once in a batch of C++ core games (``island_fortress_env.vector``:
the opponents decided in C++, the policy's moves in one forward pass per tick); where the core is
not built, one at a time through the Python env, split over the processes.
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

from island_fortress_env import core
from island_fortress_env.agents.checkpoint import read_metadata
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine import scoring
from island_fortress_env.training.collect import core_available, sample_actions, split, starmap
from island_fortress_env.training.config import TABLE_SIZES

ANCHORS = {"random": 15.0, "heuristic": 25.0}  # fixed OpenSkill mu of the anchor players
PERIODIC_EVAL_SEED, FINAL_EVAL_SEED = 77_777, 88_888  # offsets from the run's seed: different deals
BEST = "best.zip"


class NetAgent:
    """An in-memory policy behind the agent interface (greedy by default), for evaluation."""

    def __init__(self, net: nn.Module, greedy: bool = True, seed: int = 0, name: str = "policy") -> None:
        self.net, self.greedy, self.name = net, greedy, name
        self.generator = torch.Generator().manual_seed(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.generator.manual_seed(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: Any = None) -> int:
        actions, _, _ = sample_actions(
            self.net,
            observation.reshape(1, -1),
            action_mask.astype(bool).reshape(1, -1),
            self.generator,
            self.greedy,
        )
        return int(actions[0])


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
    games: range,
    seed: int,
    env_options: Mapping[str, Any],
) -> tuple[float, list[list[int]]]:
    """The greedy policy in seat rotation against ``players - 1`` agents of ``kind``, games number
    ``games`` of the table: its win count (shared wins split) and every game's final ranks in agent
    order (policy first). Game ``g`` is the same whichever part of the table it is played in."""
    from island_fortress_env import island_fortress_v0
    from island_fortress_env.players import make_agent
    from island_fortress_env.training.evaluate import agent_seed, final_ranks, play_game

    torch.set_num_threads(1)
    net = ActorCritic(**network)
    net.load_state_dict(state_dict)
    net.eval()
    policy = NetAgent(net, greedy=True)
    env = island_fortress_v0.env(num_players=players, **dict(env_options))
    wins, ranks = 0.0, []
    for g in games:
        agents = [policy] + [make_agent(kind, seed=agent_seed(seed, g, i)) for i in range(1, players)]
        seat_of = [(i + g) % players for i in range(players)]
        state = play_game(env, agents, seat_of, seed + 1000 * players + g)
        wins += scoring.win_share(state.winners, seat_of[0])
        by_seat = final_ranks(state)
        ranks.append([by_seat[s] for s in seat_of])
    return wins, ranks


def play_core_table(
    state_dict: Mapping[str, torch.Tensor],
    network: Mapping[str, Any],
    players: int,
    kind: str,
    games: int,
    seed: int,
    env_options: Mapping[str, Any],
) -> tuple[float, list[list[int]]]:
    """``play_evaluation_table`` for a whole table of ``games`` games at once in a batch of core
    games seeded ``seed + 1000 * players``: game ``g`` is the batch's game ``g`` (its first
    episode), the policy in seat ``g % players``, the other seats played by the batch's ``kind``
    player (the heuristic seeded like the game)."""
    import island_fortress_env.vector as vector
    from island_fortress_env.training.evaluate import final_ranks

    torch.set_num_threads(1)
    net = ActorCritic(**network)
    net.load_state_dict(state_dict)
    net.eval()
    env = vector.make(games, num_players=players, seed=seed + 1000 * players, **dict(env_options))
    env.reset()
    tables, seeds = env.games, [env.game_seed(g) for g in range(games)]
    policy_seat = np.arange(games) % players
    playing = np.ones(games, dtype=bool)  # the games whose first episode is under way
    taken: list[list[int]] = [[] for _ in range(games)]
    generator = torch.Generator()  # unused: the policy is greedy
    while playing.any():
        policy = playing & (env.player == policy_seat)
        others = ~policy
        actions = env.random_actions(others)  # the games over play on at random, unread
        if kind == "heuristic":
            opponents = others & playing
            actions[opponents] = env.heuristic_actions(opponents)[opponents]
        if policy.any():
            actions[policy], _, _ = sample_actions(
                net, env.obs[policy], env.mask[policy], generator, greedy=True
            )
        env.step(actions)
        for g in np.flatnonzero(playing).tolist():
            taken[g].append(int(actions[g]))
        playing &= ~env.done
    wins, ranks = 0.0, []
    for g in range(games):
        state = core.replay(tables[g], seeds[g], taken[g])
        seat_of = [(i + g) % players for i in range(players)]
        wins += scoring.win_share(state.winners, seat_of[0])
        by_seat = final_ranks(state)
        ranks.append([by_seat[s] for s in seat_of])
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
    (seats rotated; the tables played on ``processes``: in the core, one table per job; else each
    table's games split over them; the same figures for any number), plus its OpenSkill rating
    (Plackett-Luce, ranked by final position) against anchors whose ratings stay fixed
    (``ANCHORS``)."""
    from openskill.models import PlackettLuce

    state_dict = {k: v.detach().clone() for k, v in net.state_dict().items()}
    tables_played = [(n, kind) for n in tables for kind in opponents]
    play: Any = play_core_table if core_available() else play_evaluation_table
    parts: list[Any] = [games] if play is play_core_table else split(games, processes)
    jobs = [
        (state_dict, dict(network), n, kind, part, seed, dict(env_options))
        for n, kind in tables_played
        for part in parts
    ]
    results = starmap(play, jobs, processes)
    model = PlackettLuce()
    rating = model.rating(name="policy")
    anchors = {k: model.rating(mu=mu, sigma=1.0, name=k) for k, mu in ANCHORS.items()}
    out: dict[str, float] = {}
    for t, (n, kind) in enumerate(tables_played):
        played = results[t * len(parts) : (t + 1) * len(parts)]
        out[f"win_rate_vs_{kind}_{n}p"] = sum(wins for wins, _ in played) / max(games, 1)
        for game_ranks in (ranks for _, part_ranks in played for ranks in part_ranks):
            teams = [[rating]] + [[anchors[kind]] for _ in range(n - 1)]
            rating = model.rate(teams, ranks=[float(r) for r in game_ranks])[0][0]
    out["openskill_mu"] = rating.mu
    out["openskill_ordinal"] = rating.ordinal()
    return out
