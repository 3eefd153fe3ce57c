"""The league of the native trainer (``training/ppo.py``): who plays the seats that do not learn.

Every new game is one of two kinds. In a **self-play** game every seat learns. In a **league**
game one seat learns and every other seat is played by a frozen player of one kind: a
**snapshot** (a frozen copy of the learner's weights from earlier in the run), the heuristic or
the random player (or, as ``league.opponent``, a search player). ``draw_game_kind`` and
``draw_snapshot`` make those draws for a new game; ``League`` keeps the snapshots and how often
each still beats the learner, which is what the snapshot draw is weighted by (prioritised
fictitious self-play).

With ``league.opponent`` the league is one fixed player: every league game is played against it,
a checkpoint as the only snapshot, kept as it is for the whole run (``island-fortress exploit``
trains a best response to it this way). A mixture (``mixture:FILE``) is played the same way, one
member drawn per league game by the mixture's weights: its checkpoints as the snapshots, drawn by
those weights instead of by how often they beat the learner. Such a checkpoint plays in its spec's
mode, as it plays when it is evaluated: greedy (``CHECKPOINT``), sampled (``sample:CHECKPOINT``)
or thresholded (``threshold:P:CHECKPOINT``); the learner's own snapshots and the
``league.members`` are sampled.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from torch import nn

from island_fortress_env.players import KINDS, AgentKind, parse_agent_spec
from island_fortress_env.players.mixture import Member, is_mixture, read_mixture
from island_fortress_env.players.specs import SAMPLED, PlayMode
from island_fortress_env.training.config import LeagueSection, NativeConfig
from island_fortress_env.training.weights import initial_weights, network_kwargs


class GameKind(enum.Enum):
    """Who plays a game's seats. The values name the opponent kinds in TensorBoard tags."""

    SELF_PLAY = "self-play"  # every seat learns
    SNAPSHOT = "snapshot"  # one learner against snapshots of itself
    HEURISTIC = "heuristic"  # one learner against the heuristic player
    RANDOM = "random"  # one learner against the random player
    AGENT = "agent"  # one learner against ``league.opponent``'s search player


# The kinds a league game is drawn from: league.<kind> weights, and AGENT only as league.opponent.
OPPONENT_KINDS = (GameKind.SNAPSHOT, GameKind.HEURISTIC, GameKind.RANDOM, GameKind.AGENT)


def fixed_opponent_kind(spec: str) -> GameKind:
    """The kind of league game that ``league.opponent`` ``spec`` (or a member of its mixture)
    plays: the heuristic and the random player their own, a search player an agent game, a
    checkpoint a snapshot game."""
    kind = parse_agent_spec(spec).kind
    if not KINDS[kind].league:
        return GameKind.AGENT
    return {AgentKind.HEURISTIC: GameKind.HEURISTIC, AgentKind.RANDOM: GameKind.RANDOM}.get(
        kind, GameKind.SNAPSHOT
    )


def fixed_opponents(spec: str) -> tuple[Member, ...]:
    """The players of ``league.opponent`` ``spec`` and how often each plays a league game: a
    mixture's members by their weights (``mixture:FILE``), else ``spec`` alone."""
    return read_mixture(spec) if is_mixture(spec) else (Member(spec, 1.0),)


def opponent_probabilities(league: LeagueSection) -> np.ndarray:
    """The probabilities of ``OPPONENT_KINDS`` in a league game (all 0 when no weight is set); with
    ``league.opponent``, 1 for its kind, or a mixture's weights summed over its members' kinds."""
    if league.opponent:
        p = np.zeros(len(OPPONENT_KINDS))
        for member in fixed_opponents(league.opponent):
            p[OPPONENT_KINDS.index(fixed_opponent_kind(member.spec))] += member.weight
        return p
    weights = np.array([league.snapshot, league.heuristic, league.random, 0.0], dtype=np.float64)
    return weights / weights.sum() if weights.sum() > 0 else weights


def draw_game_kind(
    rng: np.random.Generator, share: float, kind_p: np.ndarray, have_snapshots: bool
) -> GameKind:
    """A new game's kind: a league game with probability ``share``, its opponent kind drawn by
    ``kind_p``; a snapshot game before the first snapshot is a self-play game."""
    if rng.random() >= share:
        return GameKind.SELF_PLAY
    kind = OPPONENT_KINDS[int(rng.choice(len(OPPONENT_KINDS), p=kind_p))]
    if kind is GameKind.SNAPSHOT and not have_snapshots:
        return GameKind.SELF_PLAY
    return kind


def draw_snapshot(rng: np.random.Generator, probabilities: Mapping[int, float]) -> int:
    """The id of the snapshot that plays a new snapshot game, drawn by ``probabilities``."""
    ids = list(probabilities)
    p = np.array([probabilities[i] for i in ids])
    return ids[int(rng.choice(len(ids), p=p / p.sum()))]


RUN_CHECKPOINTS = ("final", "latest", "best")  # the files a training run writes in its own folder


def member_name(path: str) -> str:
    """The name a ``league.members`` checkpoint goes by in TensorBoard tags: the run's name for a
    run's own checkpoint (``checkpoints/<run>/final.zip``), else the file's stem."""
    p = Path(path)
    return p.parent.name if p.stem in RUN_CHECKPOINTS and p.parent.name else p.stem


@dataclass
class Snapshot:
    """A frozen copy of the learner and the league games played against it."""

    state_dict: dict[str, Any]
    step: int  # decisions learned from when it was taken
    ahead: float = 0.0  # the learner's pairwise finishes ahead of its seats, summed over games
    games: int = 0
    member: str = ""  # a ``league.members`` checkpoint, which never leaves the pool; "" for a snapshot


