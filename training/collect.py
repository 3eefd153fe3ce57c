"""Collection for the native trainer (``training/ppo.py``): the games a rollout is played in.

A collector plays ``train.games_per_collector`` games of mixed table sizes at once (each new
game's size drawn by the ``tables`` weights) and advances them tick by tick: every tick, the
pending decisions of all learning seats go through **one** forward pass, actions are sampled from
the masked logits (illegal actions have probability 0), and the frozen seats of league games
(``training/league.py``) are played by their own players or snapshots. Every learning seat's
decisions and rewards go to the trainer's per-seat trajectories (``ppo.SeatTrajectories``).

* ``CoreCollector`` keeps its games in one batch of C++ core games (``island_fortress_env.vector``)
  and steps them all with one call per tick: the heuristic and random seats are decided in C++,
  every seat's score gains come back with the step (the dense reward), and a finished game is
  replayed from its seed and actions into a core state for its figures.
* ``EnvCollector`` steps Python ``raw_env`` games one decision at a time: the path taken where
  the C++ core is not built (``make_collector``, with a warning).

``Collectors`` are the collectors of a run: ``train.workers`` worker processes, each driven over
a pipe, plus the main process's own when the run is not pipelined. Their rollouts are joined in
rank order, so a seeded run gives the same batches whichever worker finishes first.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing as mp
import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from island_fortress_env import core
from island_fortress_env.agents.base import RandomAgent
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine.scoring import win_loss_returns
from island_fortress_env.env.aec import raw_env
from island_fortress_env.players import make_agent
from island_fortress_env.training.config import TABLE_SIZES, NativeConfig
from island_fortress_env.training.figures import game_figures
from island_fortress_env.training.league import (
    GameKind,
    League,
    Standing,
    draw_game_kind,
    draw_snapshot,
    fixed_opponent_kind,
    opponent_probabilities,
)
from island_fortress_env.training.shaping import gain_reward
from island_fortress_env.training.weights import network_kwargs

if TYPE_CHECKING:
    from island_fortress_env.training.ppo import Rollout, SeatTrajectories

    Book = SeatTrajectories


def core_available(warn: bool = True) -> bool:
    """Whether the C++ core is built; where it is not, warns once per process (with ``warn``)
    that games are stepped by the Python engine instead."""
    if core.available():
        return True
    if warn:
        warnings.warn(
            f"the C++ core is not built ({core.build_error()}): training steps its games in the "
            "Python engine, several times slower (reinstall with `pip install -e .` to build it)",
            RuntimeWarning,
            stacklevel=1,
        )
    return False


def sample_actions(
    net: nn.Module, obs: np.ndarray, masks: np.ndarray, generator: torch.Generator, greedy: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One forward pass for a batch of decisions: (actions, log-probabilities, values).

    Sampled from the masked softmax with ``generator`` (illegal actions have probability 0) by
    the Gumbel-max trick (the argmax of the log-probabilities plus Gumbel noise: an exact draw,
    several times cheaper than ``torch.multinomial`` over 380 actions), or the argmax over legal
    actions when ``greedy``.
    """
    with torch.no_grad():
        logits, values = net(torch.from_numpy(obs), torch.from_numpy(masks))
        logp = torch.log_softmax(logits, dim=-1)
        if greedy:
            actions = logits.argmax(dim=-1)
        else:
            uniform = torch.rand(logp.shape, generator=generator).clamp_(min=torch.finfo(logp.dtype).tiny)
            actions = (logp - torch.log(-torch.log(uniform))).argmax(dim=-1)
        chosen = logp.gather(1, actions.unsqueeze(-1)).squeeze(-1)
    return actions.numpy(), chosen.numpy(), values.numpy()


