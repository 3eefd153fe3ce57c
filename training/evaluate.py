"""``island-fortress evaluate AGENT AGENT [AGENT...]``: play agents against each other.

Each AGENT is ``random``, ``heuristic`` or a path to a trained checkpoint; their number is the
player count (2-4). Games go through the public PettingZoo environment with the seats rotated
(game ``g`` uses rotation ``g % k``: agent ``i`` sits in seat ``(i + g) % k``), so with a
number of games that is a multiple of ``k`` every agent sits in every seat equally often.
Where the env's backend is the C++ core (the default where it is built) and every AGENT is one
of those, the games are played in the core instead (``play_core_game``: the same deals,
observations and choices, the heuristic's in C++), with the same results.

Reported per AGENT argument, in the order given (a repeated spec gets ``#2``, ``#3``...):
games, wins (a win shared by ``m`` tied winners counts ``1/m`` to each), win rate with a 95%
Wilson score interval, mean final score; and an OpenSkill rating (Plackett-Luce, ranked by
final position, ties equal) when more than two distinct agents are involved.

Reproducible: game ``g`` is ``env.reset(seed=S + g)`` and every agent is re-seeded for every
game from ``(S, g, its index)``, so a run (or any single game of it) replays exactly.

    island-fortress evaluate heuristic random random --games 60 --seed 0
    island-fortress evaluate checkpoints/final.zip heuristic --games 100 --json
    island-fortress evaluate heuristic random --games 4 --save-games games/  # + a record per game

With ``--save-games DIR`` every game is written to DIR as a game record
(``island_fortress_env.records``; watch one with ``island-fortress replay FILE``), named by the
run (start time, seed, process id) and the game: ``20260101-120000-seed7-p4242-game-00000.json``.
A run never writes over a file: records of other runs in DIR stay, and two runs saving there at
once each keep all of theirs (every record is written atomically to a free name). DIR is checked
before the first game: created if missing, refused if it is a file, empty or not writable.

``evaluate()`` is the library entry point (used by training as well).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from island_fortress_env import core, island_fortress_v0
from island_fortress_env.engine import scoring
from island_fortress_env.engine.rng import seed_state
from island_fortress_env.engine.tables import MAX_PLAYERS, MIN_PLAYERS
from island_fortress_env.env.records import GameRecord, check_output_dir, save_unique
from island_fortress_env.players import (
    AGENT_KINDS,
    AGENTS_HELP,
    AgentSpecError,
    check_agent_spec,
    checkpoint_path,
    make_agent,
)
from island_fortress_env.players.arguments import (
    CommandLineParser,
    non_negative_int,
    one_line,
    positive_int,
    record_dir,
    rule_option,
)
from island_fortress_env.players.mixture import MixtureAgent, is_mixture, read_mixture

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def entry_names(specs: Sequence[str]) -> list[str]:
    """One display name per AGENT argument: the spec (a checkpoint or a mixture by its file's name), with
    ``#2``, ``#3``... on repeats."""

    def numbered(label: Callable[[str], str]) -> list[str]:
        seen: dict[str, int] = {}
        out = []
        for spec in specs:
            seen[spec] = seen.get(spec, 0) + 1
            out.append(label(spec) if seen[spec] == 1 else f"{label(spec)}#{seen[spec]}")
        return out

    def label(spec: str) -> str:
        kind, _, path = spec.partition(":")
        if is_mixture(spec) or checkpoint_path(spec) == path:  # mixture:FILE, sample:CHECKPOINT
            return f"{kind}:{Path(path).name}"
        return spec if spec in AGENT_KINDS else Path(spec).name

    names = numbered(label)
    if len(set(names)) != len(names):  # two checkpoints share a file name: use full paths
        names = numbered(lambda spec: spec)
    return names


def wilson_interval(wins: float, games: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (``wins`` may be fractional: shared wins)."""
    if games <= 0:
        return (0.0, 1.0)
    p = wins / games
    z2n = z * z / games
    denom = 1.0 + z2n
    center = (p + z2n / 2.0) / denom
    half = z * math.sqrt(p * (1.0 - p) / games + z * z / (4.0 * games * games)) / denom
    lo = 0.0 if wins <= 0 else max(0.0, center - half)
    hi = 1.0 if wins >= games else min(1.0, center + half)
    return (lo, hi)


def agent_seed(seed: int, game: int, index: int) -> int:
    """The seed of agent ``index`` for game ``game`` of a run with seed ``seed``."""
    return int(np.random.SeedSequence([seed, game, index]).generate_state(1)[0])


def final_ranks(state: Any) -> list[int]:
    """Finishing position of every seat (1 = winner), by the rulebook's order: score, then blocks
    in the wall, Jade, Treasure; seats still tied share a position."""
    blocks = [state.blocks_built(p) for p in range(state.n)]
    keys = scoring.standing_keys(state.score, blocks, state.jade, state.treasure)
    return [1 + sum(1 for other in keys if other > key) for key in keys]


@dataclass
class AgentTotals:
    """One agent's running figures over an evaluation."""

    seats: list[int]  # games played in each seat
    games: int = 0
    wins: float = 0.0  # a win shared by m tied winners counts 1/m
    score: float = 0.0


def record_game(totals: list[AgentTotals], seat_of: Sequence[int], state: Any) -> None:
    """Add one finished game to the per-agent ``totals`` (agent ``i`` played seat ``seat_of[i]``)."""
    winners = list(state.winners)
    for i, seat in enumerate(seat_of):
        t = totals[i]
        t.games += 1
        t.score += state.score[seat]
        t.wins += scoring.win_share(winners, seat)
        t.seats[seat] += 1


def run_tag(seed: int) -> str:
    """The prefix of a run's record names: start time, seed and process id, so that runs into
    one directory (one after another, or at once) do not compete for names."""
    return f"{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}-seed{seed}-p{os.getpid()}"


def play_game(
    env: Any, agents: Sequence[Any], seat_of: Sequence[int], seed: int, actions: list[int] | None = None
) -> Any:
    """One game through the AEC API; returns the finished engine state. The action ids taken
    are appended to ``actions`` when it is given (for a game record)."""
    raw = env.unwrapped
    env.reset(seed=seed)
    agent_at = {seat: agents[i] for i, seat in enumerate(seat_of)}
    for name in env.agent_iter():
        obs, _reward, termination, truncation, _info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        seat = raw.agent_name_mapping[name]
        action = int(agent_at[seat].act(obs["observation"], obs["action_mask"], raw.game_state))
        if actions is not None:
            actions.append(action)
        env.step(action)
    return raw.game_state


def env_game_seed(seed: int) -> int:
    """The seed of the game that ``env.reset(seed=seed)`` deals (its generator's first draw)."""
    from gymnasium.utils import seeding

    generator, _ = seeding.np_random(seed_state(seed))
    return int(generator.integers(0, 2**63 - 1))


def play_core_game(
    game: Any, agents: Sequence[Any], seat_of: Sequence[int], seed: int, actions: list[int] | None = None
) -> Any:
    """``play_game`` in the C++ core: the game of ``game`` (an ``engine.Game``) that
    ``env.reset(seed=seed)`` deals, every agent given the env's observation and mask (written by
    the core) and the core state; returns the finished ``CoreState``."""
    state = core.new_initial_state(game, env_game_seed(seed))
    agent_at = {seat: agents[i] for i, seat in enumerate(seat_of)}
    while not state.is_terminal():
        seat = state.current_player()
        action = int(agent_at[seat].act(state.encode(seat), state.action_mask(), state))
        if actions is not None:
            actions.append(action)
        state.apply_action(action)
    return state


def plays_in_core(spec: str) -> bool:
    """Whether agent ``spec`` plays the core's games: random, heuristic (in C++) and checkpoints
    read only the observation, a mixture when all its members do; the search players read the
    Python engine's state."""
    if is_mixture(spec):
        return all(plays_in_core(member.spec) for member in read_mixture(spec))
    return spec in AGENT_KINDS or checkpoint_path(spec) is not None


def make_core_agent(spec: str, seed: int | None) -> Any:
    """``make_agent``, with the heuristic played by the C++ core (the same choices)."""
    if spec == "heuristic":
        from island_fortress_env.core.heuristic import CoreHeuristicAgent

        return CoreHeuristicAgent(seed=seed)
    if is_mixture(spec):
        return MixtureAgent(read_mixture(spec), make_core_agent, seed=seed)
    return make_agent(spec, seed=seed)


@dataclass
class Table:
    """The agents of one table (one per spec, in order) and where its games are played: the C++
    core when the env's backend is the core and every agent plays there, else the env's own loop
    (``backend="python"`` keeps every game in the reference engine)."""

    env: Any
    agents: list[Any]
    in_core: bool

    @classmethod
    def seat(cls, env: Any, specs: Sequence[str], seeds: Sequence[int | None]) -> Table:
        in_core = env.unwrapped.backend == "core" and all(plays_in_core(spec) for spec in specs)
        make = make_core_agent if in_core else make_agent
        return cls(env, [make(spec, seed) for spec, seed in zip(specs, seeds, strict=True)], in_core)

    def play(self, seat_of: Sequence[int], seed: int, actions: list[int] | None = None) -> Any:
        """The game ``env.reset(seed=seed)`` deals, agent ``i`` in seat ``seat_of[i]``: its final state."""
        if self.in_core:
            return play_core_game(self.env.unwrapped.game, self.agents, seat_of, seed, actions)
        return play_game(self.env, self.agents, seat_of, seed, actions)


def evaluate(
    agent_specs: Sequence[str],
    games: int,
    seed: int,
    progress: bool = False,
    env_options: Mapping[str, Any] | None = None,
    save_games: str | Path | None = None,
) -> dict[str, Any]:
    """Play ``games`` games between ``agent_specs`` (one seat each, seats rotated).

    With ``save_games`` (a directory, created if needed, checked before the first game) every
    game is written there as a game record ``<run_tag>-game-00000.json`` ...
    (``island_fortress_env.records``), replayable exactly; no file is ever written over.

    Returns ``{"agents": [{"name", "spec", "games", "wins", "win_rate", "ci95", "mean_score",
    "seat_games"[, "rating"]}, ...], "games", "seed", "players", "rated"}`` with the agents in
    the order given, plus ``"saved_games"`` (the record paths) with ``save_games``.
    ``env_options`` are rules options for ``island_fortress_v0.env``.
    """
    specs = [str(s) for s in agent_specs]
    k = len(specs)
    if not MIN_PLAYERS <= k <= MAX_PLAYERS:
        raise ValueError(f"Island Fortress takes {MIN_PLAYERS}-{MAX_PLAYERS} agents (one per seat), got {k}")
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    if "num_players" in (env_options or {}):
        raise ValueError("env_options: num_players is set by the number of agents")
    for spec in specs:
        check_agent_spec(spec)
    names = entry_names(specs)
    save_dir = None
    if save_games is not None:
        save_dir = check_output_dir(save_games, "--save-games", create=True)
        tag = run_tag(seed)
    env = island_fortress_v0.env(num_players=k, **dict(env_options or {}))
    table = Table.seat(env, specs, [agent_seed(seed, 0, i) for i in range(k)])
    agents = table.agents
    rated = len(set(specs)) > 2
    if rated:
        from openskill.models import PlackettLuce

        model = PlackettLuce()
        ratings = [model.rating(name=name) for name in names]
    totals = [AgentTotals(seats=[0] * k) for _ in range(k)]
    saved: list[str] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=games, desc="evaluate", unit="game", file=sys.stderr, leave=False)
    try:
        for g in range(games):
            rotation = g % k
            seat_of = [(i + rotation) % k for i in range(k)]
            for i, agent in enumerate(agents):
                agent.reset(seed=agent_seed(seed, g, i))
            taken: list[int] | None = [] if save_dir is not None else None
            state = table.play(seat_of, seed + g, taken)
            record_game(totals, seat_of, state)
            if save_dir is not None:
                seat_names = [names[seat_of.index(seat)] for seat in range(k)]
                rules = {"num_players": k, **env.unwrapped.game.config.variants}
                record = GameRecord.from_game(rules, seed + g, taken or [], seat_names, state)
                saved.append(str(save_unique(record, save_dir / f"{tag}-game-{g:05d}.json")))
            if rated:
                ranks = final_ranks(state)
                teams = [[ratings[i]] for i in range(k)]
                new = model.rate(teams, ranks=[ranks[seat_of[i]] for i in range(k)])
                ratings = [team[0] for team in new]
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        env.close()
    out = []
    for i in range(k):
        t = totals[i]
        lo, hi = wilson_interval(t.wins, t.games)
        entry: dict[str, Any] = {
            "name": names[i],
            "spec": specs[i],
            "games": t.games,
            "wins": round(t.wins, 6),
            "win_rate": t.wins / t.games,
            "ci95": [lo, hi],
            "mean_score": t.score / t.games,
            "seat_games": list(t.seats),
        }
        if rated:
            r = ratings[i]
            entry["rating"] = {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()}
        out.append(entry)
    result = {"agents": out, "games": games, "seed": seed, "players": k, "rated": rated}
    if save_dir is not None:
        result["saved_games"] = saved
    return result


def format_table(result: Mapping[str, Any]) -> str:
    """The result of ``evaluate()`` as a readable table."""
    rated = any("rating" in a for a in result["agents"])
    width = max(5, *(len(a["name"]) for a in result["agents"]))
    head = (
        f"{'agent':<{width}}  {'games':>5}  {'wins':>7}  {'win rate':>8}  {'95% CI':>17}  {'mean score':>10}"
    )
    if rated:
        head += f"  {'rating (mu ± sigma)':>20}"
    lines = [
        f"{result['players']} players, {result['games']} games, seed {result['seed']}, seats rotated",
        head,
        "-" * len(head),
    ]
    for a in result["agents"]:
        lo, hi = a["ci95"]
        ci = f"[{100 * lo:5.1f}%, {100 * hi:5.1f}%]"
        line = (
            f"{a['name']:<{width}}  {a['games']:>5}  {a['wins']:>7.2f}  {100 * a['win_rate']:>7.1f}%"
            f"  {ci:>17}  {a['mean_score']:>10.1f}"
        )
        if "rating" in a:
            r = a["rating"]
            line += f"  {r['mu']:>10.2f} ± {r['sigma']:<7.2f}"
        lines.append(line)
    return "\n".join(lines)


def evaluate_checkpoint(path: str | Path, cfg: Any) -> dict[str, Any]:
    """A trained policy against a table of each baseline kind in ``cfg.eval.opponents`` at
    ``cfg.env.num_players`` players (seats rotated); prints each table. ``cfg`` is an SB3 or RLlib
    training config."""
    results = {}
    n = cfg.env.num_players
    for opponent in cfg.eval.opponents:
        specs = [str(path)] + [opponent] * (n - 1)
        result = evaluate(
            specs, games=cfg.eval.games, seed=cfg.seed + 10_000, progress=True, env_options=cfg.env.options
        )
        print(f"\n{Path(path).name} vs {n - 1} x {opponent} ({cfg.eval.games} games, seats rotated)")
        print(format_table(result))
        results[opponent] = result
    return results


def build_parser() -> argparse.ArgumentParser:
    parser = CommandLineParser(
        prog="island-fortress evaluate",
        description="Play agents against each other (seats rotated) and report win rates.",
        epilog=f"AGENT: {AGENTS_HELP}. Example: "
        "island-fortress evaluate heuristic random random --games 60 --seed 0",
    )
    parser.add_argument(
        "agents",
        nargs="+",
        metavar="AGENT",
        help=f"one per seat (2-4): {AGENTS_HELP}",
    )
    parser.add_argument(
        "--games", type=positive_int, default=60,
        help="games to play, at least 1 (default 60; use a multiple of the player count)",
    )  # fmt: skip
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="game g uses env.reset(seed=SEED + g) (default 0)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument(
        "--save-games", default=None, type=record_dir, metavar="DIR",
        help="write every game to DIR as a game record, RUN-game-NNNNN.json (replay with: "
        "island-fortress replay FILE); files already there are kept",
    )  # fmt: skip
    parser.add_argument(
        "--rule", action="append", default=[], type=rule_option, metavar="KEY=VALUE",
        help="rules option / variant for the environment, e.g. --rule no_replace=true (repeatable)",
    )  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    k = len(args.agents)
    if not MIN_PLAYERS <= k <= MAX_PLAYERS:
        parser.error(f"give {MIN_PLAYERS}-{MAX_PLAYERS} AGENTs (one per seat), got {k}")
    for spec in args.agents:
        try:
            check_agent_spec(spec)
        except AgentSpecError as exc:
            parser.error(str(exc))
    if args.games % k:
        print(
            f"warning: --games {args.games} is not a multiple of {k} players: "
            "the agents will not sit in every seat equally often",
            file=sys.stderr,
        )
    quiet = args.no_progress or (args.json and not (sys.stderr.isatty() and sys.stdout.isatty()))
    try:
        result = evaluate(
            args.agents,
            args.games,
            args.seed,
            progress=not quiet,
            env_options=dict(args.rule),
            save_games=args.save_games,
        )
    except (ValueError, ImportError, OSError) as exc:
        print(f"island-fortress evaluate: error: {one_line(exc)}", file=sys.stderr)
        return 2
    if args.save_games is not None:
        saved = result["saved_games"]
        where = saved[0] if len(saved) == 1 else f"{saved[0]} ... {Path(saved[-1]).name}"
        print(f"{len(saved)} game record{'s' * (len(saved) > 1)} saved: {where}", file=sys.stderr)
    if args.json:
        print(json.dumps(result))
    else:
        print(format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
