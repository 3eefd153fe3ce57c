"""``island-fortress evaluate AGENT AGENT [AGENT...]``: play agents against each other.

Each AGENT is an agent spec (``players.specs``: ``random``, ``heuristic``, a checkpoint, a search
player, a mixture); their number is the player count (2-4). Seats are rotated (game ``g`` uses
rotation ``g % k``: agent ``i`` sits in seat ``(i + g) % k``), so with a number of games that is a
multiple of ``k`` every agent sits in every seat equally often. The games are played through
``players.runner`` (``play_table``): many at once in a batch of C++ core games where the core is
built and every AGENT plays from its observation (the heuristic in C++, a checkpoint's moves in
one forward pass for all the games), else one at a time in the Python engine (the search players
read its state, and ``backend="python"`` keeps every game there): the same deals, choices and
results either way.

Reported per AGENT argument, in the order given (a repeated spec gets ``#2``, ``#3``...):
games, wins (a win shared by ``m`` tied winners counts ``1/m`` to each), win rate with a 95%
Wilson score interval, mean final score; and an OpenSkill rating (Plackett-Luce, ranked by
final position, ties equal) when more than two distinct agents are involved.

Reproducible: game ``g`` is ``env.reset(seed=D)``, ``D`` the seed ``S``'s ``evaluation`` stream gives
game ``g`` (``players.seeds.stream_seed(S, Stream.EVALUATION, g)``, saved in the game's record), and
every agent is re-seeded for every game from ``(S, g, its index)``, so a run (or any single game of
it) replays exactly.

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

import datetime as dt
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from island_fortress_env import island_fortress_v0
from island_fortress_env.engine.config import option_names
from island_fortress_env.engine.game import Game
from island_fortress_env.engine.rng import seed_state
from island_fortress_env.engine.tables import MAX_PLAYERS, MIN_PLAYERS
from island_fortress_env.env.records import GameRecord, check_output_dir, save_unique
from island_fortress_env.players import (
    check_agent_spec,
    make_agent,
    parse_agent_spec,
    plays_in_core,
    spec_labels,
)
from island_fortress_env.players.runner import Finished
from island_fortress_env.players.seeds import Stream, agent_seed, stream_seed
from island_fortress_env.stats import RatedGame, rate_games, require_openskill, wilson


def entry_names(specs: Sequence[str]) -> list[str]:
    """One display name per AGENT argument (``players.spec_labels``): the spec, a checkpoint by its
    file's name less ``.zip``, a mixture by its file's name, with ``#2``, ``#3``... on repeats."""
    return spec_labels([parse_agent_spec(spec) for spec in specs])


@dataclass
class AgentTotals:
    """One agent's running figures over an evaluation."""

    seats: list[int]  # games played in each seat
    games: int = 0
    wins: float = 0.0  # a win shared by m tied winners counts 1/m
    score: float = 0.0


def record_game(totals: list[AgentTotals], seat_of: Sequence[int], final: Any) -> None:
    """Add one finished game (its ``vector.FinalRow``) to the per-agent ``totals`` (agent ``i``
    played seat ``seat_of[i]``)."""
    for i, seat in enumerate(seat_of):
        t = totals[i]
        t.games += 1
        t.score += int(final.score[seat])
        t.wins += float(final.win[seat])
        t.seats[seat] += 1


def run_tag(seed: int) -> str:
    """The prefix of a run's record names: start time, seed and process id, so that runs into
    one directory (one after another, or at once) do not compete for names."""
    return f"{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}-seed{seed}-p{os.getpid()}"


def env_game_seed(seed: int) -> int:
    """The seed of the game that ``env.reset(seed=seed)`` deals (its generator's first draw)."""
    from gymnasium.utils import seeding

    generator, _ = seeding.np_random(seed_state(seed))
    return int(generator.integers(0, 2**63 - 1))


@dataclass(frozen=True)
class TableGame:
    """Game ``number`` of a table: the game ``env.reset(seed=reset_seed)`` deals, agent ``i`` in
    seat ``seat_of[i]``, seeded ``seeds[i]`` for it."""

    number: int
    reset_seed: int
    seat_of: tuple[int, ...]
    seeds: tuple[int | None, ...]


TABLE_SLOTS = 64  # games of a table played at once in the core