@dataclass
class Game:
    """One game of a collector: who plays each seat, and how far it has got."""

    episode: int
    players: int
    kind: GameKind
    learners: tuple[int, ...]  # the seats that learn; in league games the others are frozen
    snapshot: int | None = None  # the snapshot playing the frozen seats, in a snapshot game
    decisions: int = 0
    env: Any = None  # EnvCollector: the game's raw env
    table: Any = None  # CoreCollector: the game's ``engine.Game``, the seed it was dealt from ...
    seed: int = 0
    actions: list[int] = field(default_factory=list)  # ... and the actions taken (its replay)

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
    figures: list[dict[str, Any]]  # ``game_figures`` of each learning seat
    # League games: the learner's pairwise result against the frozen seats (1 per seat finished
    # behind it, 0.5 per tie, averaged); None in self-play games.
    ahead: float | None = None


class Collector:
    """Plays ``games_per_collector`` games at once and turns every learning seat's decisions into
    PPO data. Collector ``rank`` draws from its own generators, seeded by (``seed``, ``rank``).
    The subclasses step the games (``_tick``). The ``standing`` snapshots (``League.standing``)
    are there before the first games are seated, so those games meet them too."""

    def __init__(
        self, cfg: NativeConfig, rank: int, new_book: Callable[[], Book], standing: Standing | None = None
    ) -> None:
        self.cfg = cfg
        self.rank = rank
        seed = np.random.SeedSequence([cfg.seed, rank])
        self.rng = np.random.default_rng(seed)
        self.generator = torch.Generator().manual_seed(int(seed.generate_state(1)[0]))
        weights = cfg.tables.weights()
        self.table_sizes = [n for n in TABLE_SIZES if weights[n] > 0]
        w = np.array([weights[n] for n in self.table_sizes], dtype=np.float64)
        self.table_p = w / w.sum()
        self.kind_p = opponent_probabilities(cfg.league)
        self.snapshots: dict[int, nn.Module] = {}
        self.snapshot_p: dict[int, float] = {}
        self.book = new_book()  # the per-seat trajectories (ppo.py's SeatTrajectories)
        # league.opponent's search player, seeded apart from the collector's draws
        self.agent = None
        if cfg.league.opponent and fixed_opponent_kind(cfg.league.opponent) is GameKind.AGENT:
            agent_seed = int(np.random.SeedSequence([cfg.seed, rank, 1]).generate_state(1)[0])
            self.agent = make_agent(cfg.league.opponent, seed=agent_seed)
        self.finished: list[FinishedGame] = []
        self.games: list[Game] = []
        self._episodes = 0
        if standing is not None and standing.state_dicts:
            self.set_snapshots(standing.state_dicts, standing.probabilities)

    def set_snapshots(self, state_dicts: Mapping[int, dict], probabilities: Mapping[int, float]) -> None:
        """Add new snapshots (id -> state dict); new games draw from ``probabilities``' ids."""
        for sid, sd in state_dicts.items():
            net = ActorCritic(**network_kwargs(self.cfg))
            net.load_state_dict(sd)
            net.eval()
            self.snapshots[sid] = net
        # A snapshot that left the pool stays until the games it plays in are over; new games
        # draw only from the pool.
        playing = {game.snapshot for game in self.games}
        self.snapshots = {
            sid: net for sid, net in self.snapshots.items() if sid in probabilities or sid in playing
        }
        self.snapshot_p = dict(probabilities)

    def _draw_players(self) -> int:
        """A new game's table size, drawn by the ``tables`` weights."""
        return int(self.table_sizes[int(self.rng.choice(len(self.table_sizes), p=self.table_p))])

    def _seat(self, players: int) -> Game:
        """Who plays a new game of ``players`` seats: every seat learns (self-play), or one
        learner faces frozen seats of one drawn kind (``league.py``)."""
        self._episodes += 1
        kind = draw_game_kind(self.rng, self.cfg.league.share, self.kind_p, bool(self.snapshot_p))
        if kind is GameKind.SELF_PLAY:
            return Game(self._episodes, players, kind, tuple(range(players)))
        learner = int(self.rng.integers(players))
        snapshot = draw_snapshot(self.rng, self.snapshot_p) if kind is GameKind.SNAPSHOT else None
        return Game(self._episodes, players, kind, (learner,), snapshot)

    def _credit(self, game: Game, gained: Sequence[int], outcome: Sequence[float] | None) -> None:
        """Hand every learning seat its reward for one step in which every seat's score changed
        by ``gained``; with ``outcome`` (the win/loss returns: the game ended), close the seats."""
        reward = self.cfg.reward
        for seat in game.learners:
            key = (self.rank, game.episode, seat)
            r = reward.vp * gain_reward(gained, seat, reward.vp_relative)
            if outcome is not None:
                r += reward.win * outcome[seat]
            self.book.reward(key, r)
            if outcome is not None:
                self.book.end(key)

    def _record(self, game: Game, state: Any) -> None:
        """Keep the figures of ``game``, which ended in ``state``."""
        from island_fortress_env.training.evaluate import final_ranks

        figures = game_figures(state, game.learners)
        ahead = None
        if game.kind is not GameKind.SELF_PLAY:
            ranks = final_ranks(state)
            learner = game.learners[0]
            # pairwise: 1 per frozen seat finished behind the learner, 0.5 per tie
            ahead = float(
                np.mean(
                    [
                        1.0 if ranks[learner] < ranks[s] else 0.5 if ranks[learner] == ranks[s] else 0.0
                        for s in game.frozen()
                    ]
                )
            )
        self.finished.append(
            FinishedGame(game.episode, state.n, game.kind, game.snapshot, game.decisions, figures, ahead)
        )

    def collect(self, net: nn.Module, decisions: int) -> tuple[Rollout, list[FinishedGame]]:
        """Play until at least ``decisions`` learner decisions are closed; return them with GAE,
        and the games finished meanwhile."""
        net.eval()
        while self.book.num_finished < decisions:
            self._tick(net)
        rollout = self.book.take(self.cfg.ppo.gamma, self.cfg.ppo.gae_lambda)
        finished, self.finished = self.finished, []
        return rollout, finished

    def _tick(self, net: nn.Module) -> None:
        raise NotImplementedError

    def _learn(
        self, net: nn.Module, games: Sequence[Game], seats: Sequence[int], obs: np.ndarray, mask: np.ndarray
    ) -> np.ndarray:
        """The learner's actions for the decisions ``obs``/``mask`` of ``seats`` in ``games``,
        recorded in the seats' trajectories."""
        actions, logprobs, values = sample_actions(net, obs, mask, self.generator)
        keys = [(self.rank, game.episode, seat) for game, seat in zip(games, seats, strict=True)]
        self.book.act_many(keys, obs, mask, actions, logprobs, values)
        return actions


