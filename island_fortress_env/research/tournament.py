"""``island-fortress tournament AGENT AGENT [AGENT...]``: a ladder of many agents at once.

Every table of each size in ``--players`` is played: for a size ``n``, every set of ``n``
distinct agents from the list (every pairing at 2 players, every trio at 3, ...), each for
``--games`` games with the seats rotated (game ``g`` of a table puts agent ``i`` of the table in
seat ``(i + g) % n``). A size larger than the number of agents is skipped with a note.

One OpenSkill (Plackett-Luce) rating per agent is updated after every game of every table,
ranked by final position (ties share a rank), so the ladder orders agents that never met at the
same table. Reported per agent: the rating (``mu``, ``sigma`` and the conservative ``ordinal``
``mu - 3 sigma``, the ladder's order) and, per table size, games, wins (a win shared by ``m``
tied winners counts ``1/m``), win rate with a 95% Wilson interval and mean score.

At 2 players the tournament is also a **meta-game** (the empirical game of PSRO, Lanctot et al.,
2017): ``head_to_head`` is each agent's win rate against each other one, and ``meta_nash`` a Nash
equilibrium of that symmetric zero-sum game, a mixture over the agents that none of them beats on
average (found by linear programming, SciPy's ``linprog``), with each agent's win rate against it.
Where the agents beat one another in a circle the mixture spreads over them; where one agent beats
every other it is that agent alone. A table of 3 or 4 is no two-player game and has no such matrix.
The file that ``--out FILE`` writes is also the agent ``mixture:FILE``, which plays that mixture
(one agent drawn per game): ``island-fortress exploit mixture:FILE`` trains a best response to it,
PSRO's next step, and any command that takes an AGENT plays it.

Reproducible: table ``t`` game ``g`` is ``env.reset(seed=D)``, ``D`` the seed SEED's ``tournament``
stream gives it (``players.seeds.stream_seed(SEED, Stream.TOURNAMENT, t, g)``: no two tables share a
deal), with every agent re-seeded from ``(that seed, its index)``, so any game replays exactly. A
table whose agents all play in the C++ core (everything but the search players) plays its games
there, the same games as the Python engine's; ``--workers N`` plays N tables at once, and the games
are rated in table order whichever process played them, so the ladder is the same for any N.

    island-fortress tournament random heuristic checkpoints/policy-2-4p.zip --players 2 3 --games 12
    island-fortress tournament random heuristic mcts:50 --games 6 --out ladder.json --plot ladder.png
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from island_fortress_env.engine.scoring import win_share
from island_fortress_env.engine.tables import MIN_PLAYERS
from island_fortress_env.players import check_agent_spec
from island_fortress_env.players.seeds import Stream, stream_seed
from island_fortress_env.stats import RatedGame, Rating, rate_games, require_openskill, wilson
from island_fortress_env.training.evaluate import TableGame, agent_seed, entry_names
from island_fortress_env.training.evaluate import play_table as evaluate_table


@dataclass
class TableTotals:
    """One agent's figures at one table size."""

    games: int = 0
    wins: float = 0.0
    score: float = 0.0


@dataclass
class Entrant:
    """One agent of the tournament: its spec, display name and running figures."""

    spec: str
    name: str
    by_size: dict[int, TableTotals] = field(default_factory=dict)


@dataclass(frozen=True)
class GameOutcome:
    """What the ladder keeps of one finished game: who sat where (agent ``j`` of the table in seat
    ``seat_of[j]``), and each seat's score and finishing position (1 = winner)."""

    seat_of: tuple[int, ...]
    winners: tuple[int, ...]
    score: tuple[int, ...]
    ranks: tuple[int, ...]