def play_table(
    specs: Sequence[str],
    games: Sequence[TableGame],
    env_options: Mapping[str, Any] | None = None,
    keep_actions: bool = False,
    on_finished: Callable[[Finished], None] | None = None,
) -> list[Finished]:
    """Plays ``games`` between ``specs`` (one agent a seat) through ``players.runner``: in a batch
    of C++ core games when the core is built, the env's backend is not ``"python"`` and every agent
    plays from its observation (``plays_in_core``), else in the Python engine one game at a time,
    with the same results. Returns the finished games in the order of ``games`` (each its
    ``TableGame`` as the seating's tag); ``on_finished`` sees each as it ends."""
    from island_fortress_env import vector
    from island_fortress_env.players.runner import Seating, play_seatings
    from island_fortress_env.players.seat_policies import seat_policy

    env_backend, options = rule_options(env_options)
    k = len(specs)
    in_core = env_backend != "python" and all(plays_in_core(spec) for spec in specs)
    # no warning of its own where the core is not built: the env's backend gives one
    backend = vector.resolve_backend("auto" if in_core else "python", warn=False)
    policies = [seat_policy(spec, make_agent) for spec in specs]
    seatings = []
    for game in games:
        agent_at = {seat: i for i, seat in enumerate(game.seat_of)}
        seatings.append(
            Seating(
                k,
                env_game_seed(game.reset_seed),
                tuple(policies[agent_at[seat]] for seat in range(k)),
                tuple(game.seeds[agent_at[seat]] for seat in range(k)),
                tag=game,
            )
        )
    slots = min(len(games), TABLE_SLOTS) if backend == "core" else 1
    batch = vector.make(slots, num_players=k, backend=backend, **options)
    return play_seatings(batch, seatings, keep_actions, on_finished)


def rule_options(env_options: Mapping[str, Any] | None) -> tuple[str | None, dict[str, Any]]:
    """The env's ``backend`` option and the rules options (``engine.GameConfig``'s) among
    ``env_options``, the options of ``island_fortress_v0.env`` (the env's own, such as its
    reward, do not change a game)."""
    options = dict(env_options or {})
    rules = set(option_names())
    return options.get("backend"), {k: v for k, v in options.items() if k in rules}


def final_state(rules: Mapping[str, Any], reset_seed: int, actions: Sequence[int]) -> Any:
    """The finished engine state of the game ``env.reset(seed=reset_seed)`` dealt under ``rules``
    and ``actions`` played (for a game record)."""
    state = Game(**dict(rules)).new_initial_state(env_game_seed(reset_seed))
    for action in actions:
        state.apply_action(int(action))
    return state


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
    env = island_fortress_v0.raw_env(num_players=k, **dict(env_options or {}))  # every option checked
    rules = {"num_players": k, **env.game.config.variants}
    env.close()
    rated = len(set(specs)) > 2
    if rated:
        require_openskill()
    rated_games: list[RatedGame] = []
    totals = [AgentTotals(seats=[0] * k) for _ in range(k)]
    saved: list[str] = []
    table = [
        TableGame(
            g,
            stream_seed(seed, Stream.EVALUATION, g),
            tuple((i + g) % k for i in range(k)),
            tuple(agent_seed(seed, g, i) for i in range(k)),
        )
        for g in range(games)
    ]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=games, desc="evaluate", unit="game", file=sys.stderr, leave=False)
    try:
        tick = None if bar is None else (lambda _finished: bar.update(1))
        for finished in play_table(specs, table, env_options, save_dir is not None, tick):
            game, final = finished.seating.tag, finished.final
            record_game(totals, game.seat_of, final)
            if save_dir is not None:
                seat_names = [names[game.seat_of.index(seat)] for seat in range(k)]
                state = final_state(rules, game.reset_seed, finished.actions or [])
                record = GameRecord.from_game(
                    rules, game.reset_seed, finished.actions or [], seat_names, state
                )
                saved.append(str(save_unique(record, save_dir / f"{tag}-game-{game.number:05d}.json")))
            if rated:
                ranks = tuple(int(final.rank[game.seat_of[i]]) for i in range(k))
                rated_games.append(RatedGame(tuple(range(k)), ranks))
    finally:
        if bar is not None:
            bar.close()
    ratings = rate_games(rated_games, [None] * k) if rated else []
    out = []
    for i in range(k):
        t = totals[i]
        lo, hi = wilson(t.wins / t.games, t.games)
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
            entry["rating"] = {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal}
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
        seed = stream_seed(cfg.seed, Stream.TRAINING_EVALUATION)  # other deals than the run's own
        result = evaluate(specs, games=cfg.eval.games, seed=seed, progress=True, env_options=cfg.env.options)
        print(f"\n{Path(path).name} vs {n - 1} x {opponent} ({cfg.eval.games} games, seats rotated)")
        print(format_table(result))
        results[opponent] = result
    return results