class CoreCollector(Collector):
    """The games in one batch of C++ core games, all stepped by one call per tick."""

    def __init__(
        self, cfg: NativeConfig, rank: int, new_book: Callable[[], Book], standing: Standing | None = None
    ) -> None:
        import island_fortress_env.vector as vector

        super().__init__(cfg, rank, new_book, standing)
        count = cfg.train.games_per_collector
        first = [self._draw_players() for _ in range(count)]
        seed = int(self.rng.integers(2**63))
        self.env = vector.make(count, num_players=first, seed=seed, threads=1, **cfg.env.options)
        self.env.reset()
        self.games = [self._start(slot) for slot in range(count)]

    def _start(self, slot: int) -> Game:
        """The seats of the game that has just begun in ``slot``; the size of the next one."""
        env = self.env
        game = self._seat(env.games[slot].num_players)
        game.table, game.seed = env.games[slot], env.game_seed(slot)
        env.set_players(slot, self._draw_players())
        return game

    def _tick(self, net: nn.Module) -> None:
        env, games = self.env, self.games
        movers = env.player.tolist()
        learning: list[int] = []
        by_snapshot: dict[int, list[int]] = defaultdict(list)
        heuristic = np.zeros(len(games), dtype=bool)
        random = np.zeros(len(games), dtype=bool)
        searching: list[int] = []
        for slot, game in enumerate(games):
            if movers[slot] in game.learners:
                learning.append(slot)
            elif game.kind is GameKind.HEURISTIC:
                heuristic[slot] = True
            elif game.kind is GameKind.RANDOM:
                random[slot] = True
            elif game.kind is GameKind.AGENT:
                searching.append(slot)
            else:
                by_snapshot[game.snapshot].append(slot)  # type: ignore[index]
        actions = np.empty(len(games), dtype=np.int64)
        for slot in searching:  # the search player reads the game's state (a copy of the batch's)
            actions[slot] = self.agent.act(env.obs[slot], env.mask[slot], env.state(slot))  # type: ignore[union-attr]
        if heuristic.any():
            actions[heuristic] = env.heuristic_actions(heuristic)[heuristic]
        if random.any():
            actions[random] = env.random_actions(random)[random]
        if learning:
            deciding, seats = [games[s] for s in learning], [movers[s] for s in learning]
            actions[learning] = self._learn(net, deciding, seats, env.obs[learning], env.mask[learning])
        for sid, slots in by_snapshot.items():
            actions[slots], _, _ = sample_actions(
                self.snapshots[sid], env.obs[slots], env.mask[slots], self.generator
            )
        env.step(actions)
        for game, action in zip(games, actions.tolist(), strict=True):
            game.actions.append(action)
            game.decisions += 1
        gains, done = env.score_gains(), env.done
        for slot in np.flatnonzero(gains.any(axis=1) | done).tolist():
            game = games[slot]
            gained = gains[slot, : game.players].tolist()
            if not done[slot]:
                self._credit(game, gained, None)
                continue
            # The batch has begun the slot's next game: this one is replayed (with its event log,
            # which a batched game does not keep) for its end.
            state = core.replay(game.table, game.seed, game.actions)
            if not state.is_terminal():
                raise RuntimeError(f"the replay of game {game.episode} did not end where the batch's did")
            self._credit(game, gained, win_loss_returns(state.n, state.winners))
            self._record(game, state)
            games[slot] = self._start(slot)