def play_table(specs: Sequence[str], t: int, games: int, seed: int) -> list[GameOutcome]:
    """The ``games`` games of table ``t`` between ``specs`` (one agent a seat, seats rotated),
    in the C++ core when every agent plays there (the same games as the Python engine's)."""
    n = len(specs)
    table = []
    for g in range(games):
        deal = stream_seed(seed, Stream.TOURNAMENT, t, g)
        seeds = tuple(agent_seed(deal, 0, i) for i in range(n))
        table.append(TableGame(g, deal, tuple((i + g) % n for i in range(n)), seeds))
    outcomes = []
    for finished in evaluate_table(specs, table):
        final, seat_of = finished.final, finished.seating.tag.seat_of
        winners = tuple(p for p in range(n) if final.win[p] > 0)
        score = tuple(int(v) for v in final.score[:n])
        ranks = tuple(int(r) for r in final.rank[:n])
        outcomes.append(GameOutcome(tuple(seat_of), winners, score, ranks))
    return outcomes


@dataclass
class HeadToHead:
    """The 2-player tables' results: ``wins[i][j]`` is agent ``i``'s wins against agent ``j`` (a
    shared win counts half), ``games[i][j]`` their games."""

    wins: list[list[float]]
    games: list[list[int]]

    @classmethod
    def empty(cls, count: int) -> HeadToHead:
        return cls([[0.0] * count for _ in range(count)], [[0] * count for _ in range(count)])

    def grow(self) -> int:
        """One more agent, with no games yet; returns its index."""
        for row in self.wins:
            row.append(0.0)
        for row_games in self.games:
            row_games.append(0)
        self.wins.append([0.0] * (len(self.wins) + 1))
        self.games.append([0] * (len(self.games) + 1))
        return len(self.wins) - 1

    def record(self, table: Sequence[int], game: GameOutcome) -> None:
        winners = list(game.winners)
        (i, j), (seat_i, seat_j) = table, game.seat_of
        for me, other, seat in ((i, j, seat_i), (j, i, seat_j)):
            self.games[me][other] += 1
            self.wins[me][other] += win_share(winners, seat)

    def win_rates(self) -> list[list[float]]:
        """Row's win rate against column; one half on the diagonal (an agent against itself)."""
        n = len(self.wins)
        return [[self.wins[i][j] / self.games[i][j] if i != j else 0.5 for j in range(n)] for i in range(n)]


def meta_nash(win_rate: Sequence[Sequence[float]]) -> list[float]:
    """A Nash equilibrium of the symmetric zero-sum game whose payoff to row ``i`` against column
    ``j`` is ``win_rate[i][j] - win_rate[j][i]``: the mixture ``x`` that maximises the least
    ``sum_i x_i (W_ij - W_ji)`` over the columns ``j`` (that least is 0 at the optimum), by linear
    programming. Exact to the solver's tolerance; probabilities below 1e-9 are written 0."""
    import numpy as np
    from scipy.optimize import linprog

    w = np.asarray(win_rate, dtype=np.float64)
    payoff = w - w.T
    n = len(w)
    # variables (x_1..x_n, v): maximise v subject to payoff^T x >= v, sum x = 1, x >= 0
    cost = np.zeros(n + 1)
    cost[-1] = -1.0
    result = linprog(
        cost,
        A_ub=np.hstack([-payoff.T, np.ones((n, 1))]),
        b_ub=np.zeros(n),
        A_eq=np.hstack([np.ones((1, n)), np.zeros((1, 1))]),
        b_eq=[1.0],
        bounds=[(0.0, 1.0)] * n + [(None, None)],
        method="highs",
    )
    if not result.success:  # a bounded, feasible LP: only a solver failure lands here
        raise RuntimeError(f"the meta-game's linear program failed: {result.message}")
    x = np.where(result.x[:n] > 1e-9, result.x[:n], 0.0)
    return [float(p) for p in x / x.sum()]


def meta_game(names: Sequence[str], head: HeadToHead) -> dict[str, Any]:
    """``head_to_head`` and ``meta_nash`` of the result (2-player tables)."""
    w = head.win_rates()
    mixture = meta_nash(w)
    n = len(names)
    return {
        "head_to_head": {
            "agents": list(names),
            "win_rate": w,
            "games": [[head.games[i][j] for j in range(n)] for i in range(n)],
        },
        "meta_nash": {
            "mixture": {names[i]: p for i, p in enumerate(mixture) if p > 0},
            # the mixture's expected win rate against each agent (each >= 1/2) and each agent's
            # against the mixture (Nash averaging: an agent's standing against the field's equilibrium)
            "win_rate_vs": {names[j]: sum(mixture[i] * w[i][j] for i in range(n)) for j in range(n)},
            "agent_win_rate_vs_mixture": {
                names[i]: sum(mixture[j] * w[i][j] for j in range(n)) for i in range(n)
            },
        },
    }