@dataclass
class Standing:
    """Snapshots (id -> state dict) and the draw of new games among them (id -> probability)."""

    state_dicts: dict[int, dict[str, Any]] = field(default_factory=dict)
    probabilities: dict[int, float] = field(default_factory=dict)
    modes: dict[int, PlayMode] = field(default_factory=dict)  # how each plays (absent: sampled)


class League:
    """The newest ``pool_size`` snapshots of the learner (beside the ``league.members``
    checkpoints, which stay for the whole run) and how often each still beats it.

    Sampling rule (prioritised fictitious self-play): snapshot ``i`` is drawn with weight
    ``(1 - p_i) ** priority_power + floor``, where ``p_i = (ahead_i + 1) / (games_i + 2)`` is the
    learner's smoothed rate of finishing ahead of that snapshot's seats (a tie counts half).
    """

    def __init__(self, pool_size: int, priority_power: float, floor: float) -> None:
        self.pool_size, self.power, self.floor = pool_size, priority_power, floor
        self.pool: dict[int, Snapshot] = {}
        self._next_id = 0
        self.fixed = False  # a league of one fixed player (``league.opponent``): it takes no snapshots
        self.weights: dict[int, float] = {}  # a mixture's fixed draw of its checkpoints, by id
        self.modes: dict[int, PlayMode] = {}  # a fixed player's play mode, by id (absent: sampled)

    @classmethod
    def for_run(cls, cfg: NativeConfig, net: nn.Module, step: int) -> League:
        """The league a run starts with at ``step`` decisions: a snapshot of the learner ``net``; or
        with ``league.opponent`` the fixed player, a checkpoint's weights as the only snapshot (a
        ``CheckpointError`` when its network is not the learner's), the heuristic or the random
        player with no snapshot; a mixture's checkpoints as its snapshots, drawn by its weights (its
        heuristic and random members play as their own kinds). The ``league.members``
        checkpoints join at once, to stay. A fixed player's checkpoint plays in its spec's mode
        (``modes``): greedy, sampled or thresholded."""
        lg = cfg.league
        league = cls(lg.pool_size, lg.priority_power, lg.floor)
        if not lg.opponent:
            for path in lg.members:
                league._keep(initial_weights(path, network_kwargs(cfg)), step, member=path)
            league.add(net, step)
            return league
        mixture = is_mixture(lg.opponent)
        for player in fixed_opponents(lg.opponent):
            parsed = parse_agent_spec(player.spec)
            if parsed.checkpoint is not None and parsed.play_mode is not None:
                weights = initial_weights(str(parsed.checkpoint), network_kwargs(cfg))
                sid = league._keep(weights, step, member=player.spec if mixture else "")
                league.weights[sid] = player.weight
                league.modes[sid] = parsed.play_mode
        league.fixed = True
        return league

    def add(self, net: nn.Module, step: int) -> int:
        """Freeze a copy of ``net``'s weights (its id); the oldest snapshot leaves a full pool."""
        return self._keep({k: v.detach().clone() for k, v in net.state_dict().items()}, step)

    def _keep(self, state_dict: dict[str, Any], step: int, member: str = "") -> int:
        sid = self._next_id
        self._next_id += 1
        self.pool[sid] = Snapshot(state_dict, step, member=member)
        snapshots = [i for i, e in self.pool.items() if not e.member]
        for old in snapshots[: max(0, len(snapshots) - self.pool_size)]:
            del self.pool[old]
        return sid

    def record(self, sid: int, ahead: float) -> None:
        """One finished game against snapshot ``sid`` (ignored once it has left the pool)."""
        if sid in self.pool:
            self.pool[sid].ahead += ahead
            self.pool[sid].games += 1

    def win_rate(self, sid: int) -> float:
        entry = self.pool[sid]
        return (entry.ahead + 1.0) / (entry.games + 2.0)

    def probabilities(self, ids: Iterable[int] | None = None) -> dict[int, float]:
        """The draw of a new game's snapshot among ``ids`` (the whole pool by default)."""
        pool = self.pool if ids is None else ids
        if self.weights:  # a mixture's members: its own weights, whatever the games say
            w = {sid: self.weights[sid] for sid in pool}
        else:
            w = {sid: (1.0 - self.win_rate(sid)) ** self.power + self.floor for sid in pool}
        total = sum(w.values())
        return {sid: v / total for sid, v in w.items()} if total > 0 else {}

    def standing(self) -> Standing:
        """The snapshots that never leave the pool (the ``league.members``, or the fixed
        checkpoint of ``league.opponent``) and the draw among them: what a collector seats its
        first games against, before the first rollout brings it the rest of the league (the
        learner's own snapshots), with the play mode of each that does not play sampled. Empty for
        a league of the learner's snapshots alone."""
        ids = [sid for sid, e in self.pool.items() if e.member or self.fixed]
        modes = {sid: self.modes[sid] for sid in ids if self.modes.get(sid, SAMPLED) != SAMPLED}
        return Standing({sid: self.pool[sid].state_dict for sid in ids}, self.probabilities(ids), modes)

    def member_win_rates(self) -> dict[str, float]:
        """The learner's smoothed rate of finishing ahead of each ``league.members`` checkpoint."""
        return {e.member: self.win_rate(sid) for sid, e in self.pool.items() if e.member}

    def state_dicts(self) -> dict[int, dict[str, Any]]:
        return {sid: e.state_dict for sid, e in self.pool.items()}