class EnvCollector(Collector):
    """The games as Python ``raw_env``s, stepped one decision at a time."""

    def __init__(
        self, cfg: NativeConfig, rank: int, new_book: Callable[[], Book], standing: Standing | None = None
    ) -> None:
        super().__init__(cfg, rank, new_book, standing)
        self.envs: dict[tuple[int, int], Any] = {}
        self.encoders: dict[int, Any] = {}
        self.heuristic = make_heuristic(int(self.rng.integers(2**31)))
        self.random = RandomAgent(seed=int(self.rng.integers(2**31)))
        self.games = [self._new_game(slot) for slot in range(cfg.train.games_per_collector)]

    def _new_game(self, slot: int) -> Game:
        n = self._draw_players()
        env = self.envs.get((slot, n))
        if env is None:
            # Where the core is not built, say "python": ``core_available`` has already said why,
            # and the env's own default would say it again.
            backend = None if core.available() else "python"
            env = self.envs[(slot, n)] = raw_env(num_players=n, backend=backend, **self.cfg.env.options)
            # One observation encoder per table size: its caches (bounded per encoder, keyed by
            # what a position is made of) then serve every game instead of one copy per game.
            env.encoder = self.encoders.setdefault(n, env.encoder)
        env.reset(seed=int(self.rng.integers(2**63 - 1)))
        game = self._seat(n)
        game.env = env
        return game

    def _step(self, slot: int, game: Game, action: int) -> None:
        """Apply ``action`` and hand every learning seat its reward; at the end, close the game."""
        env = game.env
        state = env.game_state
        before = state.score[:]
        env.step(action)
        game.decisions += 1
        gained = [a - b for a, b in zip(state.score, before, strict=True)]
        terminal = state.is_terminal()
        self._credit(game, gained, win_loss_returns(state.n, state.winners) if terminal else None)
        if terminal:
            self._record(game, state)
            self.games[slot] = self._new_game(slot)

    def _tick(self, net: nn.Module) -> None:
        pending: list[int] = []
        frozen: dict[int, list[int]] = defaultdict(list)
        for slot in range(len(self.games)):
            while True:  # play the hand-written seats until a network must decide
                game = self.games[slot]
                env = game.env
                seat = env.game_state.current_player()
                if seat in game.learners:
                    pending.append(slot)
                    break
                if game.kind is GameKind.SNAPSHOT:
                    frozen[game.snapshot].append(slot)  # type: ignore[index]
                    break
                player = {GameKind.HEURISTIC: self.heuristic, GameKind.AGENT: self.agent}.get(
                    game.kind, self.random
                )
                o = env.observe(env.agent_selection)
                self._step(slot, game, player.act(o["observation"], o["action_mask"], env.game_state))
        self._decide(net, pending, learn=True)
        for sid, slots in frozen.items():
            self._decide(self.snapshots[sid], slots, learn=False)

    def _decide(self, net: nn.Module, slots: list[int], learn: bool) -> None:
        if not slots:
            return
        obs_list, masks = [], []
        for slot in slots:
            env = self.games[slot].env
            o = env.observe(env.agent_selection)
            obs_list.append(o["observation"])
            masks.append(o["action_mask"].astype(bool))
        obs, mask = np.stack(obs_list), np.stack(masks)
        games = [self.games[slot] for slot in slots]
        if learn:
            seats = [game.env.game_state.current_player() for game in games]
            actions = self._learn(net, games, seats, obs, mask)
        else:
            actions, _, _ = sample_actions(net, obs, mask, self.generator)
        for slot, game, action in zip(slots, games, actions.tolist(), strict=True):
            self._step(slot, game, action)