def tables_for(count: int, sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Every table: for each size, every set of that many distinct agents (by index)."""
    return [combo for n in sizes for combo in itertools.combinations(range(count), n)]


def tournament(
    agent_specs: Sequence[str],
    sizes: Sequence[int] = (2,),
    games: int = 10,
    seed: int = 0,
    progress: bool = False,
    workers: int = 1,
) -> dict[str, Any]:
    """Play every table (on ``workers`` processes, a table each: the same result for any number)
    and rate every agent. Returns ``{"agents": [{"name", "spec", "mu",
    "sigma", "ordinal", "tables": {"2": {"games", "wins", "win_rate", "ci95", "mean_score"}}}],
    "tables": [[names...], ...], "games_per_table", "seed", "sizes", "skipped_sizes"}``, the
    agents ordered by ``ordinal``, best first; with 2-player tables also ``head_to_head`` and
    ``meta_nash`` (``meta_game``)."""
    require_openskill()
    specs = [str(s) for s in agent_specs]
    if len(specs) < MIN_PLAYERS:
        raise ValueError(f"a tournament needs at least {MIN_PLAYERS} agents, got {len(specs)}")
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    for spec in specs:
        check_agent_spec(spec)
    entrants = [Entrant(spec, name) for spec, name in zip(specs, entry_names(specs), strict=True)]
    playable = [n for n in sizes if n <= len(specs)]
    tables = tables_for(len(specs), playable)
    head = HeadToHead.empty(len(specs))
    rated: list[RatedGame] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tables) * games, desc="tournament", unit="game", file=sys.stderr, leave=False)
    jobs = [TableJob([entrants[i].spec for i in table], t, games, seed) for t, table in enumerate(tables)]
    try:
        # the games rated in table order, whichever process played them: the same ratings
        for table, outcomes in zip(tables, play_tables(jobs, workers), strict=True):
            n = len(table)
            for game in outcomes:
                _record(entrants, table, game)
                if n == 2:
                    head.record(table, game)
                rated.append(RatedGame(tuple(table), tuple(game.ranks[game.seat_of[j]] for j in range(n))))
            if bar is not None:
                bar.update(len(outcomes))
    finally:
        if bar is not None:
            bar.close()
    ratings = rate_games(rated, [None] * len(entrants))
    rows = [_row(e, r) for e, r in zip(entrants, ratings, strict=True)]
    rows.sort(key=lambda row: row["ordinal"], reverse=True)
    result = {
        "agents": rows,
        "tables": [[entrants[i].name for i in table] for table in tables],
        "games_per_table": games,
        "seed": seed,
        "sizes": playable,
        "skipped_sizes": [n for n in sizes if n not in playable],
    }
    if 2 in playable:
        result.update(meta_game([e.name for e in entrants], head))
    return result


@dataclass(frozen=True)
class TableJob:
    """One table to play: ``play_table``'s arguments."""

    specs: list[str]
    t: int
    games: int
    seed: int


def _play_table_job(job: TableJob) -> list[GameOutcome]:
    return play_table(job.specs, job.t, job.games, job.seed)


def play_tables(jobs: Sequence[TableJob], workers: int = 1) -> Iterator[list[GameOutcome]]:
    """Each job's games, in the jobs' order, played on ``workers`` processes (a table each) or in
    this one: the same games for any number."""
    if workers <= 1 or len(jobs) <= 1:
        yield from map(_play_table_job, jobs)
        return
    from island_fortress_env.training.collect import mp_context  # imports torch: only for workers

    with mp_context().Pool(min(workers, len(jobs))) as pool:
        yield from pool.imap(_play_table_job, jobs)


def _record(entrants: list[Entrant], table: Sequence[int], game: GameOutcome) -> None:
    winners = list(game.winners)
    for j, i in enumerate(table):
        totals = entrants[i].by_size.setdefault(len(table), TableTotals())
        seat = game.seat_of[j]
        totals.games += 1
        totals.score += game.score[seat]
        totals.wins += win_share(winners, seat)


def _row(entrant: Entrant, rating: Rating) -> dict[str, Any]:
    by_size = {}
    for n, t in sorted(entrant.by_size.items()):
        lo, hi = wilson(t.wins / t.games, t.games)
        by_size[str(n)] = {
            "games": t.games,
            "wins": t.wins,
            "win_rate": t.wins / t.games,
            "ci95": [lo, hi],
            "mean_score": t.score / t.games,
        }
    return {
        "name": entrant.name,
        "spec": entrant.spec,
        "mu": rating.mu,
        "sigma": rating.sigma,
        "ordinal": rating.ordinal,
        "tables": by_size,
    }


def format_ladder(result: dict[str, Any]) -> str:
    """The ladder as a text table: rank, agent, rating, and win rate with its interval per size."""
    sizes = [str(n) for n in result["sizes"]]
    head = ["#", "agent", "ordinal", "mu +- sigma"] + [f"{n}p win rate [95% CI] (games)" for n in sizes]
    body = []
    for rank, row in enumerate(result["agents"], 1):
        cells = [str(rank), row["name"], f"{row['ordinal']:.2f}", f"{row['mu']:.2f} +- {row['sigma']:.2f}"]
        for n in sizes:
            t = row["tables"].get(n)
            if t is None:
                cells.append("-")
            else:
                lo, hi = t["ci95"]
                cells.append(f"{100 * t['win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] ({t['games']})")
        body.append(cells)
    widths = [max(len(r[c]) for r in [head, *body]) for c in range(len(head))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in [head, *body]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    per_table = result["games_per_table"]
    lines.append(f"{len(result['tables'])} tables x {per_table} games, seats rotated, seed {result['seed']}")
    if result["skipped_sizes"]:
        lines.append(f"skipped table sizes (more seats than agents): {result['skipped_sizes']}")
    if "head_to_head" in result:
        lines += ["", *format_meta_game(result)]
    return "\n".join(lines)


def format_meta_game(result: dict[str, Any]) -> list[str]:
    """The 2-player head-to-head matrix (agents numbered in the order given) and the Nash mixture."""
    names = result["head_to_head"]["agents"]
    rates = result["head_to_head"]["win_rate"]
    nash = result["meta_nash"]
    width = max(len(name) for name in names) + 4
    lines = ["2-player head to head: the row's win rate against the column"]
    lines.append(" " * width + "".join(f"{j + 1:>7}" for j in range(len(names))) + "   vs Nash")
    for i, name in enumerate(names):
        cells = "".join("      -" if i == j else f"{100 * rates[i][j]:6.1f}%" for j in range(len(names)))
        against = nash["agent_win_rate_vs_mixture"][name]
        lines.append(f"{i + 1:>2} {name}".ljust(width) + cells + f"   {100 * against:6.1f}%")
    mixture = ", ".join(f"{name} {100 * p:.1f}%" for name, p in nash["mixture"].items())
    least = 100 * min(nash["win_rate_vs"].values())
    lines.append(f"Nash mixture of the 2-player meta-game: {mixture} (it wins >= {least:.1f}% against each)")
    return lines


def plot_ladder(result: dict[str, Any], out: Path) -> None:
    """Each agent's rating, ``mu`` with a bar of +-3 ``sigma`` (the ordinal is its left end)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(reversed(result["agents"]))  # best at the top
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(rows) + 1.2))
    ys = range(len(rows))
    ax.errorbar([r["mu"] for r in rows], list(ys), xerr=[3 * r["sigma"] for r in rows], fmt="o", capsize=4)
    ax.set_yticks(list(ys), [r["name"] for r in rows])
    ax.set_xlabel("OpenSkill rating: mu +- 3 sigma")
    ax.set_title(f"Ladder: {len(result['tables'])} tables x {result['games_per_table']} games")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
