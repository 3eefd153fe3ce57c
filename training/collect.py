"""Collection for the native trainer (``training/ppo.py``): the games a rollout is played in.

A ``Collector`` plays ``train.games_per_collector`` games of mixed table sizes at once through
``players.runner`` (each new game's size drawn by the ``tables`` weights, its seats by the league)
and advances them tick by tick: every tick, the pending decisions of all learning seats go through
**one** forward pass, actions are sampled from the masked logits (illegal actions have probability
0), and the frozen seats of league games (``training/league.py``) are played by their own players
(the heuristic and random players in C++) or snapshots (sampled; a fixed opponent's checkpoint in
its spec's play mode). Every learning seat's decisions and
rewards go to the trainer's per-seat trajectories (``trajectories.SeatTrajectories``): the score gains of
every seat come back with each step (the dense reward), and a finished game's figures with the
step that ends it (``vector.FinalResults``). The games are a batch of ``vector.make``: C++ core
games, or where the core is not built the Python engine's (with a warning): one code path.

``Collectors`` are the collectors of a run: ``train.workers`` worker processes, each driven over
a pipe, plus the main process's own when the run is not pipelined. Their rollouts are joined in
rank order, so a seeded run gives the same batches whichever worker finishes first.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing as mp
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from island_fortress_env import vector
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine.scoring import win_loss_returns
from island_fortress_env.engine.tables import MAX_PLAYERS
from island_fortress_env.players import make_agent
from island_fortress_env.players.runner import Finished, GameRunner, Games, Seating, SeatPolicy, Step
from island_fortress_env.players.seat_policies import BatchSeats, NetworkPoolSeats, NetworkSeats, seat_policy
from island_fortress_env.players.seeds import Stream, generator, stream_seed
from island_fortress_env.players.specs import SAMPLED, PlayMode
from island_fortress_env.training.config import TABLE_SIZES, NativeConfig
from island_fortress_env.training.figures import result_figures
from island_fortress_env.training.league import (
    GameKind,
    League,
    Standing,
    draw_game_kind,
    draw_snapshot,
    fixed_opponent_kind,
    opponent_probabilities,
)
from island_fortress_env.training.shaping import gain_rewards
from island_fortress_env.training.weights import network_kwargs

if TYPE_CHECKING:
    from island_fortress_env.training.trajectories import Rollout, SeatTrajectories

    Book = SeatTrajectories


@dataclass
class LeagueGame:
    """One game of a collector: who plays each seat, and how far it has got."""

    episode: int
    players: int
    kind: GameKind
    learners: tuple[int, ...]  # the seats that learn; in league games the others are frozen
    snapshot: int | None = None  # the snapshot playing the frozen seats, in a snapshot game
    decisions: int = 0

    def frozen(self) -> list[int]:
        return [s for s in range(self.players) if s not in self.learners]


@dataclass
class FinishedGame:
    """A game finished during a rollout, as the trainer logs it."""

    episode: int
    players: int
    kind: GameKind
    snapshot: int | None  # the snapshot that played the frozen seats, if any
    length: int  # decisions taken, every seat's
    figures: list[dict[str, Any]]  # ``final_figures`` of each learning seat
    # League games: the learner's pairwise result against the frozen seats (1 per seat finished
    # behind it, 0.5 per tie, averaged); None in self-play games.
    ahead: float | None = None


class Collector:
    """Plays ``games_per_collector`` games at once through ``players.runner`` and turns every
    learning seat's decisions into PPO data. Collector ``rank`` draws from its own generators, of
    the run seed's ``collector`` stream at ``rank`` (``players.seeds``). The games are a batch of
    ``vector.make`` on ``backend``: C++ core games (stepped on ``train.core_threads`` threads), or
    the Python engine's (``"python"``; ``"auto"``, where the core is not built): the same code
    path, slower.

    Each new game's table size is drawn by the ``tables`` weights and its seats by the league
    (``_seat``): every seat learns (self-play), or one learner faces frozen seats of one kind. The
    ``standing`` snapshots (``League.standing``) are there before the first games are seated, so
    those games meet them too."""

    def __init__(
        self,
        cfg: NativeConfig,
        rank: int,
        new_book: Callable[[], Book],
        standing: Standing | None = None,
        backend: str = "auto",
    ) -> None:
        self.cfg = cfg
        self.rank = rank
        self.rng = generator(cfg.seed, Stream.COLLECTOR, rank)
        self.generator = torch.Generator().manual_seed(stream_seed(cfg.seed, Stream.COLLECTOR, rank))
        weights = cfg.tables.weights()
        self.table_sizes = [n for n in TABLE_SIZES if weights[n] > 0]
        w = np.array([weights[n] for n in self.table_sizes], dtype=np.float64)
        self.table_p = w / w.sum()
        self.kind_p = opponent_probabilities(cfg.league)
        self.snapshots: dict[int, NetworkSeats] = {}  # each snapshot's network and play mode, by id
        # every snapshot's seats, one call a tick for all of them (its weights stacked with theirs)
        self.snapshot_seats = NetworkPoolSeats(self._snapshot_of, self.generator)
        self.snapshot_p: dict[int, float] = {}
        self.snapshot_modes: dict[int, PlayMode] = {}  # a fixed player's, by id (absent: sampled)
        self.book = new_book()  # the per-seat trajectories (ppo.py's SeatTrajectories)
        self.learner = NetworkSeats(
            None, greedy=False, generator=self.generator, name="learner", on_act=self._acted
        )
        self.heuristic = BatchSeats("heuristic")
        self.random = BatchSeats("random")
        # league.opponent's agent (a search player: its kind's seat policy, every game it is to
        # move in searched at once), each game's seats seeded apart from the collector's draws
        self.agent: SeatPolicy | None = None
        if cfg.league.opponent and fixed_opponent_kind(cfg.league.opponent) is GameKind.AGENT:
            self.agent = seat_policy(cfg.league.opponent, make_agent)
        self.finished: list[FinishedGame] = []
        self._runner: GameRunner | None = None  # made once the batch is (below)
        self._episodes = 0
        if standing is not None and standing.state_dicts:
            self.snapshot_modes = dict(standing.modes)
            self.set_snapshots(standing.state_dicts, standing.probabilities)
        count, batch_seed = cfg.train.games_per_collector, int(self.rng.integers(2**63))
        self.batch = vector.make(
            count, seed=batch_seed, threads=cfg.train.core_threads, backend=backend, **cfg.env.options
        )
        self._runner = GameRunner(self.batch, self._next_game)

    def set_snapshots(self, state_dicts: Mapping[int, dict], probabilities: Mapping[int, float]) -> None:
        """Add new snapshots (id -> state dict); new games draw from ``probabilities``' ids. Each
        plays sampled, or in its play mode from the standing (a fixed player's: greedy, sampled or
        thresholded)."""
        for sid, sd in state_dicts.items():
            net = ActorCritic(**network_kwargs(self.cfg))
            net.load_state_dict(sd)
            net.eval()
            mode = self.snapshot_modes.get(sid, SAMPLED)
            self.snapshots[sid] = NetworkSeats(
                net, greedy=mode.greedy, generator=self.generator, name=f"snapshot {sid}",
                threshold=mode.threshold,
            )  # fmt: skip
        # A snapshot that left the pool stays until the games it plays in are over, those dealt
        # to begin next included; new games draw only from the pool.
        playing = set()
        if self._runner is not None:
            playing = {seating.tag.snapshot for seating in self._runner.dealt()}
        self.snapshots = {
            sid: p for sid, p in self.snapshots.items() if sid in probabilities or sid in playing
        }
        self.snapshot_seats.members = self.snapshots
        self.snapshot_p = dict(probabilities)

    @property
    def runner(self) -> GameRunner:
        """The runner of the collector's games."""
        assert self._runner is not None, "the collector's games are not seated yet"
        return self._runner

    def _snapshot_of(self, slot: int) -> int | None:
        """The snapshot that plays the frozen seats of ``slot``'s game."""
        return self.runner.current(slot).tag.snapshot  # type: ignore[union-attr]

    @property
    def games(self) -> list[LeagueGame]:
        """The games under way, one a slot of the batch."""
        return [self.runner.current(slot).tag for slot in range(self.batch.num_games)]  # type: ignore[union-attr]

    def _draw_players(self) -> int:
        """A new game's table size, drawn by the ``tables`` weights."""
        return int(self.table_sizes[int(self.rng.choice(len(self.table_sizes), p=self.table_p))])

    def _next_game(self, slot: int) -> Seating:
        """The next game of ``slot``: its table size and who plays each seat (its deal the
        batch's own, seeded from the collector's seed)."""
        game = self._seat(self._draw_players())
        frozen = {
            GameKind.HEURISTIC: self.heuristic,
            GameKind.RANDOM: self.random,
            GameKind.AGENT: self.agent,
            GameKind.SNAPSHOT: self.snapshot_seats if game.snapshot in self.snapshots else None,
        }.get(game.kind)
        policies = tuple(self.learner if s in game.learners else frozen for s in range(game.players))
        seeds: tuple[int | None, ...] = ()
        if game.kind is GameKind.AGENT:
            key = (self.cfg.seed, Stream.COLLECTOR_OPPONENT, self.rank, game.episode)
            seeds = tuple(stream_seed(*key, seat) for seat in range(game.players))
        return Seating(game.players, None, policies, seeds, tag=game)  # type: ignore[arg-type]

    def _seat(self, players: int) -> LeagueGame:
        """Who plays a new game of ``players`` seats: every seat learns (self-play), or one
        learner faces frozen seats of one drawn kind (``league.py``)."""
        self._episodes += 1
        kind = draw_game_kind(self.rng, self.cfg.league.share, self.kind_p, bool(self.snapshot_p))
        if kind is GameKind.SELF_PLAY:
            return LeagueGame(self._episodes, players, kind, tuple(range(players)))
        learner = int(self.rng.integers(players))
        snapshot = draw_snapshot(self.rng, self.snapshot_p) if kind is GameKind.SNAPSHOT else None
        return LeagueGame(self._episodes, players, kind, (learner,), snapshot)

    def _acted(
        self,
        games: Games,
        obs: np.ndarray,
        masks: np.ndarray,
        actions: np.ndarray,
        logp: np.ndarray,
        values: np.ndarray,
    ) -> None:
        """The learner's decisions, recorded in the seats' trajectories."""
        self.book.act_many(seat_ids(games.slots, games.seats), obs, masks, actions, logp, values)

    def _credit(self, learning: np.ndarray, players: np.ndarray, step: Step) -> None:
        """Hand every learning seat its reward for the ``step`` (``learning``: bool[slot, seat],
        and ``players``, the table sizes, of the games before it): the points every seat scored,
        and in the games that ended the win/loss outcome too, which closes their seats'
        trajectories."""
        reward, gains = self.cfg.reward, step.score_gains
        done = np.zeros(len(gains), dtype=np.bool_)
        done[[game.slot for game in step.finished]] = True
        rewards = reward.vp * gain_rewards(gains, players, reward.vp_relative)
        for game in step.finished:
            final = game.final
            winners = [seat for seat in range(final.players) if final.win[seat] > 0]
            rewards[game.slot, : final.players] += reward.win * np.array(
                win_loss_returns(final.players, winners)
            )
        credited = learning & (gains.any(axis=1) | done)[:, None]
        seats = np.flatnonzero(credited)  # seat ids: the flat index of [slot, seat]
        self.book.reward_many(seats, rewards.ravel()[seats])
        self.book.end_many(np.flatnonzero(learning & done[:, None]))

    def _record(self, game: LeagueGame, finished: Finished) -> None:
        """Keep the figures of ``game``, which has ended (``finished``: its record)."""
        final = finished.final
        figures = result_figures(final, game.learners)
        ahead = None
        if game.kind is not GameKind.SELF_PLAY:
            rank = final.rank
            learner = game.learners[0]
            # pairwise: 1 per frozen seat finished behind the learner, 0.5 per tie
            ahead = float(
                np.mean(
                    [
                        1.0 if rank[learner] < rank[s] else 0.5 if rank[learner] == rank[s] else 0.0
                        for s in game.frozen()
                    ]
                )
            )
        self.finished.append(
            FinishedGame(
                game.episode, game.players, game.kind, game.snapshot, int(final.length), figures, ahead
            )
        )

    def collect(self, net: nn.Module, decisions: int) -> tuple[Rollout, list[FinishedGame]]:
        """Play until at least ``decisions`` learner decisions are closed; return them with GAE,
        and the games finished meanwhile."""
        net.eval()
        self.learner.net = net
        while self.book.num_finished < decisions:
            self._tick()
        rollout = self.book.take(self.cfg.ppo.gamma, self.cfg.ppo.gae_lambda)
        finished, self.finished = self.finished, []
        return rollout, finished

    def _tick(self) -> None:
        """Every game one decision on; every learning seat credited with its score gains, and
        the games that ended closed."""
        learning, players = self.runner.seated(self.learner), self.runner.players.copy()
        step = self.runner.step()
        self._credit(learning, players, step)
        for finished in step.finished:
            self._record(finished.seating.tag, finished)