def make_collector(
    cfg: NativeConfig,
    rank: int,
    new_book: Callable[[], Book],
    use_core: bool,
    standing: Standing | None = None,
) -> Collector:
    """A ``CoreCollector`` with ``use_core``, else an ``EnvCollector``."""
    return (CoreCollector if use_core else EnvCollector)(cfg, rank, new_book, standing)


def make_heuristic(seed: int) -> Any:
    from island_fortress_env.agents.heuristic import HeuristicAgent

    return HeuristicAgent(seed=seed)


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
    cfg: NativeConfig, rank: int, pipe: Any, new_book: Callable[[], Book], use_core: bool, standing: Standing
) -> None:
    """A worker process: one collector, driven by the main process over ``pipe`` (a
    ``CollectJob`` in, a rollout and its finished games out; ``None`` ends it)."""
    torch.set_num_threads(1)
    collector = make_collector(cfg, rank, new_book, use_core, standing)
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
        use_core: bool | None = None,
        standing: Standing | None = None,
    ) -> None:
        if use_core is None:
            use_core = core_available()
        standing = standing or Standing()
        self.pipelined = cfg.train.pipelined
        self.local = None if self.pipelined else make_collector(cfg, 0, new_book, use_core, standing)
        self.pipes: list[Any] = []
        self.procs: list[Any] = []
        ctx = mp_context()
        for rank in range(1, cfg.train.workers + 1):
            parent, child = ctx.Pipe()
            args = (cfg, rank, child, new_book, use_core, standing)
            proc = ctx.Process(target=_worker, args=args, daemon=True)
            proc.start()
            child.close()  # the worker holds it now: its death ends our recv() with EOFError
            self.pipes.append(parent)
            self.procs.append(proc)
        self.sent: set[int] = set(standing.state_dicts)
        self.outstanding = False
        self._local_job: tuple[nn.Module, int] | None = None

    def start(self, net: nn.Module, decisions: int, league: League) -> None:
        """Every collector starts a rollout of its share of ``decisions`` with ``net``'s weights
        and the league's snapshots as they are now."""
        share = -(-decisions // (len(self.pipes) + (self.local is not None)))
        probabilities = league.probabilities()
        new = {sid: sd for sid, sd in league.state_dicts().items() if sid not in self.sent}
        self.sent |= set(new)
        weights = {k: v.detach().clone() for k, v in net.state_dict().items()}
        for pipe in self.pipes:
            pipe.send(CollectJob(weights, new, probabilities, share))
        if self.local is not None:
            self.local.set_snapshots(new, probabilities)
            self._local_job = (net, share)
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
