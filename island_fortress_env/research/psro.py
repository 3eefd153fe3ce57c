"""``island-fortress psro START``: rounds of best responses and of training against them (PSRO).

    island-fortress psro checkpoints/policy-2-4p.zip --rounds 3 --players 2 3 \\
        --exploit-minutes 15 --train-minutes 55 tables.two=2.0 league.random=0.1

Policy-Space Response Oracles (Lanctot et al., 2017) with the project's own parts. Round k of
``--rounds`` N:

1. **best responses**: at each table size of ``--players``, ``island-fortress exploit`` trains a
   best response to the current policy (START in round 1) from its weights and measures it (greedy,
   seats rotated): run ``<name>-br<k>-<n>p``;
2. **the policy's training**: the native trainer continues the current policy (``--config``,
   configs/policy-2-4p.yaml by default, ``policy.init_from``) against the **population** in its
   league (``league.members``): START, every policy trained so far and every best response found so
   far: run ``<name>-round-<k>``, whose ``final.zip`` is the next current policy.

With ``--answer nash`` (PSRO proper, at 2 players) a round trains no policy: its best response
answers the **Nash mixture** of the population's 2-player meta-game and joins the population. The
meta-game is grown one member at a time, each new member meeting every earlier one for
``--pairing-games`` games as a tournament table (``MetaGame``, kept in
``checkpoints/<name>/meta-game.json``), and round k's mixture is written to
``checkpoints/<name>/nash-<k>.json``, the agent ``mixture:`` of that file: round 0's is START alone.
The last round's mixture is the run's result, and its best response measures it.

After round N, best responses to its policy measure it (``<name>-br<N+1>-<n>p``): the report has
the approximate exploitability of START and of every round's policy, at every table size, each a
lower bound at its budget (docs/STRENGTH.md). The ``section.key=value`` overrides after the options
apply to the policy's runs; ``--exploit-set section.key=value`` to the best responses.

Everything lands under ``--out`` (``checkpoints/`` and ``runs/``, as ``train`` and ``exploit``
write them), with ``checkpoints/<name>/psro.json`` (the settings and every round's figures,
rewritten after each step) and TensorBoard ``runs/<name>/`` (``psro/exploiter_win_rate_<n>p``,
``psro/exploitability_<n>p`` and ``psro/exploiter_sampled_win_rate_<n>p``, the best response's
sampled play over its last rollouts, at step k for round k's policy, 0 for START). A run that stops part way
is continued by the same command: each finished step (its ``exploit.json``, its ``final.zip``) is
read back, not run again, and a larger ``--rounds`` extends a finished run; other settings under the
same ``--name`` are refused. Every user error is
one line on stderr and exit status 2, before any training.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from island_fortress_env.engine.tables import PLAYER_COUNTS
from island_fortress_env.env.records import one_line
from island_fortress_env.players import AgentKind, parse_agent_spec
from island_fortress_env.players.seeds import Stream, stream_seed
from island_fortress_env.research import exploit
from island_fortress_env.research.exploit import MORE_THAN_FITS, exploit_config
from island_fortress_env.research.tournament import HeadToHead, TableJob, meta_game, play_tables
from island_fortress_env.training.config import NativeConfig, load_config
from island_fortress_env.training.league import member_name

DEFAULT_MINUTES = 15.0  # each best response's budget when neither minutes nor decisions is given
DEFAULT_EXPLOIT_GAMES = 200  # each best response's evaluation games, rounded up to the players
DEFAULT_CONFIG = "configs/policy-2-4p.yaml"
REPORT = "psro.json"
META_GAME = "meta-game.json"
ANSWER_POLICY = "policy"  # each round's best responses answer the current policy
ANSWER_NASH = "nash"  # ... the Nash mixture of the population's 2-player meta-game
ANSWERS = (ANSWER_POLICY, ANSWER_NASH)
DEFAULT_PAIRING_GAMES = 200


class PsroError(ValueError):
    """A START, a budget or an output folder that cannot be used."""


@dataclass(frozen=True)
class Settings:
    """What a PSRO run is: the same settings continue it, others are refused under its name."""

    start: str
    rounds: int
    players: list[int]
    config: str
    exploit_minutes: float | None
    exploit_decisions: int | None
    train_minutes: float | None
    train_decisions: int | None
    seed: int
    games: int | None
    overrides: list[str]
    exploit_overrides: list[str]
    answer: str = ANSWER_POLICY
    pairing_games: int = DEFAULT_PAIRING_GAMES


def exploiter_run(name: str, k: int, players: int) -> str:
    """The run of round ``k``'s best response at ``players`` players (k = rounds + 1: the last policy's)."""
    return f"{name}-br{k}-{players}p"


def policy_run(name: str, k: int) -> str:
    return f"{name}-round-{k}"


def train_items(s: Settings, name: str, k: int, current: str, members: Sequence[str], out: Path) -> list[str]:
    """The overrides of round ``k``'s policy run: the current policy's weights, the population, the
    budget, the run's folders, then the user's own."""
    items = [
        f"run_name={policy_run(name, k)}",
        f"seed={stream_seed(s.seed, Stream.PSRO_ROUND, k)}",
        f"policy.init_from={json.dumps(current)}",
        f"league.members={json.dumps(list(members))}",
        f"logging.runs_dir={json.dumps(str(out / 'runs'))}",
        f"logging.checkpoints_dir={json.dumps(str(out / 'checkpoints'))}",
        "logging.progress_bar=false",
    ]
    if s.train_minutes is not None:
        items += [f"train.max_minutes={s.train_minutes}", f"train.total_decisions={MORE_THAN_FITS}",
                  "ppo.anneal_over=minutes"]  # fmt: skip
    elif s.train_decisions is not None:
        items += [
            "train.max_minutes=0",
            f"train.total_decisions={s.train_decisions}",
            "ppo.anneal_over=decisions",
        ]
    return items + list(s.overrides)


def exploit_budget(s: Settings) -> tuple[float | None, int | None]:
    if s.exploit_minutes is None and s.exploit_decisions is None:
        return DEFAULT_MINUTES, None
    return s.exploit_minutes, s.exploit_decisions


def check(s: Settings, name: str, out: Path) -> None:
    """Every setting that can be checked before any training: START, the budgets, both runs'
    configs (the policy's with START as the only member), a report of other settings."""
    if parse_agent_spec(s.start).kind is not AgentKind.CHECKPOINT or not Path(s.start).is_file():
        raise PsroError(f"START {s.start!r}: must be a checkpoint file (the policy to train on)")
    if s.rounds < 1:
        raise PsroError(f"--rounds must be >= 1, got {s.rounds}")
    if not s.players or any(n not in PLAYER_COUNTS for n in s.players):
        raise PsroError(f"--players must be among {list(PLAYER_COUNTS)}, got {s.players}")
    from island_fortress_env.training.ppo import check_device

    if s.answer not in ANSWERS:
        raise PsroError(f"--answer must be one of {list(ANSWERS)}, got {s.answer!r}")
    if s.pairing_games < 1:
        raise PsroError(f"--pairing-games must be >= 1, got {s.pairing_games}")
    minutes, decisions = exploit_budget(s)
    for n in s.players:
        cfg = exploit_config(s.start, n, "target", s.seed, out, minutes, decisions, s.exploit_overrides)
        check_device(cfg.train.device)
    if s.answer == ANSWER_NASH:
        check_nash(s)
    else:
        cfg = load_config(s.config, train_items(s, name, 1, s.start, [s.start], out), schema=NativeConfig)
        check_device(cfg.train.device)
        if cfg.league.opponent:
            raise PsroError("the policy's runs play a league of members: league.opponent must stay empty")
    previous = read_report(out, name)
    if previous is not None and not same_run(previous["settings"], asdict(s)):
        raise PsroError(
            f"{out / 'checkpoints' / name / REPORT} was written by a run with other settings; "
            "give another --name or --out"
        )


def check_nash(s: Settings) -> None:
    """``--answer nash`` trains no policy (each round's best response joins the population), and
    its meta-game is the 2-player one."""
    if s.players != [2]:
        raise PsroError(f"--answer nash: the meta-game is 2-player; give --players 2, not {s.players}")
    if s.train_minutes is not None or s.train_decisions is not None or s.overrides:
        raise PsroError(
            "--answer nash trains no policy between rounds (each best response joins the population): "
            "drop --train-minutes, --train-decisions and the policy runs' overrides"
        )


def same_run(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two runs' settings differ at most in ``rounds`` (more rounds extend a run); a setting
    a report predates is its default."""
    defaults = {"answer": ANSWER_POLICY, "pairing_games": DEFAULT_PAIRING_GAMES}
    return {**defaults, **a, "rounds": 0} == {**defaults, **b, "rounds": 0}


@dataclass
class MetaGame:
    """The population's 2-player meta-game (``--answer nash``), grown one agent at a time: agent
    ``k`` meets each earlier agent ``i`` for ``games`` games, seats rotated, as table
    ``k (k - 1) / 2 + i`` of the tournament's seeding (``tournament.play_table``, in the C++ core
    when both play there). A pairing's games do not depend on the agents after it, so a continued
    run finds the same matrix."""

    agents: list[str]
    head: HeadToHead
    games: int
    seed: int

    def add(self, spec: str, workers: int = 1, saved: MetaGame | None = None) -> None:
        """Agent ``spec`` joins and meets every earlier agent (its results read from ``saved``, an
        earlier run's meta-game, where that played the same pairings)."""
        k = self.head.grow()
        self.agents.append(spec)
        if saved is not None and self.same_pairings(saved):
            for i in range(k):
                for a, b in ((i, k), (k, i)):
                    self.head.wins[a][b] = saved.head.wins[a][b]
                    self.head.games[a][b] = saved.head.games[a][b]
            return
        first = k * (k - 1) // 2  # the table of pairing (0, k)
        jobs = [TableJob([self.agents[i], spec], first + i, self.games, self.seed) for i in range(k)]
        for i, outcomes in enumerate(play_tables(jobs, workers)):
            for game in outcomes:
                self.head.record((i, k), game)

    def same_pairings(self, saved: MetaGame) -> bool:
        """Whether ``saved`` played the newest agent's pairings as this meta-game plays them."""
        return saved.agents[: len(self.agents)] == self.agents and (saved.games, saved.seed) == (
            self.games,
            self.seed,
        )

    def to_json(self) -> dict[str, Any]:
        return {"agents": self.agents, "games_per_pairing": self.games, "seed": self.seed,
                "wins": self.head.wins, "games": self.head.games}  # fmt: skip

    @classmethod
    def read(cls, path: Path) -> MetaGame | None:
        """An earlier run's meta-game, or None where there is none; a ``PsroError`` naming the file
        where it cannot be used."""
        if not path.is_file():
            return None
        data = read_json(path)
        try:
            agents, wins, games = list(data["agents"]), data["wins"], data["games"]
            n = len(agents)
            if not all(isinstance(a, str) for a in agents):
                raise ValueError("the agents must be agent specs")
            if len(wins) != n or len(games) != n or any(len(row) != n for row in [*wins, *games]):
                raise ValueError(f"wins and games must be {n} x {n}, as many as the agents")
            head = HeadToHead(
                [[float(w) for w in row] for row in wins], [[int(g) for g in row] for row in games]
            )
            return cls(agents, head, int(data["games_per_pairing"]), int(data["seed"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise PsroError(f"{path}: not a meta-game ({one_line(exc)})") from None

    def solve(self, path: Path) -> tuple[str, dict[str, float]]:
        """The meta-game's head-to-head matrix and Nash mixture written to ``path`` (the agent
        ``mixture:PATH``); returns that agent spec and the mixture."""
        solved = meta_game(self.agents, self.head)
        path.write_text(json.dumps(solved, indent=1) + "\n", "utf-8")
        return f"mixture:{path}", solved["meta_nash"]["mixture"]


def read_report(out: Path, name: str) -> dict[str, Any] | None:
    path = out / "checkpoints" / name / REPORT
    return read_json(path) if path.is_file() else None


def read_json(path: Path) -> dict[str, Any]:
    """A report written by an earlier step; one ``PsroError`` naming the file if it cannot be used."""
    try:
        report = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise PsroError(f"{path}: cannot be read ({one_line(exc)})") from None
    if not isinstance(report, dict):
        raise PsroError(f"{path}: not a report (a JSON object)")
    return report


def best_response(s: Settings, name: str, k: int, policy: str, players: int, out: Path) -> dict[str, Any]:
    """Round ``k``'s best response to ``policy`` at ``players`` players: its ``exploit`` report, read
    back when that run already finished."""
    run = exploiter_run(name, k, players)
    done = out / "checkpoints" / run / "exploit.json"
    if done.is_file():
        return read_json(done)
    minutes, decisions = exploit_budget(s)
    overrides = [f"run_name={run}", *s.exploit_overrides]
    games = s.games if s.games is not None else -(-DEFAULT_EXPLOIT_GAMES // players) * players
    return exploit.best_response(policy, players, minutes, decisions, "target", s.seed, games, out, overrides)


def train_round(
    s: Settings, name: str, k: int, current: str, members: Sequence[str], out: Path
) -> dict[str, Any]:
    """Round ``k``'s policy run; its ``final.zip`` read back when that run already finished."""
    from island_fortress_env.agents.checkpoint import read_metadata
    from island_fortress_env.training.ppo import train_native

    final = out / "checkpoints" / policy_run(name, k) / "final.zip"
    if not final.is_file():
        cfg = load_config(s.config, train_items(s, name, k, current, members, out), schema=NativeConfig)
        final = train_native(cfg)
    meta = read_metadata(final)
    return {
        "policy": str(final),
        "from": current,
        "members": list(members),
        "decisions": int(meta["num_timesteps"]),
        "seconds": float(meta["elapsed_seconds"]),
    }


def measured(report: dict[str, Any]) -> dict[str, Any]:
    """What the PSRO report keeps of an ``exploit`` report."""
    e = report["evaluation"]
    return {
        "exploiter": report["exploiter"],
        "decisions": report["training"]["decisions"],
        "win_rate": e["win_rate"],
        "ci95": e["ci95"],
        "exploitability": report["exploitability"],
        "exploitability_ci95": report["exploitability_ci95"],
        # its sampled play's share of wins over its last rollouts: steadier from run to run than
        # the greedy figure, which turns on whether its argmax found a line the target's walks into
        "sampled_win_rate": report["training"]["win_rate_vs_target_recent"],
    }


def psro(s: Settings, name: str = "psro", out: str | Path = ".", workers: int = 1) -> dict[str, Any]:
    """Run (or continue) ``s.rounds`` PSRO rounds from ``s.start``; returns the report (module doc),
    also written to ``<out>/checkpoints/<name>/psro.json`` after every step. ``workers``: processes
    playing the meta-game's pairings at once (``--answer nash``; the same games for any number)."""
    from torch.utils.tensorboard import SummaryWriter

    out = Path(out)
    check(s, name, out)
    report: dict[str, Any] = {"settings": asdict(s), "policies": []}
    path = out / "checkpoints" / name / REPORT
    path.parent.mkdir(parents=True, exist_ok=True)
    population = [s.start]
    current = s.start
    saved = MetaGame.read(path.parent / META_GAME) if s.answer == ANSWER_NASH else None
    meta = MetaGame([], HeadToHead.empty(0), s.pairing_games, s.seed)
    with contextlib.closing(SummaryWriter(str(out / "runs" / name))) as writer:
        for k in range(1, s.rounds + 2):
            entry: dict[str, Any] = {"round": k - 1, "policy": current, "exploit": {}}
            if s.answer == ANSWER_NASH:  # the population's equilibrium, its newest members met
                for spec in population[len(meta.agents) :]:
                    meta.add(spec, workers, saved)
                    (path.parent / META_GAME).write_text(json.dumps(meta.to_json()) + "\n", "utf-8")
                current, entry["mixture"] = meta.solve(path.parent / f"nash-{k - 1}.json")
                entry["policy"] = current
            report["policies"].append(entry)
            for n in s.players:
                found = measured(best_response(s, name, k, current, n, out))
                entry["exploit"][str(n)] = found
                population.append(found["exploiter"])
                writer.add_scalar(f"psro/exploiter_win_rate_{n}p", found["win_rate"], k - 1)
                writer.add_scalar(f"psro/exploitability_{n}p", found["exploitability"], k - 1)
                if found["sampled_win_rate"] is not None:
                    writer.add_scalar(
                        f"psro/exploiter_sampled_win_rate_{n}p", found["sampled_win_rate"], k - 1
                    )
                path.write_text(json.dumps(report, indent=2) + "\n", "utf-8")
                print(f"round {k - 1} policy {current}: best response at {n} players wins "
                      f"{100 * found['win_rate']:.1f}%", flush=True)  # fmt: skip
            if k > s.rounds:
                break
            if s.answer == ANSWER_NASH:  # no policy: the best response joined the population
                continue
            entry["training"] = train_round(s, name, k, current, population, out)
            current = entry["training"]["policy"]
            population.append(current)
            path.write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    report["population"] = population
    path.write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    return report


def format_report(report: dict[str, Any]) -> str:
    """Each policy's best responses as a table: greedy win rate [95% interval], the
    exploitability, and the sampled win rate of the best response's last rollouts."""
    players = report["settings"]["players"]
    lines = ["| round | policy | " + " | ".join(f"best response at {n} players" for n in players) + " |",
             "|---|---|" + "---|" * len(players)]  # fmt: skip
    for entry in report["policies"]:
        cells = []
        for n in players:
            f = entry["exploit"][str(n)]
            lo, hi = f["ci95"]
            sampled = f["sampled_win_rate"]
            cells.append(f"{100 * f['win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] "
                         f"({100 * f['exploitability']:+.1f})"
                         + (f", sampled {100 * sampled:.1f}%" if sampled is not None else ""))  # fmt: skip
        policy = entry["policy"]
        if "mixture" in entry:  # --answer nash: the mixture's members and weights
            members = ", ".join(f"{label(m)} {100 * p:.1f}%" for m, p in entry["mixture"].items())
            policy += f" ({members})"
        lines.append(f"| {entry['round']} | {policy} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def label(spec: str) -> str:
    """A member's short name: its checkpoint named as the league names members in TensorBoard (a
    run's folder for its ``final.zip``, else the file's stem; ``sample:`` kept), the spec itself
    otherwise."""
    path = parse_agent_spec(spec).checkpoint
    return spec if path is None else spec.replace(str(path), member_name(str(path)))