def seat_ids(slots: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """The ``SeatTrajectories`` ids of the seats ``seats`` of the games in ``slots``: one per seat
    of every slot of the batch (a slot's game ends, closing its seats, before the next begins)."""
    return np.asarray(slots, np.int64) * MAX_PLAYERS + np.asarray(seats, np.int64)


def make_collector(
    cfg: NativeConfig,
    rank: int,
    new_book: Callable[[], Book],
    backend: str,
    standing: Standing | None = None,
) -> Collector:
    """The collector of rank ``rank``: its games on ``backend`` (``vector.make``'s)."""
    return Collector(cfg, rank, new_book, standing, backend)


# ============================================================== processes


def mp_context() -> Any:
    """Worker processes start from a clean interpreter (forkserver where there is one): never a
    fork of a process that already runs torch threads."""
    return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")


def starmap(func: Callable[..., Any], jobs: Sequence[tuple], processes: int) -> list[Any]:
    """``[func(*job) for job in jobs]``, on up to ``processes`` worker processes when that helps.

    The pool is closed and joined, not terminated: its workers exit on their own (no leaked
    semaphores at interpreter exit)."""
    if processes <= 1 or len(jobs) <= 1:
        return [func(*job) for job in jobs]
    with mp_context().Pool(min(processes, len(jobs))) as pool:
        results = pool.starmap(func, jobs, chunksize=1)
        pool.close()
        pool.join()
    return results


def split(games: int, processes: int) -> list[range]:
    """``range(games)`` cut into contiguous parts, one per process (the first ones a game longer
    when ``processes`` does not divide ``games``); empty parts are left out."""
    k = max(processes, 1)
    sizes = [games // k + (i < games % k) for i in range(k)]
    return [range(a, a + n) for a, n in zip(itertools.accumulate(sizes, initial=0), sizes, strict=False) if n]


@dataclass
class CollectJob:
    """What the main process sends a worker for one rollout."""

    weights: dict[str, torch.Tensor]  # the learner's
    new_snapshots: dict[int, dict[str, torch.Tensor]]  # snapshots the collector has not had yet
    snapshot_probabilities: dict[int, float]  # the league's draw of a snapshot for new games
    decisions: int  # closed decisions to collect


def _worker(
    cfg: NativeConfig, rank: int, pipe: Any, new_book: Callable[[], Book], backend: str, standing: Standing
) -> None:
    """A worker process: one collector, driven by the main process over ``pipe`` (a
    ``CollectJob`` in, a rollout and its finished games out; ``None`` ends it)."""
    torch.set_num_threads(1)
    collector = make_collector(cfg, rank, new_book, backend, standing)
    net = ActorCritic(**network_kwargs(cfg))
    while True:
        job: CollectJob | None = pipe.recv()
        if job is None:
            return
        net.load_state_dict(job.weights)
        collector.set_snapshots(job.new_snapshots, job.snapshot_probabilities)
        pipe.send(collector.collect(net, job.decisions))


class Collectors:
    """The collectors of a run: the main process's own plus ``workers`` worker processes.

    ``start`` hands the current weights and the league to every collector, ``finish`` gathers
    their rollouts. Without ``pipelined`` the main process collects its share between the two
    (lockstep). With ``pipelined`` only the workers collect, and the main process runs the PPO
    update on rollout ``k`` while they collect rollout ``k + 1`` with the weights from before that
    update: both cores stay busy, and the data is one update old (its log-probabilities are those
    of the policy that acted, so PPO's ratio and clipping stay exact).

    Each collector is made with the league's ``standing`` snapshots (``League.standing``: the
    ``league.members``, a checkpoint opponent), so its first games, seated as it is made, meet
    them; the learner's own snapshots reach it with the first rollout.
    """

    def __init__(
        self,
        cfg: NativeConfig,
        new_book: Callable[[], Book],
        backend: str = "auto",
        standing: Standing | None = None,
    ) -> None:
        backend = vector.resolve_backend(backend)  # once for every collector (one warning, here)
        standing = standing or Standing()
        self.pipelined = cfg.train.pipelined
        self.local = None if self.pipelined else make_collector(cfg, 0, new_book, backend, standing)
        self.pipes: list[Any] = []
        self.procs: list[Any] = []
        ctx = mp_context()
        for rank in range(1, cfg.train.workers + 1):
            parent, child = ctx.Pipe()
            args = (cfg, rank, child, new_book, backend, standing)
            proc = ctx.Process(target=_worker, args=args, daemon=True)
            proc.start()
            child.close()  # the worker holds it now: its death ends our recv() with EOFError
            self.pipes.append(parent)
            self.procs.append(proc)
        self.sent: set[int] = set(standing.state_dicts)
        self.outstanding = False
        self._local_job: tuple[nn.Module, int] | None = None

    def start(self, net: nn.Module, decisions: int, league: League, local: nn.Module | None = None) -> None:
        """Every collector starts a rollout of its share of ``decisions`` with ``net``'s weights
        and the league's snapshots as they are now. The main process's own collector plays with
        ``local`` where it is given (the learner's network on a GPU: its forward passes run there,
        on no copy), else with ``net``."""
        share = -(-decisions // (len(self.pipes) + (self.local is not None)))
        probabilities = league.probabilities()
        new = {sid: sd for sid, sd in league.state_dicts().items() if sid not in self.sent}
        self.sent |= set(new)
        weights = {k: v.detach().clone() for k, v in net.state_dict().items()}
        for pipe in self.pipes:
            pipe.send(CollectJob(weights, new, probabilities, share))
        if self.local is not None:
            self.local.set_snapshots(new, probabilities)
            self._local_job = (local if local is not None else net, share)
        self.outstanding = True

    def finish(self) -> tuple[list[Rollout], list[FinishedGame]]:
        """The rollouts of every collector in rank order (to be joined in that order), and the
        games they finished."""
        parts = []
        if self.local is not None and self._local_job is not None:
            parts.append(self.local.collect(*self._local_job))
            self._local_job = None
        for rank, pipe in enumerate(self.pipes, start=1):
            try:
                parts.append(pipe.recv())
            except EOFError:
                raise RuntimeError(f"collector worker {rank} died (see its traceback above)") from None
        self.outstanding = False
        finished = [game for part in parts for game in part[1]]
        return [part[0] for part in parts], finished

    def close(self) -> None:
        if self.outstanding and self.pipes:
            try:
                for pipe in self.pipes:
                    pipe.recv()
            except (EOFError, OSError):
                pass
        for pipe in self.pipes:
            with contextlib.suppress(BrokenPipeError, OSError):
                pipe.send(None)
        for proc in self.procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
